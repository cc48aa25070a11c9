// SPDX-License-Identifier: GPL-2.0
/* hardirqs: time (or count) hard interrupt handlers per action, by the
 * tracepoints irq:irq_handler_entry and irq:irq_handler_exit, which give
 * the struct irqaction whose name bcc shows. Every run is counted, also
 * one that returned IRQ_NONE (a shared line's other handlers): it ran
 * and took the time.
 *
 * The totals are keyed by the action's address, not by its name as
 * bcc's and libbpf-tools' are: a run then costs a hash of 8 bytes, where
 * a key by name costs a copy of the string out of the kernel and a hash
 * of 32 bytes (on an O_DIRECT read's virtio interrupts, 0.8 of the BPF
 * time per interrupt). The name is read once per action and CPU, when
 * its totals are made, into irq_names; userspace shows it, and adds up
 * actions of one name as bcc does. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "tk_irq.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 256);
	__type(key, u64);    /* the struct irqaction's address */
	__type(value, struct tk_irq_val);
} irqs SEC(".maps");

/* Each action's name (irqaction.name, cut to TK_IRQ_NAME_LEN as bcc
 * cuts it), by its address. LRU: the names of actions long gone (a
 * device removed) make room for new ones. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, u64);
	__type(value, char[TK_IRQ_NAME_LEN]);
} irq_names SEC(".maps");

static struct tk_irq_val zero;

/* Not attached with -C, which counts at the end. */
static __always_inline int on_entry(void)
{
	if (tk_irq_cpu_wanted())
		tk_irq_enter();
	return 0;
}

/* The totals of action on this CPU, made (and its name kept) the first
 * time; NULL when the map is full (a counted loss). Userspace deletes
 * the totals of an action idle for an interval, so the name is read
 * again, and replaced (an action freed and another made at its address
 * is named anew), whenever they are made again. */
static __always_inline struct tk_irq_val *action_totals(struct irqaction *action)
{
	char name[TK_IRQ_NAME_LEN] = {};
	u64 key = (u64)action;
	struct tk_irq_val *v = bpf_map_lookup_elem(&irqs, &key);

	if (v)
		return v;
	bpf_probe_read_kernel_str(name, sizeof(name), BPF_CORE_READ(action, name));
	bpf_map_update_elem(&irq_names, &key, name, BPF_ANY);
	return tk_lookup_or_init(&irqs, &key, &zero);
}

static __always_inline int on_exit(struct irqaction *action)
{
	u64 ns = 0;

	if (!tk_irq_cpu_wanted())
		return 0;
	if (!count_only) {
		ns = tk_irq_leave();
		if (!ns)
			return 0;
	}
	tk_irq_add(action_totals(action), ns);
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
