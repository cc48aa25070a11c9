// SPDX-License-Identifier: GPL-2.0
/* threadsnoop: pthread_create() in the C library, by a uprobe at its
 * entry (the start routine, argument 3, and the time) and a uretprobe
 * at its return (its result), as bcc's entry probe with the result and
 * the new thread's id added: the clone() the call makes fires
 * sched:sched_process_fork in the creating thread, which fills in the
 * child's id while the call's entry is pending. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "threadsnoop.h"
#include "tk_cgroup.bpf.h"
#include "tk_emit.bpf.h"
#include "tk_filter.bpf.h"

struct pending {
	u64 ts;
	u64 start;
	int new_tid;
};

#define TK_PENDING_VALUE struct pending
#include "tk_pending.bpf.h"

SEC("uprobe")
int BPF_KPROBE(create_entry_uprobe, void *thread, void *attr, void *start)
{
	struct pending p = { .ts = bpf_ktime_get_ns(), .start = (u64)start };

	if (tk_task_wanted())
		tk_pending_put((u32)bpf_get_current_pid_tgid(), &p);
	return 0;
}

/* A clone() inside a pending pthread_create(): its thread. */
static __always_inline void forked(int child)
{
	struct pending *p = tk_pending_get((u32)bpf_get_current_pid_tgid());

	if (p)
		p->new_tid = child;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(fork_tp_btf, struct task_struct *parent, struct task_struct *child)
{
	forked(tk_task_tid(child));
	return 0;
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(fork_raw_tp, struct task_struct *parent, struct task_struct *child)
{
	forked(tk_task_tid(child));
	return 0;
}

/* The classic record's child_pid is the global id. */
SEC("tracepoint/sched/sched_process_fork")
int fork_tp(struct trace_event_raw_sched_process_fork *ctx)
{
	forked(ctx->child_pid);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(create_exit_uretprobe, int ret)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct pending *p = tk_pending_get(tid);
	struct thread_event e = {};

	if (!p)
		return 0;
	e.ts_ns = p->ts;
	e.start = p->start;
	e.new_tid = p->new_tid;
	tk_pending_clear(tid, p);
	TK_EVENT_SET_CURRENT(&e);
	e.ret = ret;

	tk_emit(ctx, &e, sizeof(e));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
