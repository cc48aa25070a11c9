/* The workload of test_klockstat.py: N threads, "tk-lockw", write to one
 * pipe at once while the main thread, "tk-lockr", drains it, so that
 * they contend on the pipe's mutex (pipe_write and pipe_read take
 * pipe->mutex; anon_pipe_write and anon_pipe_read since Linux 6.16). It
 * prints its pid and "ready" once the threads run, and goes on until
 * stdin reaches its end (the test closes it), then prints "done" and
 * exits.
 *
 *   lock_target [-g] [N]   N writer threads (default 4); -g: they start
 *                          when a line comes on stdin (start_gate.h)
 *
 * The writers must keep running, not wait for room in the pipe: a
 * writer that waits is woken alone (exclusive wakeups), and writers
 * woken one after another on one CPU, as a busy machine schedules them,
 * never meet at the mutex. So the pipe is large (1 MiB where allowed)
 * and the main thread drains it by splice(2) to /dev/null, which takes
 * the pages without copying them: faster than the writers fill it. Each
 * write copies 16 KiB under the mutex, long enough for a writer on the
 * other CPU, or one that preempts the holder, to find it taken. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "start_gate.h"

static int fds[2];
static volatile int stop;

static void *writer(void *arg)
{
	static char chunk[16384];

	(void)arg;
	prctl(PR_SET_NAME, "tk-lockw");
	gate_wait();
	while (!stop)
		if (write(fds[1], chunk, sizeof(chunk)) < 0)
			break;
	return NULL;
}

int main(int argc, char **argv)
{
	bool gated = argc > 1 && !strcmp(argv[1], "-g");
	int n = argc > 1 + gated ? atoi(argv[1 + gated]) : 4, i, null;
	pthread_t *t = calloc(n > 0 ? n : 1, sizeof(*t));
	char buf[256];
	struct pollfd p[2];

	null = open("/dev/null", O_WRONLY);
	if (!t || n < 1 || null < 0 || pipe(fds))
		return 1;
	prctl(PR_SET_NAME, "tk-lockr");
	prctl(PR_SET_PDEATHSIG, 9);
	if (fcntl(fds[1], F_SETPIPE_SZ, 1 << 20) < 0)
		fcntl(fds[1], F_SETPIPE_SZ, 256 << 10);
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, writer, NULL))
			return 1;
	printf("%d ready\n", (int)getpid());
	fflush(stdout);
	if (gated && !gate_read_go())
		stop = 1;
	gate_open();
	p[0] = (struct pollfd){ .fd = fds[0], .events = POLLIN };
	p[1] = (struct pollfd){ .fd = 0, .events = POLLIN };
	while (!stop) {
		if (poll(p, 2, -1) < 0)
			continue;
		if (p[1].revents && read(0, buf, sizeof(buf)) <= 0)
			break;
		if (p[0].revents & POLLIN &&
		    splice(fds[0], NULL, null, NULL, 1 << 20, SPLICE_F_NONBLOCK) < 0)
			return 1;
	}
	stop = 1;
	/* Writers blocked on a full pipe: drain until they see stop. */
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	for (i = 0; i < n; i++)
		while (pthread_tryjoin_np(t[i], NULL))
			if (splice(fds[0], NULL, null, NULL, 1 << 20, SPLICE_F_NONBLOCK) <= 0)
				usleep(1000);
	printf("done\n");
	return 0;
}
