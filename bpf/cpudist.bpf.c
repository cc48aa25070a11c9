// SPDX-License-Identifier: GPL-2.0
/* cpudist: the time a task spends on a CPU each time it runs, from its
 * switch in to its switch out (sched_switch), or with -O off it, from its
 * switch out to its next switch in. The idle tasks (tid 0) are left out,
 * as bcc.
 *
 * On-CPU, a run begins and ends on one CPU, at two successive switches
 * there: the CPU's one slot (cpu_run) holds when its current task was
 * switched in, and the switch that ends the run reads it, so a switch
 * costs a clock read and an inlined array lookup (no task storage or
 * hash). Off-CPU, a task leaves one CPU and may come back on another:
 * its time is the task's own (tk_sched.bpf.h).
 *
 * Filters -p and --tid are checked on the task itself. Filters that can
 * only look at the current task (-u, -c, -n) judge a task as it is
 * switched out, the one switch where it is current: on-CPU, the run that
 * ends; off-CPU, the time off that begins. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "cpudist.h"
#include "tk_task.bpf.h"
#include "tk_bits.bpf.h"
#include "tk_cgroup.bpf.h"
#include "tk_loss.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_sched.bpf.h"

const volatile bool offcpu = false;       /* -O */
const volatile bool per_process = false;  /* -P: a histogram per tgid */
const volatile bool per_thread = false;   /* -L: a histogram per tid */
const volatile bool millis = false;       /* -m */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct cpudist_slots);
} hist_all SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CPUDIST_MAX_KEYS);  /* 1 without -P or -L */
	__type(key, u32);
	__type(value, struct cpudist_hist);
} hists SEC(".maps");

/* On-CPU: this CPU's current run, since its last switch. */
struct cpu_run {
	u64 start;  /* ns */
	u32 tid;    /* whose run (0: the idle task's, or a task not wanted) */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct cpu_run);
} cpu_run SEC(".maps");

static struct cpudist_hist zero_hist;

/* tp_btf's task pointers are read directly; raw_tp's by a probe read. */
static __always_inline u32 task_tid(bool btf, struct task_struct *t)
{
	return btf ? t->pid : BPF_CORE_READ(t, pid);
}

static __always_inline void count(struct task_struct *t, u64 delta)
{
	struct cpudist_slots *all;
	struct cpudist_hist *h;
	u32 zero = 0, key;
	u64 slot, ns = delta;

	/* log2(delta / unit) without a 64-bit division: 1000 is in
	 * [2^9, 2^10), 1000000 in [2^19, 2^20). */
	slot = millis ? tk_log2_div(delta, 1000000, 19) : tk_log2_div(delta, 1000, 9);
	tk_bound(slot, CPUDIST_SLOTS - 1);
	if (!per_process && !per_thread) {
		all = bpf_map_lookup_elem(&hist_all, &zero);
		if (all) {  /* per-CPU: no atomics needed */
			all->slots[slot]++;
			all->sum_ns += ns;
		}
		return;
	}
	key = per_process ? tk_task_tgid(t) : tk_task_tid(t);
	h = tk_lookup_or_init(&hists, &key, &zero_hist);
	if (!h)
		return;
	if (!h->comm[0]) {
		if (per_process)
			BPF_CORE_READ_STR_INTO(&h->comm, t, group_leader, comm);
		else
			BPF_CORE_READ_STR_INTO(&h->comm, t, comm);
	}
	__sync_fetch_and_add(&h->slots[slot], 1);
}

static __always_inline int on_switch(bool btf, struct task_struct *prev,
				     struct task_struct *next)
{
	u32 prev_tid = task_tid(btf, prev), next_tid = task_tid(btf, next), zero = 0;
	u64 now = bpf_ktime_get_ns(), then;
	struct cpu_run *run;

	/* prev is current here. */
	if (!offcpu) {
		run = bpf_map_lookup_elem(&cpu_run, &zero);
		if (!run)
			return 0;
		/* prev's run ends: it began at this CPU's last switch, which
		 * switched prev in (unless that was before the tool). */
		if (prev_tid && run->tid == prev_tid && now > run->start &&
		    (!tk_sched_current_filter() || tk_task_wanted()))
			count(prev, now - run->start);
		/* next's run begins. */
		run->start = now;
		run->tid = next_tid && tk_sched_other_wanted(next) ? next_tid : 0;
		return 0;
	}
	if (prev_tid && !(tk_task_state(prev) & TK_TASK_DEAD) && tk_sched_other_wanted(prev) &&
	    (!tk_sched_current_filter() || tk_task_wanted()))
		tk_sched_set(btf, prev, prev_tid, now);
	if (next_tid) {
		then = tk_sched_take(btf, next, next_tid);
		if (then && now > then)
			count(next, now - then);
	}
	return 0;
}

/* Arguments 0-2 are the same on every kernel (5.18 appended prev_state). */
SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch_tp_btf, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return on_switch(true, prev, next);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(sched_switch_raw_tp, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return on_switch(false, prev, next);
}

char LICENSE[] SEC("license") = "GPL";
