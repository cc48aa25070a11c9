/* wakeuptime: the map keys and start entries, shared by BPF and userspace. */
#ifndef WAKEUPTIME_H
#define WAKEUPTIME_H

#include "tk_wake.h"

/* Threads asleep at once (a start entry each until woken). */
#define WAKEUP_MAX_THREADS 32768

/* A count: the waker's stacks as it woke a thread of comm target (the
 * waker's thread id is 0: counts are by comm, as bcc's). */
struct wakeup_key {
	struct tk_wake_side waker;
	char target[TK_TASK_COMM_LEN];
};

/* A thread asleep: since when, and its comm. */
struct wakeup_start {
	unsigned long long ts;      /* ns, bpf_ktime_get_ns */
	char comm[TK_TASK_COMM_LEN];
};

#endif
