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
#define TK_BLOCK_STAMPS /* without one, where the kernel has atomics */
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

/* The one histogram without -D or -F: per CPU, so no atomic adds;
 * userspace sums the CPUs. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct biolat_hist);
} hist_total SEC(".maps");

static struct biolat_hist zero_hist;

/* The bucket of ns in usecs or msecs, without a division (a fifth of
 * this tool's BPF time per request, bench/RESULTS.md): 1000 is in
 * [2^9, 2^10), 1000000 in [2^19, 2^20). */
static __always_inline u64 unit_slot(u64 ns)
{
	return millis ? tk_log2_div(ns, 1000000, 19) : tk_log2_div(ns, 1000, 9);
}

/* Count one I/O of ns latency and len bytes. */
static __always_inline void record(u32 dev, u32 flags, u64 ns, u32 len)
{
	struct biolat_key key = {};
	struct biolat_hist *h;
	u32 zero = 0;
	u64 slot = unit_slot(ns);

	tk_bound(slot, BIOLAT_SLOTS - 1);
	if (!per_disk && !per_flags) {
		h = bpf_map_lookup_elem(&hist_total, &zero);
		if (!h)
			return;
		h->slots[slot]++;
		h->count++;
		h->sum_ns += ns;
		if (count_bytes)
			h->bytes += len;
		return;
	}
	if (per_disk)
		key.dev = dev;
	if (per_flags)
		key.flags = flags;
	h = tk_lookup_or_init(&hists, &key, &zero_hist);
	if (!h)
		return;
	__sync_fetch_and_add(&h->slots[slot], 1);
	__sync_fetch_and_add(&h->count, 1);
	__sync_fetch_and_add(&h->sum_ns, ns);
	if (count_bytes)
		__sync_fetch_and_add(&h->bytes, len);
}

/* The latency in ns from issue (-Q: from the request's making, where
 * the kernel stamped it) to now; -1 if the clock went back. */
static __always_inline s64 latency(u64 now, u64 issue_ns, u64 queued_ns)
{
	u64 from = queued && queued_ns && queued_ns <= issue_ns ? queued_ns : issue_ns;

	if (now < from)
		return -1;
	return now - from;
}

/* Completion, after an issue that kept the request's state
 * (tk_block_issue_keep: a task filter, or no atomics). */
static __always_inline int complete(void *ctx, struct request *rq, int error)
{
	struct tk_bio_start s;
	s64 delta;

	if (!tk_block_complete_take(rq, &s))
		return 0;
	delta = latency(bpf_ktime_get_ns(), s.issue_ns, s.queued_ns);
	if (delta >= 0)
		record(s.dev, s.flags, delta, s.len);
	return 0;
}

/* Completion, after an issue that kept only its time (TK_BLOCK_STAMPS),
 * or left it to the kernel's stamp:
 * the disk, flags and queue time are read now, from the request. */
static __always_inline int complete_stamped(void *ctx, struct request *rq,
					    unsigned int nr_bytes)
{
	u64 issue_ns, now, queued_ns = 0;
	u32 dev = 0;
	s64 delta;

	if (!tk_block_kernel_stamped(rq, &issue_ns) &&
	    !tk_block_stamp_take((u64)rq, &issue_ns))
		return 0;
	now = bpf_ktime_get_ns();
	if (tk_block_dev || per_disk) {
		dev = tk_rq_dev(rq);
		if (tk_block_dev && dev != tk_block_dev)
			return 0;
	}
	if (queued)
		queued_ns = BPF_CORE_READ(rq, start_time_ns);
	delta = latency(now, issue_ns, queued_ns);
	if (delta >= 0)
		record(dev, per_flags ? tk_rq_flags(rq) : 0, delta, nr_bytes);
	return 0;
}

TK_BLOCK_ISSUE_PROGS(tk_block_issue_keep)
TK_BLOCK_COMPLETE_PROGS(complete)
TK_BLOCK_REQUEUE_PROGS
TK_BLOCK_STAMP_PROGS(complete_stamped)

char LICENSE[] SEC("license") = "GPL";
