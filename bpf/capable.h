/* capable: one event per capability check (cap_capable), at its return. */
#ifndef CAPABLE_H
#define CAPABLE_H

#include "tk_stack.h"   /* TK_STACK_MAX_DEPTH; tk_shared.h */

/* audit and insetid when the probe cannot see the check's options (the
 * capability:cap_capable tracepoint has none). */
#define CAP_OPT_UNKNOWN (-1)

/* Stack map entries with -K or -U by default (--stack-storage-size; a
 * stack that finds no room goes to the spill map, else by its frames),
 * and --unique's. */
#define CAPABLE_STACKS 16384
#define CAPABLE_SEEN 10240

struct cap_event {
	unsigned long long cgroup_id;  /* --print-cgroup; else 0 */
	int pid;
	int tid;
	int uid;
	int cap;
	int ret;                  /* 0: allowed; else -errno (-EPERM) */
	int audit;                /* 1, 0 (a noaudit check) or CAP_OPT_UNKNOWN */
	int insetid;              /* 1 (a set*id call's check), 0 or CAP_OPT_UNKNOWN */
	int kstack;               /* stack ids of tk_stack_id (-K, -U); < 0: none */
	int ustack;
	char comm[TK_TASK_COMM_LEN];
};

#endif
