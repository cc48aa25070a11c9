/* klockstat: kernel mutex and rwsem wait and hold times, by caller. */
#ifndef KLOCKSTAT_H
#define KLOCKSTAT_H

#include "tk_shared.h"

/* Kernel frames kept of each lock call, innermost first: the locking
 * code and the tracing machinery, then the caller and its callers. */
#define KLOCK_FRAMES 24

enum { KLOCK_WAIT = 0, KLOCK_HOLD = 1 };

/* A row's key in the stats map: the stack of the lock call (zero with
 * -P), the thread (-P; else 0) and which table. */
struct klock_key {
	unsigned long long frames[KLOCK_FRAMES];
	unsigned int tid;
	unsigned int kind;
};

struct klock_stat {
	unsigned long long count;
	unsigned long long total_ns;
	unsigned long long max_ns;
	unsigned long long max_lock;    /* the lock of the longest */
	int max_pid, max_tid;           /* the task of the longest */
	char max_comm[TK_TASK_COMM_LEN];
};

/* A lock call under way, or a mutex held: since when, which lock, and
 * the kernel stack of the lock call. */
struct klock_start {
	unsigned long long ts;
	unsigned long long lock;
	unsigned long long frames[KLOCK_FRAMES];
};

#endif
