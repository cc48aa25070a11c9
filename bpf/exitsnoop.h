/* exitsnoop: one event per process (or, --per-thread, thread) exit. */
#ifndef EXITSNOOP_H
#define EXITSNOOP_H

#include "tk_shared.h"

struct exit_event {
	unsigned long long age_ns;     /* from the process's (thread's) start */
	unsigned long long cgroup_id;  /* --print-cgroup; else 0 */
	int pid;
	int tid;                  /* the thread whose exit this is */
	int ppid;
	int uid;
	int exit_code;            /* the kernel's: status << 8 | core 0x80 | signal */
	unsigned int threads;     /* --per-thread: 0; else 1 */
	char comm[TK_TASK_COMM_LEN];
};

#endif
