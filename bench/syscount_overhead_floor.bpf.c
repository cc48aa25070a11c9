// SPDX-License-Identifier: GPL-2.0
/* The floor of bench/syscount_overhead.py: empty programs on sys_exit,
 * one per attach method; the loader attaches one of them. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("tp_btf/sys_exit")
int floor_tp_btf(void *ctx)
{
	return 0;
}

SEC("raw_tp/sys_exit")
int floor_raw_tp(void *ctx)
{
	return 0;
}

SEC("tracepoint/raw_syscalls/sys_exit")
int floor_tp(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
