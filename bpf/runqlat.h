/* runqlat: run queue latency histograms, shared by BPF and userspace. */
#ifndef RUNQLAT_H
#define RUNQLAT_H

#include "tk_shared.h"

/* log2 buckets of the latency (tk_log2_slot); the last one also holds
 * everything above it (2^31 us is 35 minutes). */
#define RUNQLAT_SLOTS 32
/* Processes (-P) or threads (-L) with a histogram per interval. */
#define RUNQLAT_MAX_KEYS 10240

/* The histogram of all tasks: one per CPU, summed in userspace. sum_ns
 * is the latencies' total, for tracekitd's Prometheus histogram. */
struct runqlat_slots {
	unsigned long long slots[RUNQLAT_SLOTS];
	unsigned long long sum_ns;
};

/* The histogram of one process (-P, key tgid) or thread (-L, key tid). */
struct runqlat_hist {
	unsigned long long slots[RUNQLAT_SLOTS];
	char comm[TK_TASK_COMM_LEN];
};

#endif
