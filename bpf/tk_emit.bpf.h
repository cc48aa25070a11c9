/* The one event path: a ring buffer, or a perf buffer on kernels before
 * 5.8. libtrace sets the map type and tk_transport before load; the
 * branch on rodata is resolved by the verifier, so the helper a kernel
 * lacks is never seen by it. Every event that cannot be submitted, and
 * every failed map insert, is counted in tk_losses. */
#ifndef TK_EMIT_BPF_H
#define TK_EMIT_BPF_H

#include "tk_shared.h"

const volatile int tk_transport = TK_TRANSPORT_RINGBUF;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} tk_events SEC(".maps");

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

/* Clamp v to at most max in a way the verifier sees on the very register
 * that is used next: clang otherwise checks a copy and passes the
 * original, which the verifier then calls unbounded. */
#define tk_bound(v, max)                                                   \
	asm volatile("if %0 <= %1 goto +1; %0 = %1" : "+r"(v) : "i"(max))

/* Send size bytes at data; size must be provably bounded by the caller. */
static __always_inline int tk_emit(void *ctx, void *data, u64 size)
{
	long err;

	if (tk_transport == TK_TRANSPORT_RINGBUF)
		err = bpf_ringbuf_output(&tk_events, data, size, 0);
	else
		err = bpf_perf_event_output(ctx, &tk_events, BPF_F_CURRENT_CPU,
					    data, size);
	if (err)
		tk_count_loss(TK_LOSS_EVENT);
	return err;
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
