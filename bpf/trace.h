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

/* How a slot's program reads its arguments. */
enum trace_mode {
	TRACE_MODE_TP,     /* a tracepoint: ctx is the record */
	TRACE_MODE_REGS,   /* kprobe, uprobe: ctx is pt_regs */
	TRACE_MODE_ARGS,   /* fentry, fexit: ctx is the arguments (u64[]) */
	TRACE_MODE_USDT,   /* a USDT probe: arguments by libbpf's spec */
};

struct trace_probe_plan {
	struct tk_fetch fetch[TK_PLAN_FETCHES];
	struct tk_insn insn[TK_PLAN_INSNS];
	char str[TK_PLAN_STRS][TK_PLAN_STR_LEN];
	int filter;                       /* start in insn; -1: none */
	int nfetch;
	int nargs;                        /* fexit: the return value's index */
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
