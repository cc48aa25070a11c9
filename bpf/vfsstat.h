/* vfsstat: the counters of the per-CPU array, one slot per VFS call. */
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

#endif
