/* timeit FILE COMMAND [ARG...]: run COMMAND, write its wall time in
 * seconds to FILE. The time is the command's alone, from fork to exit:
 * not the start-up of a tracer that runs timeit (memleak attaching,
 * heaptrack's injection), which bench/memleak_overhead.py does not
 * count; valgrind's start-up for COMMAND itself is counted. */
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec a, b;
	int status;
	pid_t pid;
	FILE *f;

	if (argc < 3)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &a);
	pid = fork();
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (!(f = fopen(argv[1], "w")))
		return 1;
	fprintf(f, "%.6f\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
	fclose(f);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
