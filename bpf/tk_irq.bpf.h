/* hardirqs and softirqs: time (or count) interrupt handlers by the
 * tracepoints at their start and end, per CPU.
 *
 * Neither a hard interrupt handler nor a softirq is interrupted by
 * another of its kind on its CPU (hard interrupt handlers run with
 * interrupts off; a softirq that a hard interrupt interrupts is not
 * re-entered), so one start time per CPU is enough. */
#ifndef TK_IRQ_BPF_H
#define TK_IRQ_BPF_H

#include "tk_irq.h"
#include "tk_bits.bpf.h"
#include "tk_loss.bpf.h"

const volatile int targ_cpu = -1;     /* -c: only this CPU */
const volatile bool count_only = false;  /* -C: runs, not time */
const volatile bool dist = false;     /* -d: histograms */
const volatile bool nanos = false;    /* -N: nsecs buckets, else usecs */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);  /* when this CPU's handler started (ns); 0: not seen */
} irq_start SEC(".maps");

static __always_inline bool tk_irq_cpu_wanted(void)
{
	return targ_cpu < 0 || bpf_get_smp_processor_id() == (u32)targ_cpu;
}

/* A handler starts on this CPU. */
static __always_inline void tk_irq_enter(void)
{
	u32 zero = 0;
	u64 *ts = bpf_map_lookup_elem(&irq_start, &zero);

	if (ts)
		*ts = bpf_ktime_get_ns();
}

/* A handler ends on this CPU: how long it ran, and its start forgotten;
 * 0 when its start was not seen (it began before the tool). */
static __always_inline u64 tk_irq_leave(void)
{
	u32 zero = 0;
	u64 *ts = bpf_map_lookup_elem(&irq_start, &zero), then;

	if (!ts || !*ts)
		return 0;
	then = *ts;
	*ts = 0;
	return bpf_ktime_get_ns() - then;
}

/* Count a run of the handler whose totals are v (NULL: not counted), of
 * ns nanoseconds (ignored with -C). */
static __always_inline void tk_irq_add(struct tk_irq_val *v, u64 ns)
{
	u64 slot;

	if (!v)
		return;
	v->count++;   /* per-CPU: no atomics needed */
	if (count_only)
		return;
	v->total_ns += ns;
	if (!dist)
		return;
	/* usecs: 1000 is in [2^9, 2^10) */
	slot = nanos ? tk_log2_slot(ns) : tk_log2_div(ns, 1000, 9);
	tk_bound(slot, TK_IRQ_SLOTS - 1);
	v->slots[slot]++;
}

#endif
