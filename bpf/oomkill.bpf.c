// SPDX-License-Identifier: GPL-2.0
/* oomkill: the OOM killer's victims, on the tracepoint oom:mark_victim,
 * which fires as it marks the victim, in the task that ran it (the one
 * whose allocation failed: the trigger). bcc and libbpf-tools probe the
 * kernel function oom_kill_process instead.
 *
 * Linux 6.8 and later pass the victim's task (and uid): its process,
 * name, RSS and memory cgroup are read from it. Before, the tracepoint
 * passes the victim thread's id only: where that is the trigger itself
 * (a task that exhausted its own cgroup), they are read from current;
 * else the name is left to userspace (/proc) and the rest unknown. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "oomkill.h"
#include "tk_emit.bpf.h"
#include "tk_filter.bpf.h"

const volatile bool victim_is_task = false;  /* mark_victim(task, uid): 6.8+ */

/* mm counters (MM_FILEPAGES, MM_ANONPAGES, MM_SHMEMPAGES): an anonymous
 * enum, stable since 4.5; percpu_counters since 6.2, whose count is what
 * the kernel's own get_mm_counter reads. */
static __always_inline u64 rss_pages(struct task_struct *t)
{
	struct mm_struct *mm = BPF_CORE_READ(t, mm);
	s64 file, anon, shmem;

	if (!mm || !bpf_core_field_exists(mm->rss_stat[0].count))
		return ~0ULL;
	file = BPF_CORE_READ(mm, rss_stat[0].count);
	anon = BPF_CORE_READ(mm, rss_stat[1].count);
	shmem = BPF_CORE_READ(mm, rss_stat[3].count);
	return (file > 0 ? file : 0) + (anon > 0 ? anon : 0) + (shmem > 0 ? shmem : 0);
}

/* The victim's memory cgroup: its kernfs id and whether it is on v2. */
static __always_inline void memcg_of(struct task_struct *t, struct oom_event *e)
{
	int id = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	struct cgroup_subsys_state *css;
	struct cgroup *cg;

	if (id < 0 || id >= 12)
		return;
	css = BPF_CORE_READ(t, cgroups, subsys[id]);
	if (!css)
		return;
	cg = BPF_CORE_READ(css, cgroup);
	e->memcg_id = BPF_CORE_READ(cg, kn, id);
	e->memcg_v2 = BPF_CORE_READ(cg, root, hierarchy_id) == 0;
}

static __always_inline int marked(void *ctx, struct task_struct *victim, int victim_tid)
{
	struct task_struct *cur = (void *)bpf_get_current_task();
	struct oom_event e = {};
	u64 id;

	if (!tk_task_wanted())
		return 0;
	id = tk_pid_tgid();
	e.pid = id >> 32;
	e.tid = (u32)id;
	e.uid = (u32)bpf_get_current_uid_gid();
	bpf_get_current_comm(e.comm, sizeof(e.comm));
	e.rss_pages = ~0ULL;
	if (!victim && victim_tid == BPF_CORE_READ(cur, pid))
		victim = cur;   /* the trigger picked itself */
	if (victim) {
		e.victim_pid = tk_task_tgid(victim);
		e.victim_tid = tk_task_tid(victim);
		BPF_CORE_READ_STR_INTO(&e.victim_comm, victim, comm);
		e.rss_pages = rss_pages(victim);
		memcg_of(victim, &e);
	} else {
		e.victim_tid = victim_tid;   /* global: the tracepoint's */
	}
	tk_emit(ctx, &e, sizeof(e));
	return 0;
}

SEC("raw_tp/mark_victim")
int BPF_PROG(victim_raw_tp)
{
	if (victim_is_task)
		return marked(ctx, (struct task_struct *)ctx[0], 0);
	return marked(ctx, 0, (int)ctx[0]);
}

SEC("tracepoint/oom/mark_victim")
int victim_tp(struct trace_event_raw_mark_victim *ctx)
{
	return marked(ctx, 0, ctx->pid);
}

char LICENSE[] SEC("license") = "GPL";
