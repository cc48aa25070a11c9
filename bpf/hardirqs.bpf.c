// SPDX-License-Identifier: GPL-2.0
/* hardirqs: time (or count) hard interrupt handlers per action name, by
 * the tracepoints irq:irq_handler_entry and irq:irq_handler_exit, which
 * give the struct irqaction whose name bcc shows. Every run is counted,
 * also one that returned IRQ_NONE (a shared line's other handlers): it
 * ran and took the time. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "tk_irq.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 256);
	__type(key, char[TK_IRQ_NAME_LEN]);
	__type(value, struct tk_irq_val);
} irqs SEC(".maps");

static struct tk_irq_val zero;

/* Not attached with -C, which counts at the end. */
static __always_inline int on_entry(void)
{
	if (tk_irq_cpu_wanted())
		tk_irq_enter();
	return 0;
}

static __always_inline int on_exit(struct irqaction *action)
{
	char name[TK_IRQ_NAME_LEN] = {};
	u64 ns = 0;

	if (!tk_irq_cpu_wanted())
		return 0;
	if (!count_only) {
		ns = tk_irq_leave();
		if (!ns)
			return 0;
	}
	bpf_probe_read_kernel_str(name, sizeof(name), BPF_CORE_READ(action, name));
	tk_irq_add(tk_lookup_or_init(&irqs, name, &zero), ns);
	return 0;
}

SEC("tp_btf/irq_handler_entry")
int BPF_PROG(irq_handler_entry_tp_btf, int irq, struct irqaction *action)
{
	return on_entry();
}

SEC("raw_tp/irq_handler_entry")
int BPF_PROG(irq_handler_entry_raw_tp, int irq, struct irqaction *action)
{
	return on_entry();
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(irq_handler_exit_tp_btf, int irq, struct irqaction *action, int ret)
{
	return on_exit(action);
}

SEC("raw_tp/irq_handler_exit")
int BPF_PROG(irq_handler_exit_raw_tp, int irq, struct irqaction *action, int ret)
{
	return on_exit(action);
}

char LICENSE[] SEC("license") = "GPL";
