/* runqlen: run queue length histograms, shared by BPF and userspace. */
#ifndef RUNQLEN_H
#define RUNQLEN_H

/* Linear buckets of the length, 0..RUNQLEN_SLOTS-1; the last one also
 * holds everything above it. */
#define RUNQLEN_SLOTS 32

/* One per CPU (a per-CPU array): each CPU's samples. */
struct runqlen_slots {
	unsigned long long slots[RUNQLEN_SLOTS];
};

#endif
