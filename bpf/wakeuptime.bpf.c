// SPDX-License-Identifier: GPL-2.0
/* wakeuptime: time threads spend asleep, by the stacks of the threads
 * that woke them.
 *
 * sched_switch, prev (current) leaving the CPU asleep (not preempted,
 * not runnable: such a thread is woken by no one): a wanted thread's time and comm
 * go in its start entry. sched_waking, in the waker's context: the time
 * since, in microseconds, is added to the count of (the current task's
 * stacks and comm, the sleeper's comm), and the entry removed. As bcc's
 * wakeuptime, the time ends at the wakeup, not when the thread runs. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "wakeuptime.h"
#include "tk_task.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_stack.bpf.h"
#include "tk_wake.bpf.h"

#define TASK_RUNNING 0

const volatile bool user_threads_only = false;    /* -u */
const volatile bool kernel_threads_only = false;  /* -k */
const volatile __u64 min_block_us = 1;            /* -m */
const volatile __u64 max_block_us = (__u64)-1;    /* -M */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, WAKEUP_MAX_THREADS);
	__type(key, u32);                   /* tid */
	__type(value, struct wakeup_start);
} start SEC(".maps");

/* Microseconds asleep by (waker, target comm); sized by --max-stacks. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct wakeup_key);
	__type(value, u64);
} wake_counts SEC(".maps");

static __always_inline int on_switch(bool preempt, struct task_struct *prev)
{
	struct wakeup_start s = {};
	u32 tid = BPF_CORE_READ(prev, pid);
	long st;

	if (!tid)
		return 0;  /* the idle task */
	st = tk_task_state(prev);
	if (st & TK_TASK_DEAD) {
		bpf_map_delete_elem(&start, &tid);
		return 0;
	}
	if (preempt || st == TASK_RUNNING || !tk_wake_kind_wanted(prev, user_threads_only, kernel_threads_only) ||
	    !tk_task_wanted())
		return 0;
	s.ts = bpf_ktime_get_ns();
	bpf_get_current_comm(s.comm, sizeof(s.comm));
	if (bpf_map_update_elem(&start, &tid, &s, BPF_ANY))
		tk_count_loss(TK_LOSS_MAP_FULL);
	return 0;
}

static __always_inline int on_waking(void *ctx, struct task_struct *p)
{
	u32 tid = BPF_CORE_READ(p, pid);
	struct wakeup_start *sp = bpf_map_lookup_elem(&start, &tid);
	struct wakeup_key key = {};
	u64 now, us;

	if (!sp)
		return 0;
	now = bpf_ktime_get_ns();
	us = now > sp->ts ? (now - sp->ts) / 1000 : 0;
	__builtin_memcpy(key.target, sp->comm, sizeof(key.target));
	bpf_map_delete_elem(&start, &tid);
	if (us < min_block_us || us > max_block_us)
		return 0;
	tk_wake_side_fill(ctx, &key.waker);
	key.waker.pid = 0;  /* by comm, as bcc */
	if (tk_wake_count(&wake_counts, &key, us))
		tk_wake_side_note(ctx, &key.waker);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(wakeup_switch_tp_btf, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return on_switch(preempt, prev);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(wakeup_switch_raw_tp, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return on_switch(preempt, prev);
}

SEC("tp_btf/sched_waking")
int BPF_PROG(wakeup_waking_tp_btf, struct task_struct *p)
{
	return on_waking(ctx, p);
}

SEC("raw_tp/sched_waking")
int BPF_PROG(wakeup_waking_raw_tp, struct task_struct *p)
{
	return on_waking(ctx, p);
}

char LICENSE[] SEC("license") = "GPL";
