/* statsnoop: one event per stat-family call, at its exit. */
#ifndef STATSNOOP_H
#define STATSNOOP_H

#include "tk_shared.h"

#define STAT_PATH_MAX 4096    /* PATH_MAX, with the NUL */

#define STAT_F_TRUNCATED 1    /* the path did not fit */
#define STAT_F_PATH_FAULT 2   /* the path could not be read */
#define STAT_F_FD_PATH 4      /* newfstat: the path is the fd's, walked in
			       * BPF (a "..." prefix when cut) */
#define STAT_F_PREFIX_CUT 8   /* that walk stopped on its bound */

/* libbpf-tools' set, in its order of names (tools/statsnoop.c). */
enum stat_syscall {
	STAT_SYS_STATFS, STAT_SYS_NEWSTAT, STAT_SYS_STATX, STAT_SYS_NEWFSTAT,
	STAT_SYS_NEWFSTATAT, STAT_SYS_NEWLSTAT, STAT_SYS_MAX,
};

struct stat_event {
	unsigned long long ts_ns;      /* at the call's exit (ktime) */
	unsigned long long cgroup_id;  /* --print-cgroup; else 0 */
	int pid;
	int tid;
	int uid;
	int ret;                  /* 0, or -errno */
	int fd;                   /* newfstat's fd, *at's dirfd; else -1 */
	unsigned int syscall;     /* enum stat_syscall */
	unsigned int ev_flags;    /* STAT_F_* */
	unsigned int path_len;    /* bytes of path before its NUL */
	char comm[TK_TASK_COMM_LEN];
	char path[STAT_PATH_MAX];
};

#endif
