// SPDX-License-Identifier: GPL-2.0
/* offwaketime: time threads spend blocked, by the stacks they blocked in
 * joined with the stacks of the threads that woke them.
 *
 * sched_switch, prev (current) leaving the CPU: a wanted thread's stacks,
 * comm and time go in its start entry, as in offcputime.
 * sched_waking, in the waker's context (sched_wakeup may run on the
 * woken thread's CPU, from an interrupt): the current task's stacks and
 * comm go in the start entry of the thread it wakes, when there is one.
 * sched_switch, next coming back: the time since it left, in
 * microseconds, is added to the count of (its stacks, its waker's). A
 * block ended by no wakeup (a preempted thread's wait to run again) is
 * offcputime's, not counted here. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "offwaketime.h"
#include "tk_task.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_stack.bpf.h"
#include "tk_wake.bpf.h"
#include "tk_offcpu.bpf.h"

const volatile bool user_threads_only = false;    /* -u */
const volatile bool kernel_threads_only = false;  /* -k */
const volatile __u64 min_block_us = 1;            /* -m */
const volatile __u64 max_block_us = (__u64)-1;    /* -M */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, OFFWAKE_MAX_THREADS);
	__type(key, u32);                   /* tid */
	__type(value, struct offwake_start);
} start SEC(".maps");

/* Microseconds blocked by (target, waker); sized by --max-stacks. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct offwake_key);
	__type(value, u64);
} wake_counts SEC(".maps");

static __always_inline bool prev_wanted(struct task_struct *prev)
{
	return tk_wake_kind_wanted(prev, user_threads_only, kernel_threads_only) &&
	       tk_task_wanted();
}

static __always_inline int on_switch(void *ctx, struct task_struct *prev,
				     struct task_struct *next)
{
	struct offwake_start s = {}, *sp;
	u64 now = bpf_ktime_get_ns(), delta;
	u32 tid = BPF_CORE_READ(prev, pid);

	/* Entries as in tk_offcpu.bpf.h. */
	if (!tid)
		goto next;  /* the idle task */
	if (!tk_offcpu_dead(&start, tid, tk_task_state(prev)) && prev_wanted(prev)) {
		tk_wake_side_fill(ctx, &s.key.target);
		s.ts = now;
		tk_offcpu_start(&start, tid, &s);
	}
next:
	tid = BPF_CORE_READ(next, pid);
	sp = bpf_map_lookup_elem(&start, &tid);
	if (!sp)
		return 0;
	delta = (now - sp->ts) / 1000;
	if (sp->woken && now > sp->ts && delta >= min_block_us &&
	    delta <= max_block_us)
		if (tk_wake_count(&wake_counts, &sp->key, delta) &&
		    sp->key.target.tgid && sp->key.target.user_stack_id >= 0)
			/* A new key: userspace reads the target's mappings
			 * while it runs (the waker's were at the wakeup). */
			tk_stack_note(ctx, sp->key.target.tgid, next);
	bpf_map_delete_elem(&start, &tid);
	return 0;
}

/* p is being woken by the current task. Only a thread with a start
 * entry (wanted, and off CPU) is looked at further. */
static __always_inline int on_waking(void *ctx, struct task_struct *p)
{
	u32 tid = BPF_CORE_READ(p, pid);
	struct offwake_start *sp = bpf_map_lookup_elem(&start, &tid);

	if (!sp)
		return 0;
	tk_wake_side_fill(ctx, &sp->key.waker);
	sp->woken = 1;
	tk_wake_side_note(ctx, &sp->key.waker);
	return 0;
}

/* sched_switch: arguments 0-2 are the same on every kernel. */
SEC("tp_btf/sched_switch")
int BPF_PROG(offwake_switch_tp_btf, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return on_switch(ctx, prev, next);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(offwake_switch_raw_tp, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return on_switch(ctx, prev, next);
}

SEC("tp_btf/sched_waking")
int BPF_PROG(offwake_waking_tp_btf, struct task_struct *p)
{
	return on_waking(ctx, p);
}

SEC("raw_tp/sched_waking")
int BPF_PROG(offwake_waking_raw_tp, struct task_struct *p)
{
	return on_waking(ctx, p);
}

char LICENSE[] SEC("license") = "GPL";
