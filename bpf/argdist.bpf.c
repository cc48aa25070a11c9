// SPDX-License-Identifier: GPL-2.0
/* argdist: counts of a probe's hits by the values of expressions
 * (-C), or a log2 histogram of one (-H), aggregated here: each hit that
 * passes its filter adds one, atomically, to the count under its key
 * (struct argdist_key) in one hash map. Plans as trace's
 * (tk_plan.bpf.h): a slot per specifier, its programs per attach kind. */
#include "vmlinux.h"

#include "argdist.h"
#include "tk_plan.bpf.h"
#include "tk_bits.bpf.h"
#include "tk_cgroup.bpf.h"
#include "tk_loss.bpf.h"

const volatile struct argdist_plan argdist_plans[ARGDIST_SLOTS];

/* Per CPU: the fetched values, the bytecode's stack, the key. */
struct scratch {
	struct tk_plan_scratch plan;
	struct argdist_key key;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

/* Userspace sets max_entries (--max-keys), and the key's size to what
 * its specifiers use: the kernel hashes and compares key_size bytes of
 * each struct argdist_key, and a -H or an integer key is 24 or 32 of its
 * 272 (bench-trace: hashing all 272 cost 27 ns per event). So the key
 * has no BTF type, which would fix its size. A full map counts its
 * drops (TK_LOSS_MAP_FULL), reported at exit. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__uint(key_size, sizeof(struct argdist_key));
	__uint(value_size, sizeof(u64));
} counts SEC(".maps");

static __always_inline int handle(void *ctx, u32 slot, int mode)
{
	const volatile struct argdist_plan *p = &argdist_plans[slot];
	u32 zero = 0, faults;
	struct scratch *sc;
	struct argdist_key *k;
	u64 init = 0, *n, v = 0;
	int i;

	/* Nothing is looked up for an event the task filter or a quick
	 * filter drops. */
	if (!tk_task_wanted() || !tk_plan_quick_pass(ctx, mode, &p->code))
		return 0;
	sc = bpf_map_lookup_elem(&scratch, &zero);
	if (!sc)
		return 0;
	if (!tk_plan_eval(ctx, mode, &p->code, &sc->plan, &faults))
		return 0;
	k = &sc->key;
	__builtin_memset(k, 0, sizeof(*k));
	k->slot = slot;
	k->cgroup_id = tk_cgroup_id();
	if (p->hist) {
		int src = p->value_src[0];

		if (src >= 0 && src < TK_PLAN_FETCHES && (faults >> src) & 1)
			k->faults = 1;
		else
			v = tk_log2_slot(tk_plan_value(&p->code, &sc->plan, src));
		if (!k->faults)
			__builtin_memcpy(k->data, &v, sizeof(v));
	} else {
		for (i = 0; i < ARGDIST_VALUES; i++) {
			int src = p->value_src[i];
			u32 off = p->value_off[i];

			if (i >= p->nvalues)
				break;
			if (off > ARGDIST_KEY_DATA - TK_PLAN_STR_LEN)
				break;
			if (src >= 0 && src < TK_PLAN_FETCHES && (faults >> src) & 1) {
				k->faults |= 1u << i;
				continue;
			}
			if (p->value_str[i]) {
				if (src >= 0 && src < TK_PLAN_FETCHES)
					__builtin_memcpy(k->data + off, sc->plan.strs[src],
							 TK_PLAN_STR_LEN);
				continue;
			}
			v = tk_plan_value(&p->code, &sc->plan, src);
			__builtin_memcpy(k->data + off, &v, sizeof(v));
		}
	}
	n = tk_lookup_or_init(&counts, k, &init);
	if (n)
		__sync_fetch_and_add(n, 1);
	return 0;
}

#define ARGDIST_SLOT(N) TK_PLAN_SLOT(argdist, N, handle)

ARGDIST_SLOT(0)
ARGDIST_SLOT(1)
ARGDIST_SLOT(2)
ARGDIST_SLOT(3)
ARGDIST_SLOT(4)
ARGDIST_SLOT(5)
ARGDIST_SLOT(6)
ARGDIST_SLOT(7)

char LICENSE[] SEC("license") = "GPL";
