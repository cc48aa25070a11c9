/* opensnoop: one event per open, openat or openat2, successful or failed. */
#ifndef OPENSNOOP_H
#define OPENSNOOP_H

#include "tk_shared.h"

/* Bytes of path captured per open, with its NUL: PATH_MAX. Longer paths
 * (which the kernel refuses with ENAMETOOLONG) are cut and marked. */
#define OPEN_PATH_MAX 4096

#define OPEN_F_TRUNCATED 1    /* the path did not fit in OPEN_PATH_MAX */
#define OPEN_F_PATH_FAULT 2   /* the path could not be read */
#define OPEN_F_PREFIX_CUT 4   /* -F: the directory walk stopped on its
			       * bound: the path's beginning is missing */

enum open_syscall { OPEN_SYS_OPEN, OPEN_SYS_OPENAT, OPEN_SYS_OPENAT2 };

struct open_event {
	unsigned long long flags; /* O_* flags (openat2: how->flags) */
	unsigned long long cgroup_id;  /* --print-cgroup; else 0 */
	int pid;
	int tid;
	int uid;
	int ret;                  /* fd, or -errno */
	unsigned int ev_flags;    /* OPEN_F_* */
	unsigned int syscall;     /* enum open_syscall */
	unsigned int path_len;    /* bytes of path before its NUL */
	char comm[TK_TASK_COMM_LEN];
	char path[OPEN_PATH_MAX]; /* path_len bytes, then NUL when read */
};

#endif
