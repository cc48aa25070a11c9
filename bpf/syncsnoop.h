/* syncsnoop: one event per sync-family call, at its exit. */
#ifndef SYNCSNOOP_H
#define SYNCSNOOP_H

#include "tk_shared.h"

/* In the order of tools/syncsnoop.c's names. */
enum sync_syscall {
	SYNC_SYS_SYNC, SYNC_SYS_FSYNC, SYNC_SYS_FDATASYNC, SYNC_SYS_MSYNC,
	SYNC_SYS_SYNC_FILE_RANGE, SYNC_SYS_SYNCFS, SYNC_SYS_MAX,
};

struct sync_event {
	unsigned long long args[4];    /* the call's arguments as passed */
	unsigned long long ts_ns;      /* at the call's entry (ktime), as bcc */
	unsigned long long lat_ns;     /* entry to exit */
	unsigned long long cgroup_id;  /* --print-cgroup; else 0 */
	int pid;
	int tid;
	int uid;
	int ret;                  /* 0, or -errno */
	unsigned int syscall;     /* enum sync_syscall */
	char comm[TK_TASK_COMM_LEN];
};

#endif
