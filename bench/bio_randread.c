/* The block benchmark's workload: 4 KiB O_DIRECT reads of a block device
 * (or of a regular file: bench/cpu_overhead.py's hard interrupts, one
 * from the disk for each read) at random 4 KiB-aligned offsets (a fixed xorshift sequence, the same in
 * every run), in bursts; prints each burst's wall-clock ns per read (the
 * reads are served by the loop driver's worker, not in this process, so
 * its CPU time would miss them).
 *
 * Usage: bio_randread DEVICE|FILE READS BURSTS */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/fs.h>

#define BLOCK 4096

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	uint64_t size, blocks, x = 88172645463325252ull;
	long reads, bursts;
	struct stat st;
	void *buf;
	int fd;

	if (argc != 4)
		return 2;
	reads = atol(argv[2]);
	bursts = atol(argv[3]);
	fd = open(argv[1], O_RDONLY | O_DIRECT);
	if (fd < 0 || fstat(fd, &st) || posix_memalign(&buf, BLOCK, BLOCK)) {
		perror(argv[1]);
		return 1;
	}
	size = (uint64_t)st.st_size;
	if (S_ISBLK(st.st_mode) && ioctl(fd, BLKGETSIZE64, &size)) {
		perror(argv[1]);
		return 1;
	}
	blocks = size / BLOCK;
	if (!blocks) {
		fprintf(stderr, "%s: smaller than one block\n", argv[1]);
		return 1;
	}
	for (long b = 0; b < bursts; b++) {
		uint64_t t0 = now_ns();

		for (long i = 0; i < reads; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			if (pread(fd, buf, BLOCK, (off_t)(x % blocks) * BLOCK) != BLOCK) {
				perror("pread");
				return 1;
			}
		}
		printf("%.1f\n", (double)(now_ns() - t0) / reads);
	}
	return 0;
}
