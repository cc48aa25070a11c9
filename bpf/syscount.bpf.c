// SPDX-License-Identifier: GPL-2.0
/* syscount: count syscalls per syscall or per process, with errors and,
 * with -L, the time spent in them.
 *
 * Counting attaches sys_exit only: it carries the syscall id (in pt_regs)
 * and the return value. A run with no filter and no option uses count_*:
 * a few loads and two plain adds to a per-CPU array slot, no hash, no
 * atomics, no rodata (the verifier drops the branches on rodata, not the
 * loads that feed them, and those cost ~3 ns per syscall). Other runs use
 * sys_exit_*, whose unused options the verifier removes. -P counts in a
 * per-CPU hash keyed by tgid, --print-cgroup in the same hash with the
 * cgroup id in the key (by process or by syscall). -L attaches sys_enter
 * too and keeps the start time in task storage (tp_btf), or in an LRU
 * hash keyed by tid. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "syscount.h"
#include "tk_cgroup.bpf.h"
#include "tk_loss.bpf.h"
#include "tk_filter.bpf.h"

const volatile bool by_process = false;
const volatile bool latency = false;
const volatile bool failures_only = false;
const volatile int filter_errno = 0;   /* positive errno, 0: any */
/* --syscall: only the numbers whose bit is set (slots below
 * SYSCOUNT_NONE); a bitmap in rodata, no map lookup per syscall. */
const volatile bool filter_syscalls = false;
const volatile unsigned long long syscall_set[SYSCOUNT_SLOTS / 64] = {};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SYSCOUNT_SLOTS);
	__type(key, u32);
	__type(value, struct syscount_val);
} by_nr SEC(".maps");

/* -P and --print-cgroup: keys that an array cannot index. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, SYSCOUNT_MAX_KEYS);
	__type(key, struct syscount_key);
	__type(value, struct syscount_proc_val);
} by_key SEC(".maps");

/* -L start times; userspace creates only the one the chosen method uses. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, u64);
} start_task SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);  /* exit() never returns */
	__uint(max_entries, SYSCOUNT_MAX_THREADS);
	__type(key, u32);   /* tid */
	__type(value, u64);
} start_tid SEC(".maps");

#if defined(__TARGET_ARCH_arm64)
#define REGS_NR(regs) ((regs)->syscallno)
#define REGS_NR_READ(regs) BPF_CORE_READ(regs, syscallno)
#else
#define REGS_NR(regs) ((regs)->orig_ax)
#define REGS_NR_READ(regs) BPF_CORE_READ(regs, orig_ax)
#endif

static __always_inline u64 is_err(long ret)
{
	return (unsigned long)ret >= (unsigned long)-4095;
}

static __always_inline u32 slot(u64 nr)
{
	if (nr < SYSCOUNT_NONE)
		return nr;
	return nr == (u64)-1 ? SYSCOUNT_NONE : SYSCOUNT_OTHER;
}

static __always_inline bool syscall_wanted(u64 nr)
{
	u32 s;

	if (!filter_syscalls)
		return true;
	s = slot(nr);
	if (s >= SYSCOUNT_NONE)
		return false;
	return syscall_set[s / 64] & (1ULL << (s % 64));
}

/* The default run: by syscall, everything, no rodata. */
static __always_inline void count_nr(u64 nr, long ret)
{
	u32 key = slot(nr);
	struct syscount_val *v = bpf_map_lookup_elem(&by_nr, &key);

	if (v) {
		v->count++;   /* per-CPU: no atomics */
		v->errors += is_err(ret);
	}
}

SEC("tp_btf/sys_exit")
int BPF_PROG(count_tp_btf, struct pt_regs *regs, long ret)
{
	count_nr(REGS_NR(regs), ret);
	return 0;
}

SEC("raw_tp/sys_exit")
int BPF_PROG(count_raw_tp, struct pt_regs *regs, long ret)
{
	count_nr(REGS_NR_READ(regs), ret);
	return 0;
}

SEC("tracepoint/raw_syscalls/sys_exit")
int count_tp(struct trace_event_raw_sys_exit *ctx)
{
	count_nr(ctx->id, ctx->ret);
	return 0;
}

