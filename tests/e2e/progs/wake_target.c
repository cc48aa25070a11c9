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
 *               block ends); wait for its answer. "done US CHILD": the
 *               microseconds from before the first round to after the
 *               last (CLOCK_MONOTONIC, as bpf_ktime_get_ns), and the
 *               child's pid.
 *
 * So each of the child's N blocks woken by tk_waker_marked_write lasts
 * at least MS ms (it slept before the sleep began), and all N begin
 * after the first round and lie within the US measured. Built -O0 -fno-omit-frame-pointer -fno-inline: the
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

static int to_child[2], to_parent[2];
static pid_t child;

__attribute__((noinline)) long tk_wakee_marked_read(int fd, char *c)
{
	return raw_syscall3(SYS_read, fd, (long)c, 1);
}

__attribute__((noinline)) long tk_waker_marked_write(int fd)
{
	char c = 'w';

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
	while (tk_wakee_marked_read(to_child[0], &c) == 1)
		if (write(to_parent[1], &c, 1) != 1)
			exit(3);
	exit(0);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Until the child sleeps in read(2): state S in /proc/PID/stat, and the
 * read's number first in /proc/PID/syscall. */
static void wait_child_reading(void)
{
	char path[64], buf[256], *p;
	FILE *f;

	for (;;) {
		bool s = false, rd = false;

		snprintf(path, sizeof(path), "/proc/%d/stat", child);
		if ((f = fopen(path, "r"))) {
			if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
				s = p[1] == ' ' && p[2] == 'S';
			fclose(f);
		}
		snprintf(path, sizeof(path), "/proc/%d/syscall", child);
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

	wait_child_reading();
	nanosleep(&ts, NULL);
	if (tk_waker_marked_write(to_child[1]) != 1)
		exit(3);
	answer();
}

int main(void)
{
	char line[128];
	long n, ms;
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
		if (sscanf(line, "pipe %ld %ld", &n, &ms) == 2) {
			double t0 = now_us();

			if (write(to_child[1], "p", 1) != 1)
				return 3;
			answer();
			for (long i = 0; i < n; i++)
				waker_round(ms);
			printf("done %.0f %d\n", now_us() - t0, child);
		} else {
			printf("error\n");
		}
	}
	close(to_child[1]);
	return 0;
}
