/* exitsnoop's workload: names itself NAME, then ends as MODE says.
 *   code N          exit(N)
 *   signal N        raise(N) with its default action (no core: RLIMIT_CORE 0)
 *   sleep MS N      sleeps MS milliseconds, then exit(N)
 *   leader-first N  the main thread pthread_exit()s; a second thread waits
 *                   until the main thread is a zombie, then exit(N)
 *   group K N       K threads block in pause(); once all run, the main
 *                   thread calls exit(N), which ends all K + 1 at once
 * Before it ends it prints its threads' ids (the main thread's first)
 * on one line, flushed. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pid_t tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static int code;
static pthread_barrier_t started;
static pid_t tids[65];

/* Is thread t of this process a zombie (its stat's state Z)? */
static int zombie(pid_t t)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", t);
	f = fopen(path, "r");
	if (!f)
		return 1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'Z';
}

static void *last(void *arg)
{
	pid_t leader = *(pid_t *)arg;
	struct timespec ms = { 0, 1000000 };

	while (!zombie(leader))
		nanosleep(&ms, NULL);
	exit(code);
}

static void *blocked(void *arg)
{
	*(pid_t *)arg = tid();
	pthread_barrier_wait(&started);
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	struct rlimit none = { 0, 0 };
	pthread_t th;

	if (argc < 4) {
		fprintf(stderr, "usage: exit_target NAME MODE ARG...\n");
		return 100;
	}
	prctl(PR_SET_NAME, argv[1], 0, 0, 0);
	setrlimit(RLIMIT_CORE, &none);
	if (!strcmp(argv[2], "code")) {
		printf("%d\n", tid());
		fflush(stdout);
		exit(atoi(argv[3]));
	}
	if (!strcmp(argv[2], "signal")) {
		printf("%d\n", tid());
		fflush(stdout);
		signal(atoi(argv[3]), SIG_DFL);
		raise(atoi(argv[3]));
		return 101;
	}
	if (!strcmp(argv[2], "sleep") && argc > 4) {
		struct timespec d = { atoi(argv[3]) / 1000, atoi(argv[3]) % 1000 * 1000000L };

		printf("%d\n", tid());
		fflush(stdout);
		nanosleep(&d, NULL);
		exit(atoi(argv[4]));
	}
	if (!strcmp(argv[2], "leader-first")) {
		static pid_t leader;

		leader = tid();
		code = atoi(argv[3]);
		if (pthread_create(&th, NULL, last, &leader))
			return 102;
		printf("%d\n", leader);
		fflush(stdout);
		pthread_exit(NULL);
	}
	if (!strcmp(argv[2], "group") && argc > 4) {
		int k = atoi(argv[3]), i;

		if (k < 1 || k > 64)
			return 103;
		pthread_barrier_init(&started, NULL, k + 1);
		tids[0] = tid();
		for (i = 1; i <= k; i++)
			if (pthread_create(&th, NULL, blocked, &tids[i]))
				return 104;
		pthread_barrier_wait(&started);
		for (i = 0; i <= k; i++)
			printf("%d%c", tids[i], i == k ? '\n' : ' ');
		fflush(stdout);
		exit(atoi(argv[4]));
	}
	fprintf(stderr, "exit_target: unknown mode %s\n", argv[2]);
	return 100;
}
