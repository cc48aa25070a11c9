// SPDX-License-Identifier: GPL-2.0
/* biostacks: block I/O latency, from the request's making (its kernel
 * stamp; else its issue) to completion, as log2 histograms per
 * submitting process, kernel stack (taken at block_getrq) and disk. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "biostacks.h"
#include "tk_bits.bpf.h"
#define TK_BLOCK_WHO
#define TK_BLOCK_STACKS
#include "tk_block.bpf.h"

const volatile bool millis = false;    /* -m */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BIOSTACKS_MAX_KEYS);
	__type(key, struct biostacks_key);
	__type(value, struct biostacks_hist);
} hists SEC(".maps");

static struct biostacks_hist zero_hist;

static __always_inline int complete(void *ctx, struct request *rq, int error)
{
	struct biostacks_key key = { .kstack = -1 };
	struct biostacks_hist *h;
	struct tk_bio_start s;
	u64 now = bpf_ktime_get_ns(), from, slot;

	if (!tk_block_complete_take(rq, &s))
		return 0;
	from = s.queued_ns && s.queued_ns <= s.issue_ns ? s.queued_ns : s.issue_ns;
	if (now < from)
		return 0;
	if (s.known) {
		key.pid = s.who.pid;
		key.kstack = s.who.kstack;
		__builtin_memcpy(key.comm, s.who.comm, sizeof(key.comm));
	} else {
		key.comm[0] = '?';
	}
	key.dev = s.dev;
	h = tk_lookup_or_init(&hists, &key, &zero_hist);
	if (!h)
		return 0;
	slot = tk_log2_slot((now - from) / (millis ? 1000000 : 1000));
	tk_bound(slot, BIOSTACKS_SLOTS - 1);
	__sync_fetch_and_add(&h->slots[slot], 1);
	return 0;
}

TK_BLOCK_ISSUE_PROGS(tk_block_issue_keep)
TK_BLOCK_COMPLETE_PROGS(complete)
TK_BLOCK_REQUEUE_PROGS

char LICENSE[] SEC("license") = "GPL";
