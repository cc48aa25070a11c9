/* Loss accounting of every tracekit program: per-CPU counters of what
 * could not be recorded (enum tk_loss), read and reported by libtrace at
 * exit. Tools without events include only this header. */
#ifndef TK_LOSS_BPF_H
#define TK_LOSS_BPF_H

#include "tk_shared.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TK_LOSS_MAX);
	__type(key, u32);
	__type(value, u64);
} tk_losses SEC(".maps");

static __always_inline void tk_count_loss(enum tk_loss what)
{
	u32 key = what;
	u64 *n = bpf_map_lookup_elem(&tk_losses, &key);

	if (n)
		(*n)++;   /* per-CPU: no atomic needed */
}

/* Insert or fetch a value, counting a full map instead of failing silently. */
static __always_inline void *tk_lookup_or_init(void *map, const void *key,
					       const void *init)
{
	void *val = bpf_map_lookup_elem(map, key);
	long err;

	if (val)
		return val;
	err = bpf_map_update_elem(map, key, init, BPF_NOEXIST);
	if (err && err != -17 /* EEXIST: another CPU won the race */) {
		tk_count_loss(TK_LOSS_MAP_FULL);
		return 0;
	}
	return bpf_map_lookup_elem(map, key);
}

#endif
