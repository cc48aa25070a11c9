/* A tight loop of a cheap syscall, for bench/syscount_overhead.py:
 *   syscount_overhead_loop CALLS BURSTS [wall]
 * makes BURSTS bursts of CALLS getppid() calls (through syscall(2), so
 * that no libc wrapper can cache it) and prints each burst's ns/call.
 * Time is the thread's CPU time (user and kernel): time the thread spends
 * preempted by other tasks on a busy machine is not counted. With "wall",
 * wall-clock time: under strace the thread waits, stopped, for the tracer,
 * and its CPU time would not show that. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static clockid_t timer = CLOCK_THREAD_CPUTIME_ID;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(timer, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 1000000;
	int bursts = argc > 2 ? atoi(argv[2]) : 5, b;

	if (calls < 1 || bursts < 1) {
		fprintf(stderr, "usage: %s CALLS BURSTS [wall]\n", argv[0]);
		return 2;
	}
	if (argc > 3 && !strcmp(argv[3], "wall"))
		timer = CLOCK_MONOTONIC;
	for (b = 0; b < bursts; b++) {
		double t0 = now_ns();
		long i;

		for (i = 0; i < calls; i++)
			syscall(SYS_getppid);
		printf("%.2f\n", (now_ns() - t0) / calls);
	}
	return 0;
}
