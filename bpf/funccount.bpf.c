// SPDX-License-Identifier: GPL-2.0
/* funccount: count the calls of functions (kernel or user) or the hits of
 * tracepoints that a pattern matches, per probe, as bcc's funccount.
 *
 * One probe, "probe", written once per attach method; userspace points
 * it at what the pattern matched: one tracepoint (tk_set_target_tp:
 * probe_tp_btf -> probe_raw_tp -> probe_tp), several (tk_set_target_tps:
 * one probe_tp link each), kernel functions (probe_fentry ->
 * probe_kprobe, or probe_kprobe_multi -> probe_kprobe for several), user
 * functions (probe_uprobe, probe_uprobe_multi). Each hit adds one to its
 * probe's counter in a per-CPU array, indexed by the probe's number
 * (tk_probe_index.bpf.h: its BPF cookie, else a kprobe's address;
 * several tracepoints need cookies): no hash update, no event. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "tk_loss.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_probe_index.bpf.h"

/* One counter per probe (userspace sets max_entries). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} counts SEC(".maps");

/* Callers test tk_task_wanted() (-p, -- COMMAND) before they work out
 * the probe's index: a hit of another process then reads no cookie
 * (bench-trace: 20 ns of the 150 a dropped hit cost).
 * atomic: a uprobe's program runs with preemption enabled on recent
 * kernels, so another task can run it on this CPU in between; kernel
 * probes cannot be preempted on their CPU. */
static __always_inline int count(u32 probe, bool atomic)
{
	u64 *n;

	n = bpf_map_lookup_elem(&counts, &probe);
	if (!n)
		return 0;
	if (atomic)
		__sync_fetch_and_add(n, 1);
	else
		(*n)++;
	return 0;
}

SEC("tp_btf")
int probe_tp_btf(void *ctx)
{
	return tk_task_wanted() ? count(0, false) : 0;  /* one tracepoint */
}

SEC("raw_tp")
int probe_raw_tp(void *ctx)
{
	return tk_task_wanted() ? count(0, false) : 0;  /* one tracepoint */
}

/* Several classic tracepoints are told apart by cookie only: the first
 * 8 bytes of the record (its event id) hold the pt_regs pointer when a
 * BPF program runs. */
SEC("tp")
int probe_tp(void *ctx)
{
	return tk_task_wanted() ? count(tk_probe_index(ctx, 0), false) : 0;
}

SEC("fentry")
int probe_fentry(void *ctx)
{
	return tk_task_wanted() ? count(0, false) : 0;  /* one function */
}

SEC("kprobe")
int BPF_KPROBE(probe_kprobe)
{
	return tk_task_wanted() ? count(tk_probe_index(ctx, PT_REGS_IP(ctx)), false) : 0;
}

SEC("kprobe.multi")
int BPF_KPROBE(probe_kprobe_multi)
{
	return tk_task_wanted() ? count(tk_probe_index(ctx, PT_REGS_IP(ctx)), false) : 0;
}

SEC("uprobe")
int BPF_KPROBE(probe_uprobe)
{
	return tk_task_wanted() ? count(tk_probe_index(ctx, 0), true) : 0;
}

/* Loaded as uprobe.multi by libtrace (libbpf 1.1 lacks the section). */
SEC("uprobe")
int BPF_KPROBE(probe_uprobe_multi)
{
	return tk_task_wanted() ? count(tk_probe_index(ctx, 0), true) : 0;
}

char LICENSE[] SEC("license") = "GPL";
