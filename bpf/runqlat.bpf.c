// SPDX-License-Identifier: GPL-2.0
/* runqlat: run queue latency, the time from a task becoming runnable
 * (woken, or preempted while still runnable) to it running on a CPU.
 *
 * Each probe is written twice, tp_btf and raw_tp, over one body that
 * reads kernel structs with BPF_CORE_READ so that it works for both.
 *
 * Filters -p and --tid are checked on the task itself. Filters that can
 * only look at the current task (-u, -c, -n) judge a task when it is
 * switched out, the one scheduler event where it is current: a wanted
 * task that blocks leaves a mark (start 0) that its wakeup fills in. A
 * new task, which never ran, is judged by its parent. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "runqlat.h"
#include "tk_task.bpf.h"
#include "tk_bits.bpf.h"
#include "tk_cgroup.bpf.h"
#include "tk_loss.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_sched.bpf.h"

const volatile bool per_process = false;  /* -P: a histogram per tgid */
const volatile bool per_thread = false;   /* -L: a histogram per tid */
const volatile bool per_pidns = false;    /* --pidnss: per PID namespace */
const volatile bool millis = false;       /* -m */

/* When each task became runnable: tk_sched.bpf.h. */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct runqlat_slots);
} hist_all SEC(".maps");

/* --print-cgroup (tk_filter.cgroup_ids) keys hists by cgroup too, alone
 * or with -P, -L or --pidnss. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RUNQLAT_MAX_KEYS);  /* 1 unless keyed() */
	__type(key, struct runqlat_key);
	__type(value, struct runqlat_hist);
} hists SEC(".maps");

static struct runqlat_hist zero_hist;

/* The inode number of the task's own PID namespace (the one its pid is
 * allocated in, task_active_pid_ns): thread_pid->numbers[level].ns. */
static __always_inline u32 pidns_of(struct task_struct *t)
{
	struct pid *pid = BPF_CORE_READ(t, thread_pid);
	unsigned int level = BPF_CORE_READ(pid, level);
	struct upid up = {};

	bpf_core_read(&up, sizeof(up), &pid->numbers[level]);
	return BPF_CORE_READ(up.ns, ns.inum);
}

/* A histogram per something, in hists; else one of all tasks. */
static __always_inline bool keyed(void)
{
	return per_process || per_thread || per_pidns || tk_filter.cgroup_ids;
}

static __always_inline u32 hist_id(struct task_struct *next, u32 tid)
{
	if (per_process)
		return tk_task_tgid(next);
	if (per_thread)
		return tk_task_tid(next);
	if (per_pidns)
		return pidns_of(next);
	return 0;
}

static __always_inline void count(struct task_struct *next, u32 tid, u64 delta)
{
	struct runqlat_slots *all;
	struct runqlat_key key = {};
	struct runqlat_hist *h;
	u32 zero = 0;
	u64 slot, ns = delta;

	delta /= millis ? 1000000 : 1000;
	slot = tk_log2_slot(delta);
	tk_bound(slot, RUNQLAT_SLOTS - 1);
	if (!keyed()) {
		all = bpf_map_lookup_elem(&hist_all, &zero);
		if (all) {  /* per-CPU: no atomics needed */
			all->slots[slot]++;
			all->sum_ns += ns;
		}
		return;
	}
	key.id = hist_id(next, tid);
	/* next is the task that waited (and is not current yet). */
	key.cgroup_id = tk_task_cgroup_id(next);
	h = tk_lookup_or_init(&hists, &key, &zero_hist);
	if (!h)
		return;
	if ((per_process || per_thread) && !h->comm[0]) {
		if (per_process)
			BPF_CORE_READ_STR_INTO(&h->comm, next, group_leader, comm);
		else
			BPF_CORE_READ_STR_INTO(&h->comm, next, comm);
	}
	__sync_fetch_and_add(&h->slots[slot], 1);
}

static __always_inline int on_switch(bool btf, bool preempt, struct task_struct *prev,
				     struct task_struct *next)
{
	u64 now = bpf_ktime_get_ns();
	u64 then = tk_sched_runq_switch(btf, preempt, prev, next, now);

	if (then && now > then)
		count(next, BPF_CORE_READ(next, pid), now - then);
	return 0;
}

TK_SCHED_RUNQ_WAKEUP_PROGS()

/* Arguments 0-2 are the same on every kernel (5.18 appended prev_state). */
SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch_tp_btf, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return on_switch(true, preempt, prev, next);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(sched_switch_raw_tp, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return on_switch(false, preempt, prev, next);
}

char LICENSE[] SEC("license") = "GPL";
