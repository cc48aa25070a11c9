/* The one task filter of every tracekit program. Settings live in rodata,
 * so the verifier removes the checks a run does not ask for. */
#ifndef TK_FILTER_BPF_H
#define TK_FILTER_BPF_H

#include <bpf/bpf_core_read.h>

#include "tk_shared.h"

const volatile struct tk_filter tk_filter = { .uid = -1 };

#include "tk_pidns.bpf.h"
#include "tk_follow.bpf.h"

/* The ids of -p / --tid lists; max_entries is set to the list's length
 * by libtrace (1 when there is no list: the maps are never read then). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u8);
} tk_filter_tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u8);
} tk_filter_tids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u32);
} tk_cgroup SEC(".maps");

/* Substring match of the current comm against tk_filter.comm. */
static __always_inline bool tk_comm_matches(void)
{
	char comm[TK_TASK_COMM_LEN];
	int i, j;

	bpf_get_current_comm(comm, sizeof(comm));
	for (i = 0; i < TK_TASK_COMM_LEN; i++) {
		for (j = 0; i + j < TK_TASK_COMM_LEN && j < TK_TASK_COMM_LEN; j++) {
			if (!tk_filter.comm[j])
				return true;
			if (comm[i + j] != tk_filter.comm[j])
				break;
		}
		if (!comm[i])
			break;
	}
	return false;
}

/* The process and thread filters (-p, --tid: one id or a list). */
static __always_inline bool tk_ids_wanted(u32 tgid, u32 tid)
{
	if (tk_filter.tgid == TK_FILTER_LIST) {
		if (!bpf_map_lookup_elem(&tk_filter_tgids, &tgid))
			return false;
	} else if (tk_filter.tgid && tgid != (u32)tk_filter.tgid) {
		return false;
	}
	if (tk_filter.tid == TK_FILTER_LIST) {
		if (!bpf_map_lookup_elem(&tk_filter_tids, &tid))
			return false;
	} else if (tk_filter.tid && tid != (u32)tk_filter.tid) {
		return false;
	}
	return true;
}

/* True when the current task passes every filter asked for. */
static __always_inline bool tk_task_wanted(void)
{
	if (tk_filter.follow && !tk_followed(tk_pid_tgid() >> 32))
		return false;
	if (tk_filter.tgid || tk_filter.tid) {
		u64 pid_tgid = tk_pid_tgid();

		if (!tk_ids_wanted(pid_tgid >> 32, (u32)pid_tgid))
			return false;
	}
	if (tk_filter.ppid) {
		struct task_struct *t = (void *)bpf_get_current_task();

		if (tk_task_tgid(BPF_CORE_READ(t, real_parent)) != tk_filter.ppid)
			return false;
	}
	if (tk_filter.uid >= 0 &&
	    (u32)bpf_get_current_uid_gid() != (u32)tk_filter.uid)
		return false;
	if (tk_filter.use_cgroup &&
	    !bpf_current_task_under_cgroup(&tk_cgroup, 0))
		return false;
	if (tk_filter.comm[0] && !tk_comm_matches())
		return false;
	return true;
}

/* Is any task filter asked for? (A tool that reports events no task
 * can be charged with keeps them only when none is.) */
static __always_inline bool tk_task_filtered(void)
{
	return tk_filter.follow || tk_filter.tgid || tk_filter.tid ||
	       tk_filter.ppid || tk_filter.uid >= 0 || tk_filter.use_cgroup ||
	       tk_filter.comm[0];
}

/* The same filter for a task that is not current (sched_switch, wakeups),
 * with its ids as tk_task_tgid / tk_task_tid give them. The uid, cgroup,
 * comm and parent filters need current, so they are not applied here. */
static __always_inline bool tk_other_task_wanted(u32 tgid, u32 tid)
{
	if (tk_filter.follow && !tk_followed(tgid))
		return false;
	return tk_ids_wanted(tgid, tid);
}

#endif
