/* offcputime: the start map's value, shared by BPF and userspace. */
#ifndef OFFCPUTIME_H
#define OFFCPUTIME_H

#include "tk_stack.h"

/* Threads off CPU at once, each with a start entry until it runs again
 * (a thread that exits leaves none). A full map is a counted loss. */
#define OFFCPU_MAX_THREADS 32768

/* No --state filter. */
#define OFFCPU_ANY_STATE (-1L)

/* A thread that left the CPU: when, and the stacks it left from. */
struct offcpu_start {
	unsigned long long ts;       /* ns, bpf_ktime_get_ns */
	struct tk_stack_key key;
	unsigned int snapped;        /* --unwind: this block kept key's stack
				      * copy in tk_stack_snaps (a key not
				      * seen before) */
	unsigned int pad_;
};

#endif
