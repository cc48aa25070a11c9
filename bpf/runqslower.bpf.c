// SPDX-License-Identifier: GPL-2.0
/* runqslower: a task's wait on the run queue, from becoming runnable
 * (woken, or preempted while still runnable) to running, when longer than
 * min_lat_ns; with the task it took the CPU from (prev at sched_switch).
 * The waits and the task filters are tk_sched.bpf.h's (as runqlat). */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "runqslower.h"
#include "tk_emit.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_sched.bpf.h"

/* Report a wait of at least this: (min_us + 1) us, as bcc reports waits
 * whose whole microseconds exceed min_us; 0: every wait. */
const volatile __u64 min_lat_ns = 10001000;

static __always_inline int on_switch(void *ctx, bool btf, bool preempt, struct task_struct *prev,
				     struct task_struct *next)
{
	u64 now = bpf_ktime_get_ns();
	u64 then = tk_sched_runq_switch(btf, preempt, prev, next, now);
	struct runqslower_event e = {};

	if (!then || now < then || now - then < min_lat_ns)
		return 0;
	e.lat_ns = now - then;
	e.pid = tk_task_tgid(next);
	e.tid = tk_task_tid(next);
	e.prev_pid = tk_task_tgid(prev);
	e.prev_tid = tk_task_tid(prev);
	BPF_CORE_READ_STR_INTO(&e.comm, next, comm);
	BPF_CORE_READ_STR_INTO(&e.prev_comm, prev, comm);
	tk_emit(ctx, &e, sizeof(e));
	return 0;
}

TK_SCHED_RUNQ_WAKEUP_PROGS()

/* Arguments 0-2 are the same on every kernel (5.18 appended prev_state). */
SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch_tp_btf, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return on_switch(ctx, true, preempt, prev, next);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(sched_switch_raw_tp, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return on_switch(ctx, false, preempt, prev, next);
}

char LICENSE[] SEC("license") = "GPL";
