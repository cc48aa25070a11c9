/* runqslower: one event per run queue wait longer than a threshold. */
#ifndef RUNQSLOWER_H
#define RUNQSLOWER_H

#include "tk_sched.h"
#include "tk_shared.h"

struct runqslower_event {
	unsigned long long lat_ns;  /* runnable (woken, preempted) to running */
	int pid, tid;               /* the task that waited */
	int prev_pid, prev_tid;     /* the task it took the CPU from */
	char comm[TK_TASK_COMM_LEN];
	char prev_comm[TK_TASK_COMM_LEN];
};

#endif
