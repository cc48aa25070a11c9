/* trace: the generic tracer's probe plans and events, seen by BPF and
 * userspace. Plain C types only. */
#ifndef TRACE_H
#define TRACE_H

#include "tk_plan.h"
#include "tk_shared.h"

/* Probes in one run: each is a slot, one program per attach kind, with
 * its number built in (no BPF cookies needed: 5.10 has none). */
#define TRACE_SLOTS 8
#define TRACE_VALUES 16
#define TRACE_DATA_MAX (TRACE_VALUES * TK_PLAN_STR_LEN)

struct trace_probe_plan {
	struct tk_plan_code code;
	int nvalues;
	int value_src[TRACE_VALUES];      /* >= 0: a fetch; else program
					   * -(src + 1) */
	unsigned short value_off[TRACE_VALUES];  /* in trace_event.data */
	unsigned char value_str[TRACE_VALUES];   /* a string of
					   * TK_PLAN_STR_LEN bytes, else 8 */
	unsigned short data_size;
	unsigned char kstack, ustack;     /* -K, -U */
};

struct trace_hit {
	unsigned int probe;
	unsigned int pid, tid, cpu;
	unsigned long long ts;
	unsigned long long cgroup_id;
	int kstack, ustack;               /* stack ids; < 0: none */
	unsigned int faults;              /* bit i: value i could not be read */
	char comm[TK_TASK_COMM_LEN];
	unsigned char data[TRACE_DATA_MAX];
};

#endif
