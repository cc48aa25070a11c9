// SPDX-License-Identifier: GPL-2.0
/* drsnoop: reclaim a task does in its own allocation path, on the vmscan
 * tracepoints that bracket it: mm_vmscan_direct_reclaim_begin/end (the
 * system short of memory, bcc's drsnoop), and mm_vmscan_memcg_reclaim_*
 * and mm_vmscan_memcg_softlimit_reclaim_* (a memory cgroup at its limit
 * or memory.high, which bcc does not see). begin keeps the time and the
 * allocation's order by thread and kind (tk_pending.bpf.h); end sends
 * the latency and the pages reclaimed. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "drsnoop.h"
#include "tk_cgroup.bpf.h"
#include "tk_emit.bpf.h"
#include "tk_filter.bpf.h"

const volatile unsigned long long zone_stat_addr = 0;  /* -v: vm_zone_stat's address */

struct starts {
	u64 ts[DR_KINDS];
	int order[DR_KINDS];
};

/* By thread, in task storage where the kernel has it (it dies with the
 * thread: a thread that exits has no entry left behind). */
#define TK_PENDING_VALUE struct starts
#include "tk_pending.bpf.h"

static __always_inline void begin(u32 kind, int order)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct starts *s;

	if (kind >= DR_KINDS || !tk_task_wanted())
		return;
	s = tk_pending_get(tid);
	if (!s) {
		struct starts zero = {};

		tk_pending_put(tid, &zero);   /* a failure is a counted loss */
		s = tk_pending_get(tid);
		if (!s)
			return;
	}
	s->ts[kind] = bpf_ktime_get_ns();
	s->order[kind] = order;
}

static __always_inline void end(void *ctx, u32 kind, u64 nr_reclaimed)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct dr_event e = {};
	struct starts *s;
	long v = 0;

	if (kind >= DR_KINDS)
		return;
	s = tk_pending_get(tid);
	if (!s || !s->ts[kind])
		return;
	e.ts_ns = s->ts[kind];
	e.order = s->order[kind];
	s->ts[kind] = 0;
	if (!s->ts[DR_DIRECT] && !s->ts[DR_MEMCG] && !s->ts[DR_MEMCG_SOFTLIMIT])
		tk_pending_clear(tid, s);
	e.lat_ns = bpf_ktime_get_ns() - e.ts_ns;
	e.nr_reclaimed = nr_reclaimed;
	e.kind = kind;
	/* vm_zone_stat[NR_FREE_PAGES], the index as this kernel numbers it */
	if (zone_stat_addr &&
	    !bpf_probe_read_kernel(&v, sizeof(v), (void *)(zone_stat_addr + sizeof(long) *
			bpf_core_enum_value(enum zone_stat_item, NR_FREE_PAGES))))
		e.free_pages = v > 0 ? v : 0;
	TK_EVENT_SET_CURRENT(&e);

	tk_emit(ctx, &e, sizeof(e));
}

/* Each kind's begin (order, gfp_flags) and end (nr_reclaimed), on
 * tp_btf, raw_tp and the classic tracepoint. */
#define DR_PROBES(name, kind)                                              \
SEC("tp_btf/mm_vmscan_" #name "_begin")                                    \
int BPF_PROG(name##_begin_tp_btf, int order)                               \
{                                                                          \
	begin(kind, order);                                                \
	return 0;                                                          \
}                                                                          \
SEC("raw_tp/mm_vmscan_" #name "_begin")                                    \
int BPF_PROG(name##_begin_raw_tp, int order)                               \
{                                                                          \
	begin(kind, order);                                                \
	return 0;                                                          \
}                                                                          \
SEC("tracepoint/vmscan/mm_vmscan_" #name "_begin")                         \
int name##_begin_tp(struct trace_event_raw_mm_vmscan_direct_reclaim_begin_template *ctx) \
{                                                                          \
	begin(kind, ctx->order);                                           \
	return 0;                                                          \
}                                                                          \
SEC("tp_btf/mm_vmscan_" #name "_end")                                      \
int BPF_PROG(name##_end_tp_btf, unsigned long nr_reclaimed)                \
{                                                                          \
	end(ctx, kind, nr_reclaimed);                                      \
	return 0;                                                          \
}                                                                          \
SEC("raw_tp/mm_vmscan_" #name "_end")                                      \
int BPF_PROG(name##_end_raw_tp, unsigned long nr_reclaimed)                \
{                                                                          \
	end(ctx, kind, nr_reclaimed);                                      \
	return 0;                                                          \
}                                                                          \
SEC("tracepoint/vmscan/mm_vmscan_" #name "_end")                           \
int name##_end_tp(struct trace_event_raw_mm_vmscan_direct_reclaim_end_template *ctx) \
{                                                                          \
	end(ctx, kind, ctx->nr_reclaimed);                                 \
	return 0;                                                          \
}

DR_PROBES(direct_reclaim, DR_DIRECT)
DR_PROBES(memcg_reclaim, DR_MEMCG)
DR_PROBES(memcg_softlimit_reclaim, DR_MEMCG_SOFTLIMIT)

char LICENSE[] SEC("license") = "GPL";
