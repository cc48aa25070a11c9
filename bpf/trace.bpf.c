// SPDX-License-Identifier: GPL-2.0
/* trace: the generic tracer. No code is generated at run time: each
 * probe's plan (trace.h, tk_plan.h), written by userspace from the
 * probe's text and BTF, says what to read (fetches: a base, then loads
 * at offsets), what to test (the filter's bytecode) and what to send.
 *
 * A probe is a slot: for slot N, programs trace_tN_tp (a tracepoint),
 * trace_kN_fentry / _kprobe, trace_krN_fexit / _kretprobe, trace_uN_uprobe
 * and trace_urN_uretprobe, each with N and its way of reading arguments
 * built in; userspace points the one it needs at its target and turns
 * off the rest. */
#include "vmlinux.h"

#include "trace.h"
#include "tk_cgroup.bpf.h"
#include "tk_emit.bpf.h"
#include "tk_plan.bpf.h"
#include "tk_stack.bpf.h"

/* In .rodata (tk_plan.bpf.h says why). */
const volatile struct trace_probe_plan trace_plans[TRACE_SLOTS];

/* Per CPU: the fetched values, the bytecode's stack, the event. */
struct scratch {
	struct tk_plan_scratch plan;
	struct trace_hit ev;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

/* Per probe slot and CPU: the events of a tracepoint whose kernel stack
 * the kernel did not give (-EFAULT). Before Linux 6.12 the syscalls:*
 * tracepoints hand BPF the syscall's user-mode registers, so every one
 * of their events has none; trace says so at exit. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TRACE_SLOTS);
	__type(key, u32);
	__type(value, u64);
} trace_no_kstack SEC(".maps");

static __always_inline int handle(void *ctx, u32 slot, int mode)
{
	const volatile struct trace_probe_plan *p = &trace_plans[slot];
	u32 zero = 0;
	struct scratch *sc;
	struct trace_hit *ev;
	u64 id, size;
	u32 faults;
	int i;

	/* Nothing is looked up for an event the task filter or a quick
	 * filter drops. */
	if (!tk_task_wanted() || !tk_plan_quick_pass(ctx, mode, &p->code))
		return 0;
	sc = bpf_map_lookup_elem(&scratch, &zero);
	if (!sc)
		return 0;
	if (!tk_plan_eval(ctx, mode, &p->code, &sc->plan, &faults))
		return 0;
	ev = &sc->ev;
	ev->probe = slot;
	id = tk_pid_tgid();
	ev->pid = id >> 32;
	ev->tid = (u32)id;
	ev->cpu = bpf_get_smp_processor_id();
	ev->ts = bpf_ktime_get_ns();
	ev->cgroup_id = tk_cgroup_id();
	bpf_get_current_comm(ev->comm, sizeof(ev->comm));
	/* tk_stacks, else the spill map, else the frames sent on tk_events
	 * just before this event; a loss is counted (tk_stack.bpf.h). */
	ev->kstack = p->kstack ? tk_stack_id(ctx, 0) : TK_STACK_NOT_TAKEN;
	if (mode == TK_MODE_TP && ev->kstack == -14 /* EFAULT */) {
		u64 *n = bpf_map_lookup_elem(&trace_no_kstack, &slot);

		if (n)
			(*n)++;
	}
	ev->ustack = p->ustack ? tk_stack_id(ctx, BPF_F_USER_STACK) : TK_STACK_NOT_TAKEN;
	ev->faults = 0;
	for (i = 0; i < TRACE_VALUES; i++) {
		int src = p->value_src[i];
		u32 off = p->value_off[i];
		u64 v;

		if (i >= p->nvalues)
			break;
		if (off > TRACE_DATA_MAX - TK_PLAN_STR_LEN)
			break;
		if (src >= 0 && src < TK_PLAN_FETCHES && (faults >> src) & 1)
			ev->faults |= 1u << i;
		if (p->value_str[i]) {
			if (src >= 0 && src < TK_PLAN_FETCHES)
				__builtin_memcpy(ev->data + off, sc->plan.strs[src], TK_PLAN_STR_LEN);
			continue;
		}
		v = tk_plan_value(&p->code, &sc->plan, src);
		__builtin_memcpy(ev->data + off, &v, sizeof(v));
	}
	size = offsetof(struct trace_hit, data) + p->data_size;
	if (size > sizeof(*ev))
		size = sizeof(*ev);
	tk_emit(ctx, ev, size);
	return 0;
}

#define TRACE_SLOT(N) TK_PLAN_SLOT(trace, N, handle)

TRACE_SLOT(0)
TRACE_SLOT(1)
TRACE_SLOT(2)
TRACE_SLOT(3)
TRACE_SLOT(4)
TRACE_SLOT(5)
TRACE_SLOT(6)
TRACE_SLOT(7)

char LICENSE[] SEC("license") = "GPL";
