/* funclatency: the latency histogram, shared by BPF and userspace. */
#ifndef FUNCLATENCY_H
#define FUNCLATENCY_H

/* log2 buckets of the latency in the chosen unit (tk_log2_slot): 64
 * cover every u64. */
#define FUNCLATENCY_SLOTS 64

/* Calls of the function one thread can be inside at once (recursion,
 * or an interrupt calling it again) with each one timed. */
#define FUNCLATENCY_MAX_DEPTH 16

/* Threads inside the function at once. */
#define FUNCLATENCY_MAX_THREADS 10240

/* One per CPU (per function with -F), summed in userspace; the count is
 * the sum of the slots. */
struct funclatency_hist {
	unsigned long long slots[FUNCLATENCY_SLOTS];
	unsigned long long sum_ns;
};

/* --print-cgroup: a histogram per (function, cgroup) that made calls,
 * in a hash; func is 0 unless -F over several functions. */
#define FUNCLATENCY_MAX_CGROUP_HISTS 10240
struct funclatency_key {
	unsigned long long cgroup_id;
	unsigned int func;
	unsigned int pad;  /* 0: keys are hashed whole */
};

#endif
