/* A time per task for the scheduler tools (runqlat, cpudist, runqslower):
 * when it became runnable, or went on or off a CPU.
 *
 * tp_btf keeps it in task storage (Linux 5.11+): no hash insert and
 * delete on every wakeup and switch, and nothing left behind by a task
 * that exits. raw_tp, whose task pointers task storage does not take, and
 * tp_btf on older kernels keep it in a hash by tid. Userspace creates the
 * one used and sets tk_sched_task_storage (TK_SCHED_CHOOSE_START_MAP in
 * tk_sched.h); the other's code is dead to the verifier. The hash holds
 * 10240 tids unless userspace sets another size. */
#ifndef TK_SCHED_BPF_H
#define TK_SCHED_BPF_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "tk_filter.bpf.h"
#include "tk_loss.bpf.h"
#include "tk_task.bpf.h"

#define TK_TASK_RUNNING 0

const volatile bool tk_sched_task_storage = false;

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, u64);  /* ns; TK_START_NONE; TK_START_BLOCKED */
} start_task SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, u32);    /* tid */
	__type(value, u64);  /* ns; 0: wanted, blocked */
} start SEC(".maps");

#define TK_START_NONE 0     /* task storage: no time, or not wanted */
#define TK_START_BLOCKED 1  /* task storage: wanted, blocked (no ktime is 1) */

/* Set the task's time to ts; ts 0: wanted, blocked (tk_sched_fill_blocked
 * fills in the time). btf: the program is tp_btf (t is a trusted pointer). */
static __always_inline void tk_sched_set(bool btf, struct task_struct *t, u32 tid, u64 ts)
{
	u64 *v;

	if (btf && tk_sched_task_storage) {
		v = bpf_task_storage_get(&start_task, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (v)
			*v = ts ? ts : TK_START_BLOCKED;
		else
			tk_count_loss(TK_LOSS_MAP_FULL);
		return;
	}
	if (bpf_map_update_elem(&start, &tid, &ts, BPF_ANY))
		tk_count_loss(TK_LOSS_MAP_FULL);
}

/* A wanted task that blocked is woken: start its time now. */
static __always_inline void tk_sched_fill_blocked(bool btf, struct task_struct *t, u32 tid)
{
	u64 *v;

	if (btf && tk_sched_task_storage) {
		v = bpf_task_storage_get(&start_task, t, 0, 0);
		if (v && *v == TK_START_BLOCKED)
			*v = bpf_ktime_get_ns();
		return;
	}
	v = bpf_map_lookup_elem(&start, &tid);
	if (v && !*v)
		*v = bpf_ktime_get_ns();
}

/* Take the task's time (0: none, or blocked) and clear it. */
static __always_inline u64 tk_sched_take(bool btf, struct task_struct *t, u32 tid)
{
	u64 *v, then;

	if (btf && tk_sched_task_storage) {
		v = bpf_task_storage_get(&start_task, t, 0, 0);
		if (!v)
			return 0;
		then = *v;
		*v = TK_START_NONE;
		return then == TK_START_BLOCKED ? 0 : then;
	}
	v = bpf_map_lookup_elem(&start, &tid);
	if (!v)
		return 0;
	then = *v;
	bpf_map_delete_elem(&start, &tid);
	return then;
}

/* Filters that can only look at the current task (-u, -c, -n, --ppid):
 * the scheduler tools judge a task by them as it leaves a CPU, the one
 * switch where it is current. */
static __always_inline bool tk_sched_current_filter(void)
{
	return tk_filter.uid >= 0 || tk_filter.use_cgroup || tk_filter.comm[0] ||
	       tk_filter.ppid;
}

/* -p / --tid on a task that need not be current. */
static __always_inline bool tk_sched_other_wanted(struct task_struct *t)
{
	if (!tk_filter.tgid && !tk_filter.tid && !tk_filter.follow)
		return true;
	return tk_other_task_wanted(tk_task_tgid(t), tk_task_tid(t));
}

/* Run queue waits (runqlat, runqslower): the time from a task becoming
 * runnable (woken, or preempted while still runnable) to it running.
 * -p and --tid are checked on the task itself. With a current-task
 * filter a wanted task that blocks leaves a mark (time 0) that its wakeup
 * fills in; a new task, which never ran, is judged by its parent. */

/* sched_wakeup, sched_wakeup_new (new_task) of p. */
static __always_inline void tk_sched_runq_wakeup(bool btf, struct task_struct *p, bool new_task)
{
	u32 tid = BPF_CORE_READ(p, pid);

	if (!tid)
		return;
	if (!tk_sched_current_filter()) {
		if (tk_sched_other_wanted(p))
			tk_sched_set(btf, p, tid, bpf_ktime_get_ns());
	} else if (new_task) {
		if (tk_sched_other_wanted(p) && tk_task_wanted())
			tk_sched_set(btf, p, tid, bpf_ktime_get_ns());
	} else {
		tk_sched_fill_blocked(btf, p, tid);
	}
}

/* sched_switch at now: prev (current) waits again when preempted or still
 * TASK_RUNNING; next's wait ends. Returns when next became runnable (0:
 * not known, or not wanted). */
static __always_inline u64 tk_sched_runq_switch(bool btf, bool preempt, struct task_struct *prev,
						struct task_struct *next, u64 now)
{
	u32 tid = BPF_CORE_READ(prev, pid);
	long state;

	if (tid && !tk_sched_current_filter()) {
		if ((preempt || tk_task_state(prev) == TK_TASK_RUNNING) &&
		    tk_sched_other_wanted(prev))
			tk_sched_set(btf, prev, tid, now);
	} else if (tid && tk_task_wanted()) {
		state = tk_task_state(prev);
		if (preempt || state == TK_TASK_RUNNING)
			tk_sched_set(btf, prev, tid, now);
		else if (!(state & TK_TASK_DEAD))
			tk_sched_set(btf, prev, tid, 0);
	}
	return tk_sched_take(btf, next, BPF_CORE_READ(next, pid));
}

/* The wakeup programs of the run queue tools, tp_btf and raw_tp (needs
 * bpf_tracing.h). */
#define TK_SCHED_RUNQ_WAKEUP_PROGS()                                            \
	SEC("tp_btf/sched_wakeup")                                              \
	int BPF_PROG(sched_wakeup_tp_btf, struct task_struct *p)                \
	{                                                                       \
		tk_sched_runq_wakeup(true, p, false);                           \
		return 0;                                                       \
	}                                                                       \
	SEC("raw_tp/sched_wakeup")                                              \
	int BPF_PROG(sched_wakeup_raw_tp, struct task_struct *p)                \
	{                                                                       \
		tk_sched_runq_wakeup(false, p, false);                          \
		return 0;                                                       \
	}                                                                       \
	SEC("tp_btf/sched_wakeup_new")                                          \
	int BPF_PROG(sched_wakeup_new_tp_btf, struct task_struct *p)            \
	{                                                                       \
		tk_sched_runq_wakeup(true, p, true);                            \
		return 0;                                                       \
	}                                                                       \
	SEC("raw_tp/sched_wakeup_new")                                          \
	int BPF_PROG(sched_wakeup_new_raw_tp, struct task_struct *p)            \
	{                                                                       \
		tk_sched_runq_wakeup(false, p, true);                           \
		return 0;                                                       \
	}

#endif
