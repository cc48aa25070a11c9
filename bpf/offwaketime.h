/* offwaketime: the map keys and start entries, shared by BPF and userspace. */
#ifndef OFFWAKETIME_H
#define OFFWAKETIME_H

#include "tk_wake.h"

/* Threads off CPU at once (a start entry each until they run again). */
#define OFFWAKE_MAX_THREADS 32768

/* A count: the blocked thread's stacks as it left the CPU and its
 * waker's as it woke it. */
struct offwake_key {
	struct tk_wake_side target;
	struct tk_wake_side waker;
};

/* A blocked thread: since when, and (once woken) by whom. */
struct offwake_start {
	unsigned long long ts;      /* ns, bpf_ktime_get_ns */
	unsigned int woken;         /* key.waker is filled in (a waker may
				     * be the idle task: pid 0, comm
				     * swapper/N, as a timer fires) */
	unsigned int pad_;
	struct offwake_key key;
};

#endif
