/* Event storms, for bench/event_storm.py and the e2e tests:
 *   storm open N PATH [GAP_US]  open(PATH) and close it, N times (with
 *                               GAP_US microseconds of sleep after each)
 *   storm exec N PROG [ARG...]  vfork + execv(PROG, [PROG, ARG..., "i"])
 *                               and wait, N times (argv ends in the
 *                               iteration number, so each exec is unique)
 * Prints "seconds cpu_seconds" of the storm: wall time, and the CPU time
 * of this process and its waited-for children. A failed open or exec
 * ends the storm with exit 1: a storm that did not happen must not be
 * timed as one. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_seconds(void)
{
	struct rusage self, kids;

	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	return self.ru_utime.tv_sec + self.ru_stime.tv_sec + kids.ru_utime.tv_sec +
	       kids.ru_stime.tv_sec + (self.ru_utime.tv_usec + self.ru_stime.tv_usec +
	       kids.ru_utime.tv_usec + kids.ru_stime.tv_usec) / 1e6;
}

static int opens(long n, const char *path, long gap_us)
{
	struct timespec gap = { gap_us / 1000000, gap_us % 1000000 * 1000 };

	for (long i = 0; i < n; i++) {
		int fd = open(path, O_RDONLY);

		if (fd < 0) {
			perror(path);
			return 1;
		}
		close(fd);
		if (gap_us > 0)
			nanosleep(&gap, NULL);
	}
	return 0;
}

static int execs(long n, int argc, char **argv)
{
	char num[24], **args = calloc(argc + 2, sizeof(*args));

	if (!args)
		return 1;
	memcpy(args, argv, argc * sizeof(*args));
	args[argc] = num;
	for (long i = 0; i < n; i++) {
		int status;
		pid_t pid;

		snprintf(num, sizeof(num), "%ld", i);
		pid = vfork();
		if (pid == 0) {
			execv(argv[0], args);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) < 0 || status) {
			fprintf(stderr, "storm: exec %s failed (status %d)\n", argv[0], status);
			return 1;
		}
	}
	free(args);
	return 0;
}

int main(int argc, char **argv)
{
	double t0, c0;
	long n;
	int err;

	if (argc < 4 || (n = atol(argv[2])) < 1 ||
	    (strcmp(argv[1], "open") && strcmp(argv[1], "exec"))) {
		fprintf(stderr, "usage: storm open N PATH [GAP_US] | storm exec N PROG [ARG...]\n");
		return 2;
	}
	t0 = now();
	c0 = cpu_seconds();
	err = !strcmp(argv[1], "open") ? opens(n, argv[3], argc > 4 ? atol(argv[4]) : 0) : execs(n, argc - 3, argv + 3);
	if (err)
		return 1;
	printf("%.6f %.6f\n", now() - t0, cpu_seconds() - c0);
	return 0;
}
