// SPDX-License-Identifier: GPL-2.0
/* fsdist: a log2 latency histogram per file system operation (the
 * probes: tk_fsop.bpf.h), per CPU, summed by userspace. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "fsop.h"
#include "tk_bits.bpf.h"

const volatile __u64 unit_ns = 1000;   /* -m: 1000000 */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FSOP_MAX);
	__type(key, u32);
	__type(value, struct fsdist_slots);
} hists SEC(".maps");

static __always_inline void fsop_done(void *ctx, u32 op, struct dentry *de, s64 bytes,
				      u64 offset, u64 ts, u64 lat_ns)
{
	struct fsdist_slots *h = bpf_map_lookup_elem(&hists, &op);
	u64 slot;

	if (!h)
		return;
	slot = tk_log2_slot(lat_ns / unit_ns);
	tk_bound(slot, FSOP_SLOTS - 1);
	/* Per-CPU, but atomic all the same: a kprobe's or tracepoint's
	 * program may be preempted on recent kernels. */
	__sync_fetch_and_add(&h->slots[slot], 1);
	__sync_fetch_and_add(&h->sum_ns, lat_ns);
}

#include "tk_fsop.bpf.h"

char LICENSE[] SEC("license") = "GPL";
