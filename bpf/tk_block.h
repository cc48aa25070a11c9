/* Block I/O requests, shared by the bio* tools' BPF and userspace. Plain
 * C types only. */
#ifndef TK_BLOCK_H
#define TK_BLOCK_H

#include "tk_shared.h"

/* A disk as BPF reads it from its gendisk: the kernel's dev_t layout
 * (major << 20 | minor of the whole disk). */
#define TK_KDEV(major, minor) (((major) << 20) | (minor))
#define TK_KDEV_MAJOR(d) ((d) >> 20)
#define TK_KDEV_MINOR(d) ((d) & 0xfffff)

/* A request's operation (the kernel's REQ_OP_*, stable across kernels:
 * 0 read, 1 write, 2 flush, 3 discard, 5 secure erase, 9 write zeroes)
 * in the low byte, and these flags above it, translated in BPF from the
 * kernel's own bit numbers (which moved between kernels). */
/* What a tool reads of each request at its issue (tk_block_need): each
 * read is a helper call on the I/O path, so a tool that shows less asks
 * for less (biolatency without -D, -F, -Q reads none). -d DISK reads the
 * disk whatever the mask. */
#define TK_BLOCK_NEED_DEV    (1u << 0)
#define TK_BLOCK_NEED_SECTOR (1u << 1)
#define TK_BLOCK_NEED_LEN    (1u << 2)
#define TK_BLOCK_NEED_FLAGS  (1u << 3)
#define TK_BLOCK_NEED_QUEUED (1u << 4)
#define TK_BLOCK_NEED_ALL    0x1fu

#define TK_BIO_OP(f) ((f) & 0xff)
#define TK_BIO_SYNC     (1u << 8)
#define TK_BIO_META     (1u << 9)
#define TK_BIO_FUA      (1u << 10)
#define TK_BIO_PREFLUSH (1u << 11)
#define TK_BIO_RAHEAD   (1u << 12)

/* Who submitted a request: the task that allocated it (block_getrq, in
 * the submitter's context), ids in the tool's PID namespace. */
struct tk_bio_who {
	unsigned int pid;
	unsigned int tid;
	int kstack;      /* TK_BLOCK_STACKS: its kernel stack's id in
			  * tk_block_stacks (<0: -errno); else 0 */
	unsigned int pad;
	char comm[TK_TASK_COMM_LEN];
};

/* Kernel stack depth kept with TK_BLOCK_STACKS. */
#define TK_BLOCK_STACK_DEPTH 32

/* A request as it was issued to the driver. */
struct tk_bio_start {
	unsigned long long issue_ns;   /* bpf_ktime_get_ns() at issue */
	unsigned long long queued_ns;  /* rq->start_time_ns: when it was made
					* (0: the kernel did not stamp it) */
	unsigned long long sector;
	unsigned int len;              /* bytes */
	unsigned int dev;              /* TK_KDEV */
	unsigned int flags;            /* TK_BIO_OP | TK_BIO_* */
	unsigned char known;           /* 1: who is filled in */
	unsigned char pattern;         /* a tool's own (biosnoop -P) */
	unsigned short pad;
	struct tk_bio_who who;
};

#endif
