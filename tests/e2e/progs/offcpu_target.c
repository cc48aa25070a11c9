/* The workload of test_offcputime.py: it blocks in known functions for
 * known times, on commands read from stdin, answering "done" to each.
 *
 *   sleep N MS   main -> wait_outer -> wait_inner: N sleeps of MS ms
 *   short N MS   main -> wait_short: N sleeps of MS ms
 *   long N MS    main -> wait_long: N sleeps of MS ms
 *   vfork MS     main -> wait_vfork -> vfork_call -> vfork(): the child
 *                sleeps MS ms while its parent waits in the kernel in
 *                TASK_KILLABLE (TASK_UNINTERRUPTIBLE | TASK_WAKEKILL)
 *
 * "done US ONCPU WAITED" gives the microseconds the command took
 * (CLOCK_MONOTONIC, as bpf_ktime_get_ns): the time it spent off CPU can
 * be no more; and, from the kernel's /proc/self/schedstat taken around
 * it, the microseconds this thread ran and waited on a run queue
 * meanwhile: a sleep of MS ms is off CPU for at least MS ms less the
 * time the thread spent between arming its timer and switching out,
 * which is one or the other (test_offcputime.min_blocked).
 *
 * Built -O0 -fno-omit-frame-pointer -fno-inline so that every function
 * has a frame. The sleeps are clock_nanosleep system calls made from the
 * function itself (not through libc, which keeps no frame pointer and so
 * would hide its caller from a frame-pointer walk): the user stack at the
 * system call is exactly ...;main;wait_outer;wait_inner. vfork is called
 * through libc, as it must be: the frame-pointer walk then misses the
 * function that called libc (vfork_call), whose frame pointer is the one
 * the walk starts from, and shows ...;main;wait_vfork;__vfork. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "schedstat.h"

static long raw_sleep(const struct timespec *ts);

/* Inline assembly, so the system call's user IP lies in the caller. */
#if defined(__x86_64__)
#define SLEEP_SYSCALL(ts, ret)                                               \
	do {                                                                 \
		register long r10_ __asm__("r10") = 0;                       \
		__asm__ volatile("syscall"                                   \
				 : "=a"(ret)                                 \
				 : "0"((long)SYS_clock_nanosleep),           \
				   "D"((long)CLOCK_MONOTONIC), "S"(0L),      \
				   "d"(ts), "r"(r10_)                        \
				 : "rcx", "r11", "memory");                  \
	} while (0)
#elif defined(__aarch64__)
#define SLEEP_SYSCALL(ts, ret)                                               \
	do {                                                                 \
		register long x8_ __asm__("x8") = SYS_clock_nanosleep;       \
		register long x0_ __asm__("x0") = CLOCK_MONOTONIC;           \
		register long x1_ __asm__("x1") = 0;                         \
		register long x2_ __asm__("x2") = (long)(ts);                \
		register long x3_ __asm__("x3") = 0;                         \
		__asm__ volatile("svc 0"                                     \
				 : "+r"(x0_)                                 \
				 : "r"(x8_), "r"(x1_), "r"(x2_), "r"(x3_)    \
				 : "memory");                                \
		ret = x0_;                                                   \
	} while (0)
#else
#error "offcpu_target: add the system call instruction of this architecture"
#endif

static struct timespec ms_ts(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	return ts;
}

void wait_inner(long n, long ms)
{
	struct timespec ts = ms_ts(ms);
	long ret;

	for (long i = 0; i < n; i++) {
		SLEEP_SYSCALL(&ts, ret);
		if (ret)
			exit(3);
	}
}

void wait_outer(long n, long ms)
{
	wait_inner(n, ms);
}

void wait_short(long n, long ms)
{
	struct timespec ts = ms_ts(ms);
	long ret;

	for (long i = 0; i < n; i++) {
		SLEEP_SYSCALL(&ts, ret);
		if (ret)
			exit(3);
	}
}

void wait_long(long n, long ms)
{
	struct timespec ts = ms_ts(ms);
	long ret;

	for (long i = 0; i < n; i++) {
		SLEEP_SYSCALL(&ts, ret);
		if (ret)
			exit(3);
	}
}

/* The child of vfork sleeps; its parent waits for it in the kernel
 * (wait_for_vfork_done: TASK_KILLABLE, which includes
 * TASK_UNINTERRUPTIBLE). */
void vfork_call(long ms)
{
	struct timespec ts = ms_ts(ms);
	int status;
	pid_t pid = vfork();

	if (pid == 0) {
		raw_sleep(&ts);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		exit(3);
}

void wait_vfork(long ms)
{
	vfork_call(ms);
}

static long raw_sleep(const struct timespec *ts)
{
	long ret;

	SLEEP_SYSCALL(ts, ret);
	return ret;
}

/* This thread's time on CPU and waiting on a run queue (schedstat.h). */
static void sched_times(long long *oncpu, long long *waited)
{
	static int fd = -1;

	read_schedstat("/proc/self/schedstat", &fd, oncpu, waited);
}

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

int main(void)
{
	char line[128], cmd[16];
	long long t0, cpu0, wait0, cpu1, wait1, took;
	long n, ms;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		int k = sscanf(line, "%15s %ld %ld", cmd, &n, &ms);

		sched_times(&cpu0, &wait0);
		t0 = now_us();
		if (k == 3 && !strcmp(cmd, "sleep"))
			wait_outer(n, ms);
		else if (k == 3 && !strcmp(cmd, "short"))
			wait_short(n, ms);
		else if (k == 3 && !strcmp(cmd, "long"))
			wait_long(n, ms);
		else if (k == 2 && !strcmp(cmd, "vfork"))
			wait_vfork(n);
		else
			return 2;
		took = now_us() - t0 + 1;  /* +1: rounding */
		sched_times(&cpu1, &wait1);
		/* Rounded up: they bound what is not off CPU from above. */
		printf("done %lld %lld %lld\n", took, (cpu1 - cpu0 + 999) / 1000,
		       (wait1 - wait0 + 999) / 1000);
	}
	return 0;
}
