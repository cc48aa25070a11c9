// SPDX-License-Identifier: GPL-2.0
/* offcputime: time threads spend off CPU, by the stacks they left from.
 *
 * At sched_switch prev, the task leaving the CPU, is still current: its
 * filters (tk_task_wanted), its stacks, its comm and its cgroup
 * (--print-cgroup) are those of the current task, so the stack key is
 * taken there, with the start time, in the start map by thread id. When
 * the thread is switched in again (it is next) the time since is added,
 * in microseconds, to its key's count in tk_stack_counts
 * (tk_stack.bpf.h).
 *
 * Written twice, tp_btf and raw_tp, over one body that reads kernel
 * structs with BPF_CORE_READ so that it works for both. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "offcputime.h"
#include "tk_task.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_stack.bpf.h"
#include "tk_offcpu.bpf.h"

#define PF_KTHREAD 0x00200000   /* a kernel thread */

const volatile bool user_threads_only = false;    /* -u */
const volatile bool kernel_threads_only = false;  /* -k */
const volatile long state = OFFCPU_ANY_STATE;     /* --state: 0 or a mask */
const volatile __u64 min_block_us = 1;              /* -m */
const volatile __u64 max_block_us = (__u64)-1;        /* -M */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, OFFCPU_MAX_THREADS);
	__type(key, u32);                   /* tid */
	__type(value, struct offcpu_start);
} start SEC(".maps");

/* prev is current: the common filters apply to it as to any current task. */
static __always_inline bool prev_wanted(struct task_struct *prev, long st)
{
	bool kthread;

	/* As bcc: 0 is exactly TASK_RUNNING (preempted), else a bitmask. */
	if (state != OFFCPU_ANY_STATE && (state ? !(st & state) : st != 0))
		return false;
	if (user_threads_only || kernel_threads_only) {
		kthread = BPF_CORE_READ(prev, flags) & PF_KTHREAD;
		if (user_threads_only ? kthread : !kthread)
			return false;
	}
	return tk_task_wanted();
}

static __always_inline int on_switch(void *ctx, struct task_struct *prev,
				     struct task_struct *next)
{
	struct offcpu_start s = {}, *sp;
	u64 now = bpf_ktime_get_ns(), delta;
	u32 tid = BPF_CORE_READ(prev, pid);
	long st;

	/* Entries as in tk_offcpu.bpf.h. */
	if (!tid)
		goto next;  /* the idle task: its "off CPU" time is busy time */
	st = tk_task_state(prev);
	if (!tk_offcpu_dead(&start, tid, st) && prev_wanted(prev, st)) {
		tk_stack_key_fill(ctx, &s.key, 0);
		s.key.pid = (u32)tk_pid_tgid();   /* shown: the tool's namespace's */
		/* The stack copy (--unwind) is of the task blocking now: at
		 * its switch back in another task is current. Only a key not
		 * seen before copies: the key holds the thread's sp. */
		s.snapped = tk_stack_snap_keep(&s.key);
		s.ts = now;
		tk_offcpu_start(&start, tid, &s);
	}
next:

	tid = BPF_CORE_READ(next, pid);
	sp = bpf_map_lookup_elem(&start, &tid);
	if (!sp)
		return 0;
	delta = (now - sp->ts) / 1000;
	if (now > sp->ts && delta >= min_block_us && delta <= max_block_us)
		tk_stack_add(ctx, &sp->key, delta, next, false);
	else if (sp->snapped)
		/* A copy kept for a block not counted (-m, -M): no count
		 * will need it (another block of the key would have found
		 * it kept, and its thread is this one). */
		bpf_map_delete_elem(&tk_stack_snaps, &sp->key);
	bpf_map_delete_elem(&start, &tid);
	return 0;
}

/* Arguments 0-2 are the same on every kernel (5.18 appended prev_state,
 * which is prev->__state as read by __schedule: read it from the task on
 * every kernel). */
SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_switch_tp_btf, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return on_switch(ctx, prev, next);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(offcpu_switch_raw_tp, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return on_switch(ctx, prev, next);
}

char LICENSE[] SEC("license") = "GPL";
