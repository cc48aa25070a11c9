/* A workload for argdist's tests: each command (a stdin line, or each
 * argument after --batch, without "ready" and "done") makes an exact set
 * of calls, then it answers "done" (it says "ready" first):
 *
 *   read SIZE N        a thread of its own (tid != pid) reads SIZE bytes
 *                      from /dev/zero N times (each read returns SIZE)
 *   hit VALUE NAME N   hit(VALUE, NAME) N times
 *   keys N             hit(i, "key", 0) for i in 0..N-1
 *
 * Built by the tests with -O0 -fno-inline -pthread. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long total;

__attribute__((noinline)) long hit(long value, const char *name)
{
	return value + (long)strlen(name);
}

struct reads {
	long size, n;
	int err;
};

static void *reader(void *arg)
{
	struct reads *r = arg;
	static char buf[65536];
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0 || r->size > (long)sizeof(buf)) {
		r->err = 1;
		return NULL;
	}
	for (long i = 0; i < r->n; i++)
		if (read(fd, buf, (size_t)r->size) != r->size)
			r->err = 1;
	close(fd);
	return NULL;
}

static int command(const char *line)
{
	char cmd[32], name[64];
	long a = 0, n = 0;

	if (sscanf(line, "%31s", cmd) != 1)
		return 2;
	if (!strcmp(cmd, "read") && sscanf(line, "%*s %ld %ld", &a, &n) == 2) {
		struct reads r = { a, n, 0 };
		pthread_t t;

		if (pthread_create(&t, NULL, reader, &r) || pthread_join(t, NULL) || r.err)
			return 3;
	} else if (!strcmp(cmd, "hit") && sscanf(line, "%*s %ld %63s %ld", &a, name, &n) == 3) {
		for (long i = 0; i < n; i++)
			total += hit(a, name);
	} else if (!strcmp(cmd, "keys") && sscanf(line, "%*s %ld", &n) == 1) {
		for (long i = 0; i < n; i++)
			total += hit(i, "key");
	} else {
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	char line[128];
	int e;

	if (argc > 1 && !strcmp(argv[1], "--batch")) {
		for (int i = 2; i < argc; i++)
			if ((e = command(argv[i])))
				return e;
		return total == 42;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		if ((e = command(line)))
			return e;
		printf("done\n");
	}
	return total == 42;  /* keep total */
}
