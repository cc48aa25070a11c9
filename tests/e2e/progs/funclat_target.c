/* A workload for funclatency's tests: on each command line from stdin
 * it makes an exact number of calls, then answers "done" on stdout.
 *
 *   work N MS     call work() N times; each call sleeps MS milliseconds
 *   timed N MS    the same, answering "done" and each call's duration
 *                 in nanoseconds, as measured around the call
 *   getpid N      call libc's getpid() N times (a syscall each time)
 *   fsync N       make the fsync syscall N times, on stdin (a pipe: it
 *                 fails with EINVAL, past the syscall's entry point, which
 *                 the kernel function tests trace)
 *   fdatasync N   the same with the fdatasync syscall
 *   recurse D     call recurse(D), which calls itself D times: D+1 calls,
 *                 each inside the one before
 *   calls A B C   call tk_fn_alpha() A times, tk_fn_beta() B times and
 *                 tk_fn_gamma() C times: three functions for patterns
 *                 (tk_fn_*); each tk_fn_gamma() call also calls
 *                 tk_fn_beta() once, nested inside it
 *
 * It says "ready" first. It runs SCHED_FIFO (when allowed), so that a
 * sleep ends on time on a busy machine: no normal task delays its
 * wakeup. Built PIE or not (-no-pie) by the tests. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) void work(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	if (ms)
		nanosleep(&ts, NULL);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) int recurse(int depth)
{
	int r = depth > 0 ? recurse(depth - 1) + 1 : 0;

	__asm__ volatile("" ::: "memory");
	return r;
}

__attribute__((noinline)) void tk_fn_alpha(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void tk_fn_beta(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void tk_fn_gamma(void)
{
	tk_fn_beta();
	__asm__ volatile("" ::: "memory");
}

static void calls(long a, long b, long c)
{
	long i;

	for (i = 0; i < a; i++)
		tk_fn_alpha();
	for (i = 0; i < b; i++)
		tk_fn_beta();
	for (i = 0; i < c; i++)
		tk_fn_gamma();
}

int main(void)
{
	struct sched_param fifo = { .sched_priority = 1 };
	char line[128], cmd[32];
	long n, arg, arg2, i;

	sched_setscheduler(0, SCHED_FIFO, &fifo);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		arg = arg2 = 0;
		if (sscanf(line, "%31s %ld %ld %ld", cmd, &n, &arg, &arg2) < 2)
			return 2;
		if (!strcmp(cmd, "work"))
			for (i = 0; i < n; i++)
				work(arg);
		else if (!strcmp(cmd, "timed")) {
			/* work N MS, saying how long each call took from
			 * here (a bound on what funclatency measures inside
			 * it): "done NS NS ...". */
			printf("done");
			for (i = 0; i < n; i++) {
				struct timespec a, b;

				clock_gettime(CLOCK_MONOTONIC, &a);
				work(arg);
				clock_gettime(CLOCK_MONOTONIC, &b);
				printf(" %lld", (b.tv_sec - a.tv_sec) * 1000000000LL +
				       (b.tv_nsec - a.tv_nsec));
			}
			printf("\n");
			continue;
		}
		else if (!strcmp(cmd, "getpid"))
			for (i = 0; i < n; i++)
				getpid();
		else if (!strcmp(cmd, "fsync"))
			for (i = 0; i < n; i++)
				syscall(SYS_fsync, 0);
		else if (!strcmp(cmd, "fdatasync"))
			for (i = 0; i < n; i++)
				syscall(SYS_fdatasync, 0);
		else if (!strcmp(cmd, "recurse"))
			recurse((int)n);
		else if (!strcmp(cmd, "calls"))
			calls(n, arg, arg2);
		else
			return 2;
		printf("done\n");
	}
	return 0;
}
