// SPDX-License-Identifier: GPL-2.0
/* biopattern: each completed block I/O request is sequential when it
 * starts where the disk's previous completed request ended, else random
 * (the first one seen on a disk too). Counted per disk. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "biopattern.h"
#include "tk_block.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BIOPATTERN_MAX_DISKS);
	__type(key, u32);
	__type(value, struct biopattern_counts);
} counts SEC(".maps");

/* Where each disk's last request ended (sector); kept across intervals. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BIOPATTERN_MAX_DISKS);
	__type(key, u32);
	__type(value, u64);
} last_end SEC(".maps");

static struct biopattern_counts zero_counts;

static __always_inline int complete(void *ctx, struct request *rq, int error)
{
	u32 dev = tk_rq_dev(rq), len;
	struct biopattern_counts *c;
	u64 sector, end, *last;

	if (tk_block_dev && dev != tk_block_dev)
		return 0;
	/* Before blk_update_request consumes them: the whole request. */
	sector = BPF_CORE_READ(rq, __sector);
	len = BPF_CORE_READ(rq, __data_len);
	end = sector + (len >> 9);
	c = tk_lookup_or_init(&counts, &dev, &zero_counts);
	if (!c)
		return 0;
	last = bpf_map_lookup_elem(&last_end, &dev);
	if (last && *last == sector)
		__sync_fetch_and_add(&c->sequential, 1);
	else
		__sync_fetch_and_add(&c->random, 1);
	__sync_fetch_and_add(&c->bytes, len);
	if (last)
		*last = end;
	else if (bpf_map_update_elem(&last_end, &dev, &end, BPF_ANY))
		tk_count_loss(TK_LOSS_MAP_FULL);
	return 0;
}

TK_BLOCK_COMPLETE_PROGS(complete)

char LICENSE[] SEC("license") = "GPL";