/* Every other run: filters, options, -P, -L. */
static __always_inline void account(u64 nr, long ret, u64 ns)
{
	u64 err = is_err(ret);
	struct syscount_val *v;

	if (failures_only && !err)
		return;
	if (filter_errno && ret != -filter_errno)
		return;
	if (!syscall_wanted(nr))
		return;
	if (by_process || tk_filter.cgroup_ids) {
		struct syscount_key key = {
			.cgroup_id = tk_cgroup_id(),
			.id = by_process ? tk_pid_tgid() >> 32 : slot(nr),
		};
		struct syscount_proc_val *pv, init = {};

		pv = bpf_map_lookup_elem(&by_key, &key);
		if (!pv) {
			if (by_process)
				bpf_get_current_comm(init.comm, sizeof(init.comm));
			pv = tk_lookup_or_init(&by_key, &key, &init);
			if (!pv)
				return;
		}
		v = &pv->v;
	} else {
		u32 key = slot(nr);

		v = bpf_map_lookup_elem(&by_nr, &key);
		if (!v)
			return;
	}
	v->count++;
	v->errors += err;
	if (latency)
		v->total_ns += ns;
}

/* -L: nanoseconds since the current thread entered its syscall, with the
 * start cleared; 0 when its entry was not seen (it began before tracing,
 * or sys_enter filtered the task out). */
static __always_inline u64 elapsed(u64 *ts)
{
	u64 t;

	if (!ts || !*ts)
		return 0;
	t = *ts;
	*ts = 0;
	return bpf_ktime_get_ns() - t;
}

static __always_inline u64 *tid_start(void)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();

	return bpf_map_lookup_elem(&start_tid, &tid);
}

/* tp_btf: pt_regs is read directly, start times live in task storage. */
SEC("tp_btf/sys_enter")
int BPF_PROG(sys_enter_tp_btf, struct pt_regs *regs, long id)
{
	u64 *ts;

	if (!syscall_wanted(id) || !tk_task_wanted())
		return 0;
	ts = bpf_task_storage_get(&start_task, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (ts)
		*ts = bpf_ktime_get_ns();
	else
		tk_count_loss(TK_LOSS_MAP_FULL);
	return 0;
}

/* In each sys_exit: with -L, a known start time implies that sys_enter
 * passed the task filter. */
SEC("tp_btf/sys_exit")
int BPF_PROG(sys_exit_tp_btf, struct pt_regs *regs, long ret)
{
	u64 ns = 0;

	if (latency) {
		ns = elapsed(bpf_task_storage_get(&start_task,
				bpf_get_current_task_btf(), 0, 0));
		if (!ns)
			return 0;
	} else if (!tk_task_wanted()) {
		return 0;
	}
	account(REGS_NR(regs), ret, ns);
	return 0;
}

/* raw_tp and classic tracepoints: start times in a hash keyed by tid. */
static __always_inline int enter_tid(long id)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	u64 ts;

	if (!syscall_wanted(id) || !tk_task_wanted())
		return 0;
	ts = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&start_tid, &tid, &ts, BPF_ANY))
		tk_count_loss(TK_LOSS_MAP_FULL);
	return 0;
}

SEC("raw_tp/sys_enter")
int BPF_PROG(sys_enter_raw_tp, struct pt_regs *regs, long id)
{
	return enter_tid(id);
}

SEC("raw_tp/sys_exit")
int BPF_PROG(sys_exit_raw_tp, struct pt_regs *regs, long ret)
{
	u64 ns = 0;

	if (latency) {
		ns = elapsed(tid_start());
		if (!ns)
			return 0;
	} else if (!tk_task_wanted()) {
		return 0;
	}
	account(REGS_NR_READ(regs), ret, ns);
	return 0;
}

SEC("tracepoint/raw_syscalls/sys_enter")
int sys_enter_tp(struct trace_event_raw_sys_enter *ctx)
{
	return enter_tid(ctx->id);
}

SEC("tracepoint/raw_syscalls/sys_exit")
int sys_exit_tp(struct trace_event_raw_sys_exit *ctx)
{
	u64 ns = 0;

	if (latency) {
		ns = elapsed(tid_start());
		if (!ns)
			return 0;
	} else if (!tk_task_wanted()) {
		return 0;
	}
	account(ctx->id, ctx->ret, ns);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
