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

#endif
