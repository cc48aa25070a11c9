/* Which of several probes of one program a hit is (tk_probe_index.h):
 * its BPF cookie where the kernel has cookies, else its key (a kprobe's
 * address) searched among the sorted keys
 * userspace set (tk_probe_index_set). The methods not chosen are dead
 * code to the verifier (read-only data), so a kernel without
 * bpf_get_attach_cookie loads the program too. */
#ifndef TK_PROBE_INDEX_BPF_H
#define TK_PROBE_INDEX_BPF_H

#include "tk_probe_index.h"

const volatile unsigned int tk_probe_by = TK_PROBE_ONE;
const volatile unsigned int tk_probe_n = 1;
const volatile unsigned long long tk_probe_keys[TK_PROBE_MAX];

/* The index of the last key at or below key: a binary search of at most
 * log2(TK_PROBE_MAX) + 1 steps. */
static __always_inline u32 tk_probe_by_key(u64 key)
{
	u32 lo = 0, hi = tk_probe_n, mid, i;

	for (i = 0; i < TK_PROBE_SEARCH_STEPS; i++) {
		if (hi - lo <= 1)
			break;
		mid = (lo + hi) / 2;
		if (mid >= TK_PROBE_MAX)
			break;
		if (tk_probe_keys[mid] <= key)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* The probe of this hit; key: what TK_PROBE_KEY searches (0 where the
 * program has none, as for uprobes, whose addresses differ per process). */
static __always_inline u32 tk_probe_index(void *ctx, u64 key)
{
	if (tk_probe_by == TK_PROBE_COOKIE)
		return (u32)bpf_get_attach_cookie(ctx);
	if (tk_probe_by == TK_PROBE_KEY)
		return tk_probe_by_key(key);
	return 0;
}

#endif
