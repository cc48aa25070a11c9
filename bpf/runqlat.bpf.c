// SPDX-License-Identifier: GPL-2.0
/* runqlat: run queue latency, the time from a task becoming runnable
 * (woken, or preempted while still runnable) to it running on a CPU.
 *
 * Each probe is written twice, tp_btf and raw_tp, over one body that
 * reads kernel structs with BPF_CORE_READ so that it works for both.
 *
 * Filters -p and --tid are checked on the task itself. Filters that can
 * only look at the current task (-u, -c, -n) judge a task when it is
 * switched out, the one scheduler event where it is current: a wanted
 * task that blocks leaves a mark (start 0) that its wakeup fills in. A
 * new task, which never ran, is judged by its parent. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "runqlat.h"
#include "tk_task.bpf.h"
#include "tk_bits.bpf.h"
#include "tk_cgroup.bpf.h"
#include "tk_loss.bpf.h"
#include "tk_filter.bpf.h"

#define TASK_RUNNING 0
#define TASK_DEAD 0x80

const volatile bool per_process = false;  /* -P: a histogram per tgid */
const volatile bool per_thread = false;   /* -L: a histogram per tid */
const volatile bool per_pidns = false;    /* --pidnss: per PID namespace */
const volatile bool millis = false;       /* -m */
const volatile bool task_storage = false; /* tp_btf, on a kernel with it */

/* When each task became runnable. tp_btf keeps it in task storage
 * (Linux 5.11+): no hash insert and delete on every wakeup and switch,
 * and nothing left behind by a task that exits. raw_tp, whose task
 * pointers task storage does not take, and tp_btf on older kernels keep
 * it in a hash by tid. Userspace creates the one used and sets
 * task_storage; the other's code is dead to the verifier. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, u64);  /* runnable since (ns); NONE; BLOCKED */
} start_task SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, u32);    /* tid */
	__type(value, u64);  /* runnable since (ns); 0: wanted, blocked */
} start SEC(".maps");

#define START_NONE 0     /* task storage: not runnable, or not wanted */
#define START_BLOCKED 1  /* task storage: wanted, blocked (no ktime is 1) */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct runqlat_slots);
} hist_all SEC(".maps");

/* --print-cgroup (tk_filter.cgroup_ids) keys hists by cgroup too, alone
 * or with -P, -L or --pidnss. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RUNQLAT_MAX_KEYS);  /* 1 unless keyed() */
	__type(key, struct runqlat_key);
	__type(value, struct runqlat_hist);
} hists SEC(".maps");

static struct runqlat_hist zero_hist;

static __always_inline bool current_filter(void)
{
	return tk_filter.uid >= 0 || tk_filter.use_cgroup || tk_filter.comm[0] ||
	       tk_filter.ppid;
}

/* -p / --tid on a task that need not be current. */
static __always_inline bool other_wanted(struct task_struct *t, u32 tid)
{
	if (!tk_filter.tgid && !tk_filter.tid && !tk_filter.follow)
		return true;
	return tk_other_task_wanted(tk_task_tgid(t), tk_task_tid(t));
}

