/* The workloads' view of a thread as the kernel accounts it, for
 * tests/e2e/sched_account.py: its time on CPU and waiting on a run queue,
 * in ns (sum_exec_runtime and sched_info.run_delay, the first two fields
 * of PATH, a /proc/.../schedstat), read again through the descriptor *fd
 * (-1 at first: opened on the first call). Exits 3 when it cannot. */
#ifndef TK_SCHEDSTAT_H
#define TK_SCHEDSTAT_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void read_schedstat(const char *path, int *fd, long long *oncpu, long long *waited)
{
	char buf[128];
	ssize_t n;

	if (*fd < 0)
		*fd = open(path, O_RDONLY | O_CLOEXEC);
	n = *fd < 0 ? -1 : pread(*fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0) {
		perror(path);
		exit(3);
	}
	buf[n] = 0;
	if (sscanf(buf, "%lld %lld", oncpu, waited) != 2) {
		fprintf(stderr, "%s: %s\n", path, buf);
		exit(3);
	}
}

#endif
