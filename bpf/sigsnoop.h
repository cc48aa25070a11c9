/* sigsnoop: one event per signal generated (sent to a task). */
#ifndef SIGSNOOP_H
#define SIGSNOOP_H

#include "tk_shared.h"

struct sig_event {
	unsigned long long cgroup_id;  /* --print-cgroup; else 0 */
	int pid;                  /* the sender: the task that made it */
	int tid;
	int uid;
	int ttid;                 /* the target thread */
	int tgid;                 /* its process; -1 where the tracepoint has no task */
	int sig;
	int code;                 /* si_code: SI_USER 0, SI_KERNEL 0x80, ... */
	int group;                /* 1: sent to the whole process */
	int result;               /* 0 delivered, 1 ignored, 2 already pending,
				   * 3 overflow, 4 lose info */
	char comm[TK_TASK_COMM_LEN];
	char tcomm[TK_TASK_COMM_LEN];
};

#endif
