/* A workload for the block I/O tools' tests: O_DIRECT reads and writes
 * of a block device at offsets the test names, on command lines from
 * stdin, answering "done" once they have completed, and each call's time
 * in ns (CLOCK_MONOTONIC, the clock of the tools' latencies).
 *
 *   r SIZE OFF [OFF...]   one pread of SIZE bytes at each byte offset
 *   w SIZE OFF [OFF...]   one pwrite of SIZE bytes at each byte offset
 *
 * Usage: bio_target DEVICE. It says "ready" once the device is open. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIZE (1 << 20)

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	char line[4096], *tok, *save;
	void *buf;
	int fd;

	if (argc != 2)
		return 2;
	fd = open(argv[1], O_RDWR | O_DIRECT);
	if (fd < 0 || posix_memalign(&buf, 4096, MAX_SIZE)) {
		perror(argv[1]);
		return 1;
	}
	memset(buf, 0x5a, MAX_SIZE);
	setvbuf(stdout, NULL, _IOLBF, 0);
	puts("ready");
	while (fgets(line, sizeof(line), stdin)) {
		char op = line[0];
		long size;

		strtok_r(line, " \n", &save);
		tok = strtok_r(NULL, " \n", &save);
		size = tok ? atol(tok) : 0;
		if ((op != 'r' && op != 'w') || size <= 0 || size > MAX_SIZE)
			return 2;
		fputs("done", stdout);
		while ((tok = strtok_r(NULL, " \n", &save))) {
			off_t off = atoll(tok);
			long long t = now_ns();
			ssize_t n = op == 'r' ? pread(fd, buf, size, off)
					      : pwrite(fd, buf, size, off);

			if (n != size) {
				perror("pread/pwrite");
				return 1;
			}
			printf(" %lld", now_ns() - t);
		}
		putchar('\n');
	}
	return 0;
}
