/* fsslower and fsdist: the file system operations they time, shared by
 * BPF (bpf/tk_fsop.bpf.h) and userspace (libtrace/fstypes.c). */
#ifndef FSOP_H
#define FSOP_H

#include "tk_shared.h"

/* In the order of libtrace/fstypes.c's names. */
enum fsop {
	FSOP_READ, FSOP_WRITE, FSOP_OPEN, FSOP_FSYNC, FSOP_GETATTR, FSOP_MAX,
};

/* Bytes of a file system type's name compared (struct
 * file_system_type.name: "ext4", "xfs", "btrfs", "nfs", "nfs4"). */
#define FSOP_TYPE_LEN 8
/* Bytes of a file's name kept: the kernel's DNAME_INLINE_LEN, as bcc. */
#define FSOP_NAME_LEN 32
/* log2 latency buckets (fsdist); the last holds everything above. */
#define FSOP_SLOTS 32

/* fsslower: one operation at or above the threshold. */
struct fsslower_event {
	unsigned long long ts_ns;     /* at its start (ktime) */
	unsigned long long lat_ns;
	long long bytes;              /* read and write: the result; else 0 */
	unsigned long long offset;    /* read and write: the file position */
	int pid;
	int tid;
	unsigned int op;              /* enum fsop */
	unsigned int name_len;        /* the whole name's length */
	char comm[TK_TASK_COMM_LEN];
	char name[FSOP_NAME_LEN];     /* not NUL-terminated when full */
};

/* fsdist: per CPU, per operation (the array's index). */
struct fsdist_slots {
	unsigned long long slots[FSOP_SLOTS];
	unsigned long long sum_ns;    /* tracekitd's histogram _sum */
};

#endif
