/* -- COMMAND where cgroup v2 cannot be written: the processes to trace
 * are COMMAND's, followed through fork in BPF. libtrace puts COMMAND's
 * PID in tk_follow_tgids before it runs; each fork of a followed process
 * adds the child (threads share the tgid, exec keeps it); a followed
 * process's leader leaving removes it, so a recycled PID is not traced.
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

/* sched_process_exit runs in the exiting task: drop the process when its
 * leader leaves. */
static __always_inline void tk_follow_exit(void)
{
	u64 id = tk_pid_tgid();
	u32 tgid = id >> 32;

	if (tgid == (u32)id)
		bpf_map_delete_elem(&tk_follow_tgids, &tgid);
}

/* A tool with its own sched_process_exit program (exitsnoop) calls
 * tk_follow_exit from it, after its event: a program of this header
 * could run first and drop the process the event belongs to. */
#ifndef TK_FOLLOW_EXIT_BY_TOOL
SEC("tp_btf/sched_process_exit")
int BPF_PROG(tk_follow_exit_tp_btf)
{
	tk_follow_exit();
	return 0;
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(tk_follow_exit_raw_tp)
{
	tk_follow_exit();
	return 0;
}

SEC("tracepoint/sched/sched_process_exit")
int tk_follow_exit_tp(void *ctx)
{
	tk_follow_exit();
	return 0;
}
#endif

#endif
