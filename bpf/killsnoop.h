/* killsnoop: one event per kill()-family call, at its exit. */
#ifndef KILLSNOOP_H
#define KILLSNOOP_H

#include "tk_shared.h"

/* In the order of tools/killsnoop.c's names. */
enum kill_syscall {
	KILL_SYS_KILL, KILL_SYS_TKILL, KILL_SYS_TGKILL, KILL_SYS_RT_SIGQUEUEINFO,
	KILL_SYS_RT_TGSIGQUEUEINFO, KILL_SYS_MAX,
};

struct kill_event {
	unsigned long long cgroup_id;  /* --print-cgroup; else 0 */
	int pid;
	int tid;
	int uid;
	int tpid;                 /* kill's pid (negative: a group); a tid for t*kill */
	int tgid;                 /* tgkill's and rt_tgsigqueueinfo's tgid; else 0 */
	int sig;
	int ret;                  /* 0, or -errno */
	unsigned int syscall;     /* enum kill_syscall */
	char comm[TK_TASK_COMM_LEN];
};

#endif
