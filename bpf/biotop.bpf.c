// SPDX-License-Identifier: GPL-2.0
/* biotop: block I/O counted at completion by submitting process, disk
 * and direction: requests, bytes and the sum of their latencies. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "biotop.h"
#define TK_BLOCK_WHO
#include "tk_block.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BIOTOP_MAX_KEYS);
	__type(key, struct biotop_key);
	__type(value, struct biotop_val);
} counts SEC(".maps");

static struct biotop_val zero_val;

static __always_inline int complete(void *ctx, struct request *rq, int error)
{
	struct biotop_key key = {};
	struct tk_bio_start s;
	struct biotop_val *v;
	u64 now = bpf_ktime_get_ns();

	if (!tk_block_complete_take(rq, &s))
		return 0;
	if (s.known) {
		key.pid = s.who.pid;
		__builtin_memcpy(key.comm, s.who.comm, sizeof(key.comm));
	} else {
		key.comm[0] = '?';
	}
	key.dev = s.dev;
	key.write = TK_BIO_OP(s.flags) == 1;
	v = tk_lookup_or_init(&counts, &key, &zero_val);
	if (!v)
		return 0;
	__sync_fetch_and_add(&v->bytes, s.len);
	__sync_fetch_and_add(&v->ns, now > s.issue_ns ? now - s.issue_ns : 0);
	__sync_fetch_and_add(&v->io, 1);
	return 0;
}

TK_BLOCK_ISSUE_PROGS(tk_block_issue_keep)
TK_BLOCK_COMPLETE_PROGS(complete)
TK_BLOCK_REQUEUE_PROGS

char LICENSE[] SEC("license") = "GPL";
