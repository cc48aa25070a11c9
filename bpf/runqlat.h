/* runqlat: run queue latency histograms, shared by BPF and userspace. */
#ifndef RUNQLAT_H
#define RUNQLAT_H

#include "tk_sched.h"
#include "tk_shared.h"

/* log2 buckets of the latency (tk_log2_slot); the last one also holds
 * everything above it (2^31 us is 35 minutes). */
#define RUNQLAT_SLOTS 32
/* Keys (processes, threads, namespaces, cgroups) with a histogram per
 * interval. */
#define RUNQLAT_MAX_KEYS 10240

/* The histogram of all tasks: one per CPU, summed in userspace. sum_ns
 * is the latencies' total, for tracekitd's Prometheus histogram. */
struct runqlat_slots {
	unsigned long long slots[RUNQLAT_SLOTS];
	unsigned long long sum_ns;
};

/* The key of a histogram in hists: a process (-P, tgid), a thread (-L,
 * tid) or a PID namespace (--pidnss, its inode), else 0; and with
 * --print-cgroup the cgroup v2 id of the task that waited, else 0. */
struct runqlat_key {
	unsigned long long cgroup_id;
	unsigned int id;
	unsigned int pad;  /* 0: keys are hashed whole */
};

/* The histogram of one key; comm with -P (the process's) and -L. */
struct runqlat_hist {
	unsigned long long slots[RUNQLAT_SLOTS];
	char comm[TK_TASK_COMM_LEN];
};

/* Userspace, in a skeleton's configure: where the start times are kept
 * (tk_sched.h). */
#define RUNQLAT_CHOOSE_START_MAP(skel) TK_SCHED_CHOOSE_START_MAP(skel, sched_switch_tp_btf)

#endif
