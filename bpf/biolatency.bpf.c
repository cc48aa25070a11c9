// SPDX-License-Identifier: GPL-2.0
/* biolatency: block I/O latency, from issue (-Q: from the request's
 * making) to completion, as log2 histograms: one, or one per disk (-D)
 * or per operation and flags (-F). */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "biolatency.h"
#include "tk_bits.bpf.h"
#define TK_BLOCK_WHO   /* for task filters: loaded only with one */
#include "tk_block.bpf.h"

const volatile bool queued = false;    /* -Q */
const volatile bool per_disk = false;  /* -D */
const volatile bool per_flags = false; /* -F */
const volatile bool millis = false;    /* -m */
/* tracekitd's block collector: the bytes of each histogram's I/Os too
 * (off in the tool: no atomic add it would not show). */
const volatile bool count_bytes = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BIOLAT_MAX_KEYS);
	__type(key, struct biolat_key);
	__type(value, struct biolat_hist);
} hists SEC(".maps");

static struct biolat_hist zero_hist;

static __always_inline int complete(void *ctx, struct request *rq, int error)
{
	struct biolat_key key = {};
	struct tk_bio_start s;
	struct biolat_hist *h;
	u64 now = bpf_ktime_get_ns(), from, delta, slot;

	if (!tk_block_complete_take(rq, &s))
		return 0;
	/* -Q: from when the request was made, where the kernel stamped it */
	from = queued && s.queued_ns && s.queued_ns <= s.issue_ns ? s.queued_ns
								  : s.issue_ns;
	if (now < from)
		return 0;
	delta = (now - from) / (millis ? 1000000 : 1000);
	if (per_disk)
		key.dev = s.dev;
	if (per_flags)
		key.flags = s.flags;
	h = tk_lookup_or_init(&hists, &key, &zero_hist);
	if (!h)
		return 0;
	slot = tk_log2_slot(delta);
	tk_bound(slot, BIOLAT_SLOTS - 1);
	__sync_fetch_and_add(&h->slots[slot], 1);
	__sync_fetch_and_add(&h->count, 1);
	__sync_fetch_and_add(&h->sum, delta);
	if (count_bytes)
		__sync_fetch_and_add(&h->bytes, s.len);
	return 0;
}

TK_BLOCK_ISSUE_PROGS(tk_block_issue_keep)
TK_BLOCK_COMPLETE_PROGS(complete)

char LICENSE[] SEC("license") = "GPL";
