// SPDX-License-Identifier: GPL-2.0
/* bitesize: the size of each block I/O request at its issue, in a log2
 * histogram of KiB per submitting process name. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bitesize.h"
#include "tk_bits.bpf.h"
#define TK_BLOCK_WHO
#include "tk_block.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BITESIZE_MAX_KEYS);
	__type(key, struct bitesize_key);
	__type(value, struct bitesize_hist);
} hists SEC(".maps");

static struct bitesize_hist zero_hist;

static __always_inline int issue(void *ctx, struct request *rq)
{
	struct bitesize_key key = {};
	struct tk_bio_start s = {};
	struct bitesize_hist *h;
	u64 slot;

	if (!tk_block_issue_fill(rq, &s))
		return 0;
	if (s.known)
		__builtin_memcpy(key.comm, s.who.comm, sizeof(key.comm));
	else
		key.comm[0] = '?';
	h = tk_lookup_or_init(&hists, &key, &zero_hist);
	if (!h)
		return 0;
	slot = tk_log2_slot(s.len / 1024);
	tk_bound(slot, BITESIZE_SLOTS - 1);
	__sync_fetch_and_add(&h->slots[slot], 1);
	return 0;
}

TK_BLOCK_ISSUE_PROGS(issue)

char LICENSE[] SEC("license") = "GPL";
