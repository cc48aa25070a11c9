/* A workload for fsslower's and fsdist's tests: known file system
 * operations on a file the test names, on command lines from stdin,
 * answering "done" once they have returned.
 *
 *   ops PATH   open(PATH, O_CREAT), 3 write(2) of 4096 bytes, 2 pread64
 *              of 4096 bytes at 0 and 4096, fsync, fstat, close
 *   slow PATH N
 *              open(PATH) (an existing file) with O_DIRECT, N pwrite64 of
 *              4096 bytes at 0, 4096, ..., that each wait for the device;
 *              then, O_DIRECT cleared, a pwrite64 of 4096 bytes at N * 4096
 *              and 2 pread64 of it, all in the page cache; fstat, close;
 *              answers "done" and each waiting pwrite64's time in ns
 *              (CLOCK_MONOTONIC, the clock of the tools' latencies)
 *
 * It says "ready" at start. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SIZE 4096
#define SLOW_MAX 64

static long long slow_ns[SLOW_MAX];
static int slow_n;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int ops(const char *path)
{
	static char buf[SIZE];
	struct stat st;
	int fd, i;

	memset(buf, 'f', sizeof(buf));
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	for (i = 0; i < 3; i++)
		if (write(fd, buf, SIZE) != SIZE)
			return -1;
	for (i = 0; i < 2; i++)
		if (pread(fd, buf, SIZE, i * SIZE) != SIZE)
			return -1;
	if (fsync(fd) || fstat(fd, &st))
		return -1;
	return close(fd);
}

/* O_DIRECT rather than O_DSYNC: each write is one data bio that the
 * call waits for and no page cache holds, while an O_DSYNC write to a
 * new file also commits the file system's journal or log (several more
 * bios, each held for the delay, and a wait on the commit threads). The
 * buffered write and the reads after it touch only the page cache. */
static int slow(const char *path, int n)
{
	static char buf[SIZE] __attribute__((aligned(SIZE)));
	struct stat st;
	int fd, i;

	memset(buf, 's', sizeof(buf));
	fd = open(path, O_RDWR | O_DIRECT);
	if (fd < 0 || n > SLOW_MAX)
		return -1;
	for (slow_n = 0, i = 0; i < n; i++) {
		long long t = now_ns();

		if (pwrite(fd, buf, SIZE, (off_t)i * SIZE) != SIZE)
			return -1;
		slow_ns[slow_n++] = now_ns() - t;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_DIRECT))
		return -1;
	if (pwrite(fd, buf, SIZE, (off_t)n * SIZE) != SIZE)
		return -1;
	for (i = 0; i < 2; i++)
		if (pread(fd, buf, SIZE, (off_t)n * SIZE) != SIZE)
			return -1;
	if (fstat(fd, &st))
		return -1;
	return close(fd);
}

int main(void)
{
	char line[4096];

	setvbuf(stdout, NULL, _IOLBF, 0);
	puts("ready");
	while (fgets(line, sizeof(line), stdin)) {
		char *sp;
		int bad;

		line[strcspn(line, "\n")] = 0;
		sp = strrchr(line, ' ');
		if (!strncmp(line, "ops ", 4))
			bad = ops(line + 4);
		else if (!strncmp(line, "slow ", 5) && sp > line + 4) {
			*sp = 0;
			bad = slow(line + 5, atoi(sp + 1));
			*sp = ' ';
		} else
			bad = 1;
		if (bad) {
			perror(line);
			return 1;
		}
		fputs("done", stdout);
		for (int i = 0; i < slow_n; i++)
			printf(" %lld", slow_ns[i]);
		slow_n = 0;
		putchar('\n');
	}
	return 0;
}
