/* The workload of test_klockstat.py's rwsem tests: N threads, "tk-rwsem",
 * that take kernel locks other than pipe_write's mutex_lock, each in a
 * loop, until stdin reaches its end (the test closes it). It prints its
 * pid and "ready" once the threads run, and "done" at the end.
 *
 *   rwsem_target [-g] mmap [N]   each thread maps and unmaps an anonymous page:
 *                           mmap(2) and munmap(2) take the process's
 *                           mmap_lock for writing (down_write_killable,
 *                           from vm_mmap_pgoff and __vm_munmap), so the
 *                           threads contend on it
 *   rwsem_target [-g] proc [N]   each thread reads /proc/self/syscall:
 *                           lock_trace takes the exec update lock
 *                           killably (mutex_lock_killable before 5.11,
 *                           down_read_killable since)
 * N defaults to 4; -g: the threads start when a line comes on stdin
 * (start_gate.h). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "start_gate.h"

static volatile int stop;

static void *mapper(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "tk-rwsem");
	gate_wait();
	while (!stop) {
		void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED || munmap(p, 4096))
			return (void *)1;
	}
	return NULL;
}

static void *reader(void *arg)
{
	char buf[256];

	(void)arg;
	prctl(PR_SET_NAME, "tk-rwsem");
	gate_wait();
	while (!stop) {
		int fd = open("/proc/self/syscall", O_RDONLY);

		if (fd < 0 || read(fd, buf, sizeof(buf)) < 0)
			return (void *)1;
		close(fd);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	bool gated = argc > 1 && !strcmp(argv[1], "-g");
	char **arg = argv + gated;
	int nargs = argc - gated;
	void *(*fn)(void *) = nargs > 1 && !strcmp(arg[1], "mmap") ? mapper :
			      nargs > 1 && !strcmp(arg[1], "proc") ? reader : NULL;
	int n = nargs > 2 ? atoi(arg[2]) : 4, i, failed = 0;
	pthread_t *t = calloc(n > 0 ? n : 1, sizeof(*t));
	char buf[256];
	void *ret;

	if (!fn || !t || n < 1) {
		fprintf(stderr, "usage: rwsem_target [-g] mmap|proc [N]\n");
		return 2;
	}
	prctl(PR_SET_PDEATHSIG, 9);
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, fn, NULL))
			return 1;
	printf("%d ready\n", (int)getpid());
	fflush(stdout);
	if (gated && !gate_read_go())
		stop = 1;
	gate_open();
	while (!stop && read(0, buf, sizeof(buf)) > 0)
		;
	stop = 1;
	for (i = 0; i < n; i++)
		if (pthread_join(t[i], &ret) || ret)
			failed = 1;
	printf("done\n");
	return failed;
}
