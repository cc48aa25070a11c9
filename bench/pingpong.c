/* A context-switch-heavy workload, for bench/runqlat_overhead.py:
 *   pingpong ROUNDTRIPS BURSTS
 * a parent and a child pass one byte back and forth through two pipes
 * (like `perf bench sched pipe`); run it on one CPU and each round trip
 * is two wakeups and two context switches. Prints each burst's ns per
 * round trip, in CPU time of the two processes together: time the CPU
 * spends on other tasks of a busy machine is not counted, and every
 * context switch and wakeup between the two is. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define QUERY 'q'  /* the parent asks for the child's CPU time */

static double cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void child(int in, int out)
{
	char c;

	while (read(in, &c, 1) == 1) {
		if (c == QUERY) {
			double ns = cpu_ns();

			if (write(out, &ns, sizeof(ns)) != sizeof(ns))
				_exit(1);
		} else if (write(out, &c, 1) != 1) {
			_exit(1);
		}
	}
	_exit(0);
}

/* CPU time of both processes so far. */
static double both_ns(int ping, int pong)
{
	char q = QUERY;
	double theirs;

	if (write(ping, &q, 1) != 1 || read(pong, &theirs, sizeof(theirs)) != sizeof(theirs)) {
		perror("pingpong");
		exit(1);
	}
	return cpu_ns() + theirs;
}

int main(int argc, char **argv)
{
	long trips = argc > 1 ? atol(argv[1]) : 100000;
	int bursts = argc > 2 ? atoi(argv[2]) : 5, ping[2], pong[2], b;
	char c = 0;
	pid_t pid;

	if (trips < 1 || bursts < 1) {
		fprintf(stderr, "usage: %s ROUNDTRIPS BURSTS\n", argv[0]);
		return 2;
	}
	if (pipe(ping) || pipe(pong) || (pid = fork()) < 0) {
		perror("pingpong");
		return 1;
	}
	if (pid == 0) {
		close(ping[1]);  /* so that the parent's close ends the loop */
		close(pong[0]);
		child(ping[0], pong[1]);
	}
	close(ping[0]);
	close(pong[1]);
	for (b = 0; b < bursts; b++) {
		double t0 = both_ns(ping[1], pong[0]);

		for (long i = 0; i < trips; i++)
			if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1) {
				perror("pingpong");
				kill(pid, SIGKILL);
				return 1;
			}
		printf("%.1f\n", (both_ns(ping[1], pong[0]) - t0) / trips);
	}
	close(ping[1]);
	waitpid(pid, NULL, 0);
	return 0;
}
