// SPDX-License-Identifier: GPL-2.0
/* exitsnoop: exits, on the tracepoint sched:sched_process_exit, which
 * runs in the exiting thread after do_exit() took it out of its
 * process's live count (signal->live).
 *
 * A process's exit is its last thread's: the one whose exit left
 * signal->live at 0, so a process whose main thread ends first (bcc
 * and libbpf-tools report that thread's exit as the process's) is
 * reported when it really ends, with the code its last thread left,
 * which exit_group() and a fatal signal give every thread. Two threads
 * leaving at once on two CPUs can both find live at 0: the first to
 * claim the process in `reported` sends it. --per-thread reports every
 * thread's exit, with its own age. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "exitsnoop.h"
#include "tk_cgroup.bpf.h"
#include "tk_emit.bpf.h"
#include "tk_filter.bpf.h"

const volatile bool per_thread = false;   /* --per-thread */
const volatile bool failed_only = false;  /* -x */

/* A process by its signal_struct and start: the key a racing second
 * thread finds. An entry is never deleted (a late racer would send the
 * exit again); the LRU drops old ones, and a reused signal_struct comes
 * with another start time. */
struct proc_key {
	u64 signal;
	u64 start_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct proc_key);
	__type(value, u8);
} reported SEC(".maps");

static __always_inline void exit_seen(void *ctx)
{
	struct task_struct *t = (void *)bpf_get_current_task();
	struct task_struct *leader;
	struct exit_event e = {};
	struct proc_key k = {};
	u64 start;
	u8 one = 1;
	int code;

	if (!tk_task_wanted())
		return;
	code = BPF_CORE_READ(t, exit_code);
	if (failed_only && code == 0)
		return;
	if (per_thread) {
		start = BPF_CORE_READ(t, start_time);
	} else {
		if (BPF_CORE_READ(t, signal, live.counter) != 0)
			return;
		leader = BPF_CORE_READ(t, group_leader);
		start = BPF_CORE_READ(leader, start_time);
		k.signal = (u64)BPF_CORE_READ(t, signal);
		k.start_ns = start;
		if (bpf_map_update_elem(&reported, &k, &one, BPF_NOEXIST))
			return;   /* another thread's exit sent it */
		e.threads = 1;
	}
	e.age_ns = bpf_ktime_get_ns() - start;
	TK_EVENT_SET_CURRENT(&e);
	e.ppid = tk_task_tgid(BPF_CORE_READ(t, real_parent));
	e.exit_code = code;
	tk_emit(ctx, &e, sizeof(e));
}

static __always_inline int process_exit(void *ctx)
{
	exit_seen(ctx);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(exit_tp_btf)
{
	return process_exit(ctx);
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(exit_raw_tp)
{
	return process_exit(ctx);
}

SEC("tracepoint/sched/sched_process_exit")
int exit_tp(void *ctx)
{
	return process_exit(ctx);
}

char LICENSE[] SEC("license") = "GPL";
