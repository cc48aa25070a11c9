/* drsnoop: one event per reclaim a task did itself, at its end. */
#ifndef DRSNOOP_H
#define DRSNOOP_H

#include "tk_shared.h"

/* The kinds of reclaim, by their tracepoints (vmscan:mm_vmscan_*). */
enum dr_kind {
	DR_DIRECT,           /* direct_reclaim: the system is short of memory */
	DR_MEMCG,            /* memcg_reclaim: a memory cgroup at its limit or high */
	DR_MEMCG_SOFTLIMIT,  /* memcg_softlimit_reclaim (cgroup v1) */
	DR_KINDS,
};

struct dr_event {
	unsigned long long ts_ns;          /* at the reclaim's start (ktime) */
	unsigned long long lat_ns;
	unsigned long long nr_reclaimed;   /* pages */
	unsigned long long free_pages;     /* -v: free pages at the end; else 0 */
	unsigned long long cgroup_id;      /* --print-cgroup; else 0 */
	int pid;
	int tid;
	int uid;
	int order;                         /* of the allocation that reclaimed */
	unsigned int kind;                 /* enum dr_kind */
	char comm[TK_TASK_COMM_LEN];
};

#endif
