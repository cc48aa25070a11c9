/* A tight loop of a cheap syscall, for bench/syscount_overhead.py and
 * bench/trace_bench.py:
 *   syscount_overhead_loop [-k getppid|openat|read] [-t THREADS] [-w]
 *                          CALLS BURSTS [wall]
 * makes BURSTS bursts of CALLS calls (through syscall(2), so that no libc
 * wrapper can cache or redirect them) and prints each burst's ns/call.
 * Time is the thread's CPU time (user and kernel): time the thread spends
 * preempted by other tasks on a busy machine is not counted. With "wall",
 * wall-clock time: under strace the thread waits, stopped, for the tracer,
 * and its CPU time would not show that.
 *
 * The call (-k): getppid (the default); openat of a path that does not
 * exist (one sys_enter_openat event with a filename, and no fd to close);
 * read of 1 byte from /dev/zero (one sys_exit_read event, ret 1).
 * -w: print "pid PID" and wait for a line on stdin before the first call,
 * so that a tracer can be started with that pid and attached first.
 * -t THREADS: that many threads, each making BURSTS x CALLS calls (only
 * the first prints its bursts); then one more line, "total N WALL_NS":
 * the calls made by all, exactly, and the wall time from the go to the
 * last thread's end. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static clockid_t timer = CLOCK_THREAD_CPUTIME_ID;
static long calls;
static int bursts, kind, zero_fd = -1;
static const char *kinds[] = { "getppid", "openat", "read" };
static const char missing[] = "/tmp/.tracekit-bench-no-such-file";

static double now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *loop(void *first)
{
	char c;
	int b;

	for (b = 0; b < bursts; b++) {
		double t0 = now_ns(timer);
		long i;

		switch (kind) {
		case 0:
			for (i = 0; i < calls; i++)
				syscall(SYS_getppid);
			break;
		case 1:
			for (i = 0; i < calls; i++)
				syscall(SYS_openat, AT_FDCWD, missing, O_RDONLY);
			break;
		default:
			for (i = 0; i < calls; i++)
				syscall(SYS_read, zero_fd, &c, 1);
		}
		if (first)
			printf("%.2f\n", (now_ns(timer) - t0) / calls);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 1, wait_go = 0, opt, i;
	pthread_t tid[64];
	double t0;
	char go[16];

	while ((opt = getopt(argc, argv, "k:t:w")) != -1) {
		switch (opt) {
		case 'k':
			for (kind = 0; kind < 3 && strcmp(optarg, kinds[kind]); kind++)
				;
			if (kind == 3)
				goto usage;
			break;
		case 't':
			threads = atoi(optarg);
			if (threads < 1 || threads > 64)
				goto usage;
			break;
		case 'w':
			wait_go = 1;
			break;
		default:
			goto usage;
		}
	}
	calls = optind < argc ? atol(argv[optind]) : 1000000;
	bursts = optind + 1 < argc ? atoi(argv[optind + 1]) : 5;
	if (calls < 1 || bursts < 1)
		goto usage;
	if (optind + 2 < argc && !strcmp(argv[optind + 2], "wall"))
		timer = CLOCK_MONOTONIC;
	if (kind == 2 && (zero_fd = open("/dev/zero", O_RDONLY)) < 0) {
		perror("/dev/zero");
		return 1;
	}
	if (wait_go) {
		printf("pid %d\n", (int)getpid());
		fflush(stdout);
		if (!fgets(go, sizeof(go), stdin))
			return 1;
	}
	if (threads == 1) {
		loop("first");
		return 0;
	}
	t0 = now_ns(CLOCK_MONOTONIC);
	for (i = 0; i < threads; i++)
		if (pthread_create(&tid[i], NULL, loop, i ? NULL : "first")) {
			perror("pthread_create");
			return 1;
		}
	for (i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	printf("total %ld %.0f\n", calls * bursts * threads, now_ns(CLOCK_MONOTONIC) - t0);
	return 0;
usage:
	fprintf(stderr, "usage: %s [-k getppid|openat|read] [-t THREADS] [-w] CALLS BURSTS [wall]\n",
		argv[0]);
	return 2;
}
