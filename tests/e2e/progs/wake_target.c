/* The workload of test_offwaketime.py and test_wakeuptime.py: a pipe pair
 * between two processes. The parent, "tk-waker", wakes the child,
 * "tk-wakee", by writing a byte from tk_waker_marked_write; the child
 * blocks reading it in tk_wakee_marked_read and answers on a second pipe.
 * It says "ready", then runs commands from stdin:
 *
 *   pipe N MS   a first round by libc's write (the child's block before
 *               it may have begun before the tracer), then N rounds:
 *               wait until the child sleeps in read(2), sleep MS ms,
 *               write one byte from tk_waker_marked_write (the child's
 *               block ends); wait for its answer. "done US CHILD ONCPU
 *               WAITED": the microseconds from before the first round to
 *               after the last (CLOCK_MONOTONIC, as bpf_ktime_get_ns), the
 *               child's pid, and the microseconds the child ran and
 *               waited on a run queue meanwhile, from the kernel's
 *               /proc/CHILD/schedstat (rounded up).
 *   pipe N MS late
 *               the same, but the child answers each marked round only
 *               once the parent sleeps in read(2) for the answer, so the
 *               parent blocks N times woken by the child's write (left
 *               alone, a child woken on the parent's CPU may preempt it
 *               and answer before the parent reads: then it never blocks).
 *
 * So each of the child's N blocks woken by tk_waker_marked_write lasts
 * at least MS ms less the child's stretch from being seen asleep to its
 * switch out, which it spends on CPU or waiting for one (the ONCPU and
 * WAITED reported bound all of them: tests/e2e/sched_account.py), and
 * all N begin after the first round and lie within the US measured. Built -O0 -fno-omit-frame-pointer -fno-inline: the
 * reads and writes are system calls made from the marked functions
 * themselves (inline assembly, no libc wrapper without a frame pointer
 * to hide the caller), so the user stacks are main;wakee_loop;
 * tk_wakee_marked_read and main;waker_round;tk_waker_marked_write. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "raw_syscall.h"
#include "schedstat.h"

static int to_child[2], to_parent[2];
static pid_t child;

static void wait_reading(pid_t pid);

__attribute__((noinline)) long tk_wakee_marked_read(int fd, char *c)
{
	return raw_syscall3(SYS_read, fd, (long)c, 1);
}

/* The byte the marked write sends: 'l' asks for a late answer. */
static char round_byte = 'w';

__attribute__((noinline)) long tk_waker_marked_write(int fd)
{
	char c = round_byte;

	return raw_syscall3(SYS_write, fd, (long)&c, 1);
}

/* The child: read a byte, answer it; until end of file. */
static void wakee_loop(pid_t parent)
{
	char c;

	/* End with the parent, however it ends: by end of file once its
	 * write end is the only one (this process keeps none), or by
	 * SIGKILL when it is killed first. */
	close(to_child[1]);
	close(to_parent[0]);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		exit(3);
	prctl(PR_SET_NAME, "tk-wakee");
	if (write(to_parent[1], "u", 1) != 1)
		exit(3);
	while (tk_wakee_marked_read(to_child[0], &c) == 1) {
		if (c == 'l')
			wait_reading(parent);
		if (write(to_parent[1], &c, 1) != 1)
			exit(3);
	}
	exit(0);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Until pid sleeps in read(2): state S in /proc/PID/stat, and the
 * read's number first in /proc/PID/syscall (a task preempted before its
 * read shows "running" there). Not /proc/PID/wchan, which would also
 * say the task left its run queue: before 5.16 it reads nothing on
 * kernels built with the ORC unwinder, as Debian's 5.10 is. */
static void wait_reading(pid_t pid)
{
	char path[64], buf[256], *p;
	FILE *f;

	for (;;) {
		bool s = false, rd = false;

		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		if ((f = fopen(path, "r"))) {
			if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
				s = p[1] == ' ' && p[2] == 'S';
			fclose(f);
		}
		snprintf(path, sizeof(path), "/proc/%d/syscall", pid);
		if ((f = fopen(path, "r"))) {
			if (fgets(buf, sizeof(buf), f))
				rd = atol(buf) == SYS_read && buf[0] != '-';
			fclose(f);
		}
		if (s && rd)
			return;
		usleep(1000);
	}
}

/* The child's time on CPU and waiting on a run queue (schedstat.h). Read
 * once the child is asleep or done with its part of a round: the time up
 * to its last switch out is accounted by then. */
static void child_sched_times(long long *oncpu, long long *waited)
{
	static int fd = -1;
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/schedstat", child);
	read_schedstat(path, &fd, oncpu, waited);
}

static void answer(void)
{
	char c;

	if (read(to_parent[0], &c, 1) != 1)
		exit(3);
}

/* One round: the child asleep, MS ms later the marked write. */
static void waker_round(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	wait_reading(child);
	nanosleep(&ts, NULL);
	if (tk_waker_marked_write(to_child[1]) != 1)
		exit(3);
	answer();
}

int main(void)
{
	char line[128], mode[8];
	long n, ms;
	int words;
	pid_t parent;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pipe(to_child) || pipe(to_parent))
		return 3;
	parent = getpid();
	child = fork();
	if (child < 0)
		return 3;
	if (!child)
		wakee_loop(parent);
	close(to_child[0]);
	close(to_parent[1]);
	prctl(PR_SET_NAME, "tk-waker");
	answer();  /* the child is up */
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		mode[0] = 0;
		words = sscanf(line, "pipe %ld %ld %7s", &n, &ms, mode);
		if (words == 2 || (words == 3 && !strcmp(mode, "late"))) {
			long long cpu0, wait0, cpu1, wait1;
			double t0, took;

			child_sched_times(&cpu0, &wait0);
			t0 = now_us();
			round_byte = words == 3 ? 'l' : 'w';
			if (write(to_child[1], "p", 1) != 1)
				return 3;
			answer();
			for (long i = 0; i < n; i++)
				waker_round(ms);
			took = now_us() - t0;
			child_sched_times(&cpu1, &wait1);
			printf("done %.0f %d %lld %lld\n", took, child, (cpu1 - cpu0 + 999) / 1000,
			       (wait1 - wait0 + 999) / 1000);
		} else {
			printf("error\n");
		}
	}
	close(to_child[1]);
	return 0;
}
