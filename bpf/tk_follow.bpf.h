/* -- COMMAND where cgroup v2 cannot be written: the processes to trace
 * are COMMAND's, followed through fork in BPF. libtrace puts COMMAND's
 * PID in tk_follow_tgids before it runs; each fork of a followed process
 * adds the child (threads share the tgid, exec keeps it); a followed
 * process is removed when its leader is freed, so a recycled PID is not
 * traced.
 * The programs load only in that mode (libtrace turns them off else).
 * Ids are the tool's PID namespace's (tk_pidns.bpf.h), as fork() gave
 * COMMAND's to libtrace. Included by tk_filter.bpf.h. */
#ifndef TK_FOLLOW_BPF_H
#define TK_FOLLOW_BPF_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "tk_loss.bpf.h"

/* max_entries: 1 unless libtrace sizes it for following. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u8);
} tk_follow_tgids SEC(".maps");

static __always_inline bool tk_followed(u32 tgid)
{
	return bpf_map_lookup_elem(&tk_follow_tgids, &tgid) != 0;
}

static __always_inline void tk_follow_child(u32 parent_tgid, u32 child_tgid)
{
	u8 one = 1;

	if (parent_tgid == child_tgid || !tk_followed(parent_tgid))
		return;
	if (bpf_map_update_elem(&tk_follow_tgids, &child_tgid, &one, BPF_ANY))
		tk_count_loss(TK_LOSS_MAP_FULL);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(tk_follow_fork_tp_btf, struct task_struct *parent,
	     struct task_struct *child)
{
	tk_follow_child(tk_task_tgid(parent), tk_task_tgid(child));
	return 0;
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(tk_follow_fork_raw_tp, struct task_struct *parent,
	     struct task_struct *child)
{
	tk_follow_child(tk_task_tgid(parent), tk_task_tgid(child));
	return 0;
}

/* The classic tracepoint has the child's global thread id only: for a
 * new thread that is not its tgid, and adding it is harmless (the thread
 * is followed through its tgid, its parent's). It is the method of
 * kernels before 4.17, which have no PID namespace helper either: there
 * a tool in a PID namespace follows nothing. */
SEC("tracepoint/sched/sched_process_fork")
int tk_follow_fork_tp(struct trace_event_raw_sched_process_fork *ctx)
{
	tk_follow_child(tk_pid_tgid() >> 32, (u32)ctx->child_pid);
	return 0;
}

/* A followed process is dropped when its leader's task is freed
 * (sched_process_free), so that a recycled PID is not traced: only then
 * can its PID be used again. Not at its exit: the leader of a process
 * whose other threads still run stays a zombie until they end (they are
 * still COMMAND's), and a tool's own sched_process_exit program
 * (exitsnoop) must still find the process followed. The tracepoint runs
 * after an RCU grace period, in no task's context: ids from the task. */
static __always_inline void tk_follow_free(u32 tgid, u32 tid)
{
	if (tgid && tgid == tid)
		bpf_map_delete_elem(&tk_follow_tgids, &tgid);
}

SEC("tp_btf/sched_process_free")
int BPF_PROG(tk_follow_free_tp_btf, struct task_struct *p)
{
	tk_follow_free(tk_task_tgid(p), tk_task_tid(p));
	return 0;
}

SEC("raw_tp/sched_process_free")
int BPF_PROG(tk_follow_free_raw_tp, struct task_struct *p)
{
	tk_follow_free(tk_task_tgid(p), tk_task_tid(p));
	return 0;
}

/* The classic record has the global thread id only: deleting it as a
 * tgid is right for a leader and harmless for another thread (no
 * process has a thread's id as its tgid); in a PID namespace (ids differ)
 * such an entry stays, as the fork side follows nothing there anyway. */
SEC("tracepoint/sched/sched_process_free")
int tk_follow_free_tp(struct trace_event_raw_sched_process_template *ctx)
{
	tk_follow_free(ctx->pid, ctx->pid);
	return 0;
}

#endif
