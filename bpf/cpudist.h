/* cpudist: on- or off-CPU time histograms, shared by BPF and userspace. */
#ifndef CPUDIST_H
#define CPUDIST_H

#include "tk_sched.h"
#include "tk_shared.h"

/* log2 buckets (tk_log2_slot); the last one also holds everything above. */
#define CPUDIST_SLOTS 32
/* Processes (-P) or threads (-L) with a histogram per interval. */
#define CPUDIST_MAX_KEYS 10240

/* The histogram of all tasks: one per CPU, summed in userspace. */
struct cpudist_slots {
	unsigned long long slots[CPUDIST_SLOTS];
	unsigned long long sum_ns;  /* the runs' total time (tracekitd's _sum) */
};

/* The histogram of a process (-P, keyed by tgid) or a thread (-L, tid),
 * with its comm (the process's: its group leader's). */
struct cpudist_hist {
	unsigned long long slots[CPUDIST_SLOTS];
	char comm[TK_TASK_COMM_LEN];
};

#endif
