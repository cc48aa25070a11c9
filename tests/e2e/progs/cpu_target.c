/* The workload of test_cpudist.py: CPU bursts of an exact CPU time with
 * sleeps between them, on commands read from stdin, answering "done" to
 * each. Run as: cpu_target CPU; it pins itself to CPU and turns
 * SCHED_FIFO, so that no normal task preempts a burst.
 *
 *   burst N MS SLEEP_MS   N bursts, each spinning until its thread has
 *                         run MS ms (CLOCK_THREAD_CPUTIME_ID), with a
 *                         clock_nanosleep of SLEEP_MS ms between two
 *
 * It answers "done" then, for each burst, the microseconds its run took
 * (CLOCK_MONOTONIC, as bpf_ktime_get_ns), from the moment the thread was
 * back from its last blocking call (the read of the command, or the
 * sleep before) to the moment before its next (the sleep after, or the
 * write of this answer and the read after it): the whole run but the
 * kernel's entry and exit, so a vCPU stalled around the burst stretches
 * the time reported too; and the involuntary context switches since the
 * last such moment (getrusage RUSAGE_THREAD: preemptions, each of which
 * splits a run); then the microseconds each sleep took, then the
 * thread's voluntary switches so far (the next one is its read
 * of the next command, which the test waits for). */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static long long now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static struct rusage usage(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru;
}

int main(int argc, char **argv)
{
	struct sched_param fifo = { .sched_priority = 1 };
	char line[128], cmd[16], out[4096];
	long n, ms, sleep_ms;
	cpu_set_t set;

	if (argc != 2)
		return 2;
	CPU_ZERO(&set);
	CPU_SET(atoi(argv[1]), &set);
	if (sched_setaffinity(0, sizeof(set), &set) ||
	    sched_setscheduler(0, SCHED_FIFO, &fifo))
		return 3;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		long long wake = now_ns(CLOCK_MONOTONIC), walls[64], sleeps[64];
		long switched = usage().ru_nivcsw, preempted[64];
		size_t len = 0;

		if (sscanf(line, "%15s %ld %ld %ld", cmd, &n, &ms, &sleep_ms) != 4 ||
		    strcmp(cmd, "burst") || n < 1 || n > 64)
			return 2;
		for (long i = 0; i < n; i++) {
			long long cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID), block;

			while (now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0 < ms * 1000000LL)
				;
			preempted[i] = usage().ru_nivcsw - switched;
			switched += preempted[i];
			block = now_ns(CLOCK_MONOTONIC);
			walls[i] = (block - wake) / 1000 + 1;
			if (i < n - 1) {
				struct timespec ts = { sleep_ms / 1000, (sleep_ms % 1000) * 1000000L };

				if (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL))
					return 3;
				wake = now_ns(CLOCK_MONOTONIC);
				sleeps[i] = (wake - block) / 1000 + 1;
			}
		}
		len += snprintf(out + len, sizeof(out) - len, "done");
		for (long i = 0; i < n; i++)
			len += snprintf(out + len, sizeof(out) - len, " %lld %ld", walls[i],
					preempted[i]);
		for (long i = 0; i < n - 1; i++)
			len += snprintf(out + len, sizeof(out) - len, " %lld", sleeps[i]);
		printf("%s %ld\n", out, usage().ru_nvcsw);
	}
	return 0;
}