/* ts 0: wanted, blocked (its wakeup fills in the time). */
static __always_inline void set_start(bool btf, struct task_struct *t, u32 tid, u64 ts)
{
	u64 *v;

	if (btf && task_storage) {
		v = bpf_task_storage_get(&start_task, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (v)
			*v = ts ? ts : START_BLOCKED;
		else
			tk_count_loss(TK_LOSS_MAP_FULL);
		return;
	}
	if (bpf_map_update_elem(&start, &tid, &ts, BPF_ANY))
		tk_count_loss(TK_LOSS_MAP_FULL);
}

/* A wanted task that blocked is woken: start its time. */
static __always_inline void fill_blocked(bool btf, struct task_struct *t, u32 tid)
{
	u64 *v;

	if (btf && task_storage) {
		v = bpf_task_storage_get(&start_task, t, 0, 0);
		if (v && *v == START_BLOCKED)
			*v = bpf_ktime_get_ns();
		return;
	}
	v = bpf_map_lookup_elem(&start, &tid);
	if (v && !*v)
		*v = bpf_ktime_get_ns();
}

/* Take the task's start time (0: none, or blocked) and clear it. */
static __always_inline u64 take_start(bool btf, struct task_struct *t, u32 tid)
{
	u64 *v, then;

	if (btf && task_storage) {
		v = bpf_task_storage_get(&start_task, t, 0, 0);
		if (!v)
			return 0;
		then = *v;
		*v = START_NONE;
		return then == START_BLOCKED ? 0 : then;
	}
	v = bpf_map_lookup_elem(&start, &tid);
	if (!v)
		return 0;
	then = *v;
	bpf_map_delete_elem(&start, &tid);
	return then;
}

static __always_inline int on_wakeup(bool btf, struct task_struct *p, bool new_task)
{
	u32 tid = BPF_CORE_READ(p, pid);

	if (!tid)
		return 0;
	if (!current_filter()) {
		if (other_wanted(p, tid))
			set_start(btf, p, tid, bpf_ktime_get_ns());
	} else if (new_task) {
		if (other_wanted(p, tid) && tk_task_wanted())
			set_start(btf, p, tid, bpf_ktime_get_ns());
	} else {
		fill_blocked(btf, p, tid);
	}
	return 0;
}

/* The inode number of the task's own PID namespace (the one its pid is
 * allocated in, task_active_pid_ns): thread_pid->numbers[level].ns. */
static __always_inline u32 pidns_of(struct task_struct *t)
{
	struct pid *pid = BPF_CORE_READ(t, thread_pid);
	unsigned int level = BPF_CORE_READ(pid, level);
	struct upid up = {};

	bpf_core_read(&up, sizeof(up), &pid->numbers[level]);
	return BPF_CORE_READ(up.ns, ns.inum);
}

/* A histogram per something, in hists; else one of all tasks. */
static __always_inline bool keyed(void)
{
	return per_process || per_thread || per_pidns || tk_filter.cgroup_ids;
}

static __always_inline u32 hist_id(struct task_struct *next, u32 tid)
{
	if (per_process)
		return tk_task_tgid(next);
	if (per_thread)
		return tk_task_tid(next);
	if (per_pidns)
		return pidns_of(next);
	return 0;
}

static __always_inline void count(struct task_struct *next, u32 tid, u64 delta)
{
	struct runqlat_slots *all;
	struct runqlat_key key = {};
	struct runqlat_hist *h;
	u32 zero = 0;
	u64 slot, ns = delta;

	delta /= millis ? 1000000 : 1000;
	slot = tk_log2_slot(delta);
	tk_bound(slot, RUNQLAT_SLOTS - 1);
	if (!keyed()) {
		all = bpf_map_lookup_elem(&hist_all, &zero);
		if (all) {  /* per-CPU: no atomics needed */
			all->slots[slot]++;
			all->sum_ns += ns;
		}
		return;
	}
	key.id = hist_id(next, tid);
	/* next is the task that waited (and is not current yet). */
	key.cgroup_id = tk_task_cgroup_id(next);
	h = tk_lookup_or_init(&hists, &key, &zero_hist);
	if (!h)
		return;
	if ((per_process || per_thread) && !h->comm[0]) {
		if (per_process)
			BPF_CORE_READ_STR_INTO(&h->comm, next, group_leader, comm);
		else
			BPF_CORE_READ_STR_INTO(&h->comm, next, comm);
	}
	__sync_fetch_and_add(&h->slots[slot], 1);
}

static __always_inline int on_switch(bool btf, bool preempt, struct task_struct *prev,
				     struct task_struct *next)
{
	u64 now = bpf_ktime_get_ns(), then;
	u32 tid = BPF_CORE_READ(prev, pid);
	long state;

	/* prev is current here; it stays on the run queue when preempted or
	 * when its state is still TASK_RUNNING. */
	if (tid && !current_filter()) {
		if ((preempt || tk_task_state(prev) == TASK_RUNNING) &&
		    other_wanted(prev, tid))
			set_start(btf, prev, tid, now);
	} else if (tid && tk_task_wanted()) {
		state = tk_task_state(prev);
		if (preempt || state == TASK_RUNNING)
			set_start(btf, prev, tid, now);
		else if (!(state & TASK_DEAD))
			set_start(btf, prev, tid, 0);
	}

	tid = BPF_CORE_READ(next, pid);
	then = take_start(btf, next, tid);
	if (then && now > then)
		count(next, tid, now - then);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(sched_wakeup_tp_btf, struct task_struct *p)
{
	return on_wakeup(true, p, false);
}

SEC("raw_tp/sched_wakeup")
int BPF_PROG(sched_wakeup_raw_tp, struct task_struct *p)
{
	return on_wakeup(false, p, false);
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(sched_wakeup_new_tp_btf, struct task_struct *p)
{
	return on_wakeup(true, p, true);
}

SEC("raw_tp/sched_wakeup_new")
int BPF_PROG(sched_wakeup_new_raw_tp, struct task_struct *p)
{
	return on_wakeup(false, p, true);
}

/* Arguments 0-2 are the same on every kernel (5.18 appended prev_state). */
SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch_tp_btf, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return on_switch(true, preempt, prev, next);
}

SEC("raw_tp/sched_switch")
int BPF_PROG(sched_switch_raw_tp, bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	return on_switch(false, preempt, prev, next);
}

char LICENSE[] SEC("license") = "GPL";
