/* A command for the TOOL -- COMMAND tests, with the same system calls
 * every run, so that a tool's view of it can be compared with strace's:
 *   cmdtree work DIR   opens DIR/present (read, closed) and DIR/missing-N
 *                      (ENOENT), close(-1) (EBADF), from the main thread,
 *                      a second thread, and a forked child that then
 *                      execs cmdtree exit
 *   cmdtree exit       exits 0
 *   cmdtree daemon N   double-forks a daemon (setsid, stdio on /dev/null)
 *                      that calls sched_yield N times, then stays; prints
 *                      the daemon's PID and exits once the N calls are
 *                      made
 *   cmdtree yield      sched_yield until killed: the same call from a
 *                      process outside the traced tree
 *   cmdtree getpid N   calls getpid() (libc's, not cached) N times
 *
 * Its work child execs itself, not /bin/true, and the tests that count
 * every call of work link it statically (conftest's cmdtree_static): the
 * dynamic loader's calls are not the same every run. It maps each
 * library at an address chosen by ASLR and then unmaps the part before
 * the library's alignment, unless the address was aligned already: on
 * arm64 (64 KiB-aligned libraries, 4 KiB pages) one run in 16 makes one
 * munmap fewer. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *dir, *self;

static void open_one(const char *name)
{
	char path[4096], buf[64];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		if (errno != ENOENT)
			exit(3);
		return;
	}
	if (read(fd, buf, sizeof(buf)) < 0)
		exit(3);
	close(fd);
}

static void *thread_main(void *arg)
{
	(void)arg;
	open_one("present");
	open_one("missing-thread");
	open_one("present");
	return NULL;
}

static int work(void)
{
	pthread_t thread;
	pid_t pid;
	int status;

	open_one("present");
	open_one("missing-1");
	open_one("missing-2");
	close(-1);
	if (pthread_create(&thread, NULL, thread_main, NULL))
		return 3;
	/* pthread_join waits in futex only if the thread is still running:
	 * a call made or not by timing. Spin (no system call) until it has
	 * ended, so the calls are the same every run. */
	while ((errno = pthread_tryjoin_np(thread, NULL)) == EBUSY)
		;
	if (errno)
		return 3;
	pid = fork();
	if (pid < 0)
		return 3;
	if (pid == 0) {
		char *argv[] = { "cmdtree", "exit", NULL };

		open_one("present");
		open_one("missing-child");
		execve(self, argv, (char *[]){ NULL });
		_exit(4);
	}
	if (waitpid(pid, &status, 0) != pid || status != 0)
		return 3;
	open_one("missing-3");
	close(-1);
	return 0;
}

static int daemon_tree(long n)
{
	int done[2], status;
	pid_t first;
	char c;

	if (pipe(done))
		return 3;
	first = fork();
	if (first < 0)
		return 3;
	if (first == 0) {
		pid_t daemon = fork();

		if (daemon != 0)
			_exit(daemon < 0);
		setsid();
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		printf("%d\n", (int)getpid());
		fflush(stdout);
		dup2(null, 1);
		dup2(null, 2);
		for (long i = 0; i < n; i++)
			sched_yield();
		if (write(done[1], "x", 1) != 1)
			_exit(3);
		for (;;)
			pause();
	}
	close(done[1]);
	if (waitpid(first, &status, 0) != first || status != 0)
		return 3;
	/* The daemon's PID is printed; its N calls are made once it writes. */
	return read(done[0], &c, 1) == 1 ? 0 : 3;
}

int main(int argc, char **argv)
{
	self = argv[0];
	if (argc == 2 && !strcmp(argv[1], "exit"))
		return 0;
	if (argc == 3 && !strcmp(argv[1], "work")) {
		dir = argv[2];
		return work();
	}
	if (argc == 3 && !strcmp(argv[1], "daemon"))
		return daemon_tree(atol(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "getpid")) {
		for (long i = atol(argv[2]); i > 0; i--)
			getpid();
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "yield"))
		for (;;)
			sched_yield();
	fprintf(stderr, "usage: cmdtree work DIR | exit | daemon N | yield | getpid N\n");
	return 2;
}
