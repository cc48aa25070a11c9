// SPDX-License-Identifier: GPL-2.0
/* The floor of bench/block_overhead.py: empty programs on the two block
 * tracepoints biolatency uses (issue and completion), attached as raw_tp
 * as tracekit's biolatency is; a tracer that attaches both pays at least
 * this. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("raw_tp/block_rq_issue")
int floor_issue(void *ctx)
{
	return 0;
}

SEC("raw_tp/block_rq_complete")
int floor_complete(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
