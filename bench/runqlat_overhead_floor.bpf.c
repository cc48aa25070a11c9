// SPDX-License-Identifier: GPL-2.0
/* The floor of bench/runqlat_overhead.py: empty programs on the three
 * scheduler tracepoints runqlat uses, attached as tp_btf. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("tp_btf/sched_wakeup")
int floor_wakeup(void *ctx)
{
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int floor_wakeup_new(void *ctx)
{
	return 0;
}

SEC("tp_btf/sched_switch")
int floor_switch(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
