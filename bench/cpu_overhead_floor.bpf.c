// SPDX-License-Identifier: GPL-2.0
/* The floors of bench/cpu_overhead.py: empty programs on the tracepoints
 * cpudist, offwaketime, hardirqs and softirqs use, attached as tp_btf. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("tp_btf/irq_handler_entry")
int floor_irq_entry(void *ctx)
{
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int floor_irq_exit(void *ctx)
{
	return 0;
}

SEC("tp_btf/softirq_entry")
int floor_softirq_entry(void *ctx)
{
	return 0;
}

SEC("tp_btf/softirq_exit")
int floor_softirq_exit(void *ctx)
{
	return 0;
}

SEC("tp_btf/sched_switch")
int floor_switch(void *ctx)
{
	return 0;
}

SEC("tp_btf/sched_waking")
int floor_waking(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
