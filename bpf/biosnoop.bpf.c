// SPDX-License-Identifier: GPL-2.0
/* biosnoop: one event per block I/O request, sent at its completion with
 * its submitter, disk, operation, sector, size, latency from issue to
 * completion and (-Q) the time it waited before issue. The request's
 * life is tk_block.bpf.h's; this file only sends it. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "biosnoop.h"
#include "tk_emit.bpf.h"
#define TK_BLOCK_WHO
#include "tk_block.bpf.h"

const volatile bool pattern = false;   /* -P */

/* -P: where each disk's last issued I/O ended (sector). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, u32);
	__type(value, u64);
} last_end SEC(".maps");

static __always_inline unsigned int pattern_of(struct tk_bio_start *s)
{
	u64 end = s->sector + (s->len >> 9), *last;
	unsigned int p = BIO_PATTERN_RANDOM;

	last = bpf_map_lookup_elem(&last_end, &s->dev);
	if (last && *last == s->sector)
		p = BIO_PATTERN_SEQ;
	if (bpf_map_update_elem(&last_end, &s->dev, &end, BPF_ANY))
		tk_count_loss(TK_LOSS_MAP_FULL);
	return p;
}

static __always_inline int issue(void *ctx, struct request *rq)
{
	struct tk_bio_start s = {};
	u64 key = (u64)rq;

	if (!tk_block_issue_fill(rq, &s))
		return 0;
	if (pattern)
		s.pattern = pattern_of(&s);
	tk_block_start_put(key, &s);
	return 0;
}

static __always_inline int complete(void *ctx, struct request *rq, int error)
{
	struct bio_event e = {};

	if (!tk_block_complete_take(rq, &e.s))
		return 0;
	e.done_ns = bpf_ktime_get_ns();
	e.error = error;
	tk_emit(ctx, &e, sizeof(e));
	return 0;
}

TK_BLOCK_ISSUE_PROGS(issue)
TK_BLOCK_COMPLETE_PROGS(complete)
TK_BLOCK_REQUEUE_PROGS

char LICENSE[] SEC("license") = "GPL";
