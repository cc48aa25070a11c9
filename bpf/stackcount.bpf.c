// SPDX-License-Identifier: GPL-2.0
/* stackcount: count the stacks that reach one event, a tracepoint, a
 * kernel function or a user function, or the functions a pattern
 * matches, as bcc's stackcount.
 *
 * One probe, "probe", written once per attach method; userspace points
 * it at the event given on the command line (tk_set_target_tp or
 * tk_set_target), and the event's kind picks the chain: tracepoints
 * probe_tp_btf -> probe_raw_tp -> probe_tp, kernel functions
 * probe_fentry -> probe_kprobe, user functions probe_uprobe; several
 * functions (tk_set_target_multi) probe_kprobe_multi -> probe_kprobe or
 * probe_uprobe_multi -> probe_uprobe. Each counts
 * one call of the current task's stacks (tk_stack.bpf.h). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "tk_loss.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_stack.bpf.h"

/* -c: only events on this CPU; -1: any. */
const volatile int target_cpu = -1;

static __always_inline int count(void *ctx)
{
	struct tk_stack_key key = {};

	if (target_cpu >= 0 && bpf_get_smp_processor_id() != (u32)target_cpu)
		return 0;
	if (!tk_task_wanted())
		return 0;
	tk_stack_key_fill(ctx, &key, 0);
	tk_stack_add(ctx, &key, 1, (struct task_struct *)bpf_get_current_task(), true);
	return 0;
}

SEC("tp_btf")
int probe_tp_btf(void *ctx)
{
	return count(ctx);
}

SEC("raw_tp")
int probe_raw_tp(void *ctx)
{
	return count(ctx);
}

SEC("tp")
int probe_tp(void *ctx)
{
	return count(ctx);
}

SEC("fentry")
int probe_fentry(void *ctx)
{
	return count(ctx);
}

SEC("kprobe")
int probe_kprobe(struct pt_regs *ctx)
{
	return count(ctx);
}

SEC("kprobe.multi")
int probe_kprobe_multi(struct pt_regs *ctx)
{
	return count(ctx);
}

SEC("uprobe")
int probe_uprobe(struct pt_regs *ctx)
{
	return count(ctx);
}

/* Loaded as uprobe.multi by libtrace (libbpf 1.1 lacks the section). */
SEC("uprobe")
int probe_uprobe_multi(struct pt_regs *ctx)
{
	return count(ctx);
}

char LICENSE[] SEC("license") = "GPL";
