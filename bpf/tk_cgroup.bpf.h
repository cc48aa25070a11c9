/* The cgroup v2 id of a task, for --print-cgroup; libtrace turns it into
 * the cgroup's path (tk_cgroup_path). 0 unless --print-cgroup asked for
 * it, so that a key that holds it stays what it was without. */
#ifndef TK_CGROUP_BPF_H
#define TK_CGROUP_BPF_H

#include <bpf/bpf_core_read.h>

#include "tk_filter.bpf.h"

/* The current task's. */
static __always_inline u64 tk_cgroup_id(void)
{
	return tk_filter.cgroup_ids ? bpf_get_current_cgroup_id() : 0;
}

/* Another task's (sched_switch's next, a woken task): the id of its
 * default-hierarchy cgroup's kernfs node, as bpf_get_current_cgroup_id
 * gives it for current. */
static __always_inline u64 tk_task_cgroup_id(struct task_struct *t)
{
	return tk_filter.cgroup_ids ? BPF_CORE_READ(t, cgroups, dfl_cgrp, kn, id) : 0;
}

/* The current task into an event's pid, tid, uid, cgroup_id and comm
 * members (the head most tools' events share, which libtrace's
 * tk_json_task prints): ids in the tool's PID namespace, the cgroup id
 * only with --print-cgroup. A macro: each tool's event is its own
 * struct. */
#define TK_EVENT_SET_CURRENT(e)                                           \
	do {                                                              \
		__u64 tk_id_ = tk_pid_tgid();                             \
                                                                          \
		(e)->pid = tk_id_ >> 32;                                  \
		(e)->tid = (__u32)tk_id_;                                 \
		(e)->uid = (__u32)bpf_get_current_uid_gid();              \
		(e)->cgroup_id = tk_cgroup_id();                          \
		bpf_get_current_comm((e)->comm, sizeof((e)->comm));       \
	} while (0)

#endif
