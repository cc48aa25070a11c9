/* bashreadline: one event per line bash's readline() returns. */
#ifndef BASHREADLINE_H
#define BASHREADLINE_H

#include "tk_shared.h"

#define BASHREADLINE_MAX 256

struct readline_event {
	unsigned long long cgroup_id;   /* --print-cgroup; else 0 */
	int pid;
	int tid;
	int uid;
	int len;                        /* bytes read of line; -1: NULL (EOF) */
	char comm[TK_TASK_COMM_LEN];
	char line[BASHREADLINE_MAX];
};

#endif
