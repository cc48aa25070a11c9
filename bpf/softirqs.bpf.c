// SPDX-License-Identifier: GPL-2.0
/* softirqs: time (or count) softirqs per vector (NET_RX, TIMER, ...), by
 * the tracepoints irq:softirq_entry and irq:softirq_exit. -C counts at
 * the entry, as bcc does, and attaches nothing else. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "tk_irq.bpf.h"

/* Per vector: an array lookup, which the verifier inlines (no hash of
 * the key, no insert on a vector's first run). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TK_NR_SOFTIRQS);
	__type(key, u32);
	__type(value, struct tk_irq_val);
} irqs SEC(".maps");

/* vec's totals on this CPU. The kernel gives no vector at or above
 * NR_SOFTIRQS; one that a future kernel would add has no slot here, and
 * its runs are counted as losses (TK_LOSS_MAP_FULL: no room in the map
 * for it), reported at exit, rather than dropped silently. */
static __always_inline struct tk_irq_val *vec_val(unsigned int vec)
{
	u32 key = vec;

	if (key >= TK_NR_SOFTIRQS) {
		tk_count_loss(TK_LOSS_MAP_FULL);
		return 0;
	}
	return bpf_map_lookup_elem(&irqs, &key);
}

static __always_inline int on_entry(unsigned int vec)
{
	if (!tk_irq_cpu_wanted())
		return 0;
	if (count_only)
		tk_irq_add(vec_val(vec), 0);
	else
		tk_irq_enter();
	return 0;
}

/* Not attached with -C. */
static __always_inline int on_exit(unsigned int vec)
{
	u64 ns;

	if (!tk_irq_cpu_wanted())
		return 0;
	ns = tk_irq_leave();
	if (ns)
		tk_irq_add(vec_val(vec), ns);
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(softirq_entry_tp_btf, unsigned int vec)
{
	return on_entry(vec);
}

SEC("raw_tp/softirq_entry")
int BPF_PROG(softirq_entry_raw_tp, unsigned int vec)
{
	return on_entry(vec);
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(softirq_exit_tp_btf, unsigned int vec)
{
	return on_exit(vec);
}

SEC("raw_tp/softirq_exit")
int BPF_PROG(softirq_exit_raw_tp, unsigned int vec)
{
	return on_exit(vec);
}

char LICENSE[] SEC("license") = "GPL";
