/* vfsstat: the counters of the per-CPU array, one slot per VFS call;
 * with --print-cgroup, of a per-CPU hash keyed by cgroup id. */
#ifndef VFSSTAT_H
#define VFSSTAT_H

#include "tk_shared.h"

enum vfsstat_slot {
	VFSSTAT_READ = 0,    /* vfs_read */
	VFSSTAT_WRITE,       /* vfs_write */
	VFSSTAT_FSYNC,       /* fsync(2), fdatasync(2) */
	VFSSTAT_OPEN,        /* vfs_open */
	VFSSTAT_CREATE,      /* vfs_create */
	VFSSTAT_SLOTS,
};

/* --print-cgroup: the counters of each cgroup v2 id (per-CPU hash). */
#define VFSSTAT_MAX_CGROUPS 10240

struct vfsstat_counts {
	unsigned long long n[VFSSTAT_SLOTS];
};

#endif
