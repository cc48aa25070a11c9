/* threadsnoop: one event per pthread_create() call, at its return. */
#ifndef THREADSNOOP_H
#define THREADSNOOP_H

#include "tk_shared.h"

struct thread_event {
	unsigned long long ts_ns;       /* at the call (ktime) */
	unsigned long long start;       /* start_routine, in the caller */
	unsigned long long cgroup_id;   /* --print-cgroup; else 0 */
	int pid;
	int tid;                        /* the creating thread */
	int uid;
	int new_tid;                    /* the thread made; 0 if none */
	int ret;                        /* pthread_create's: 0 or an errno */
	char comm[TK_TASK_COMM_LEN];
};

#endif
