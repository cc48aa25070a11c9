/* The one event path: a ring buffer, or a perf buffer on kernels before
 * 5.8. libtrace sets the map type and tk_transport before load; the
 * branch on rodata is resolved by the verifier, so the helper a kernel
 * lacks is never seen by it. Every event that cannot be submitted is
 * counted in tk_losses (tk_loss.bpf.h). */
#ifndef TK_EMIT_BPF_H
#define TK_EMIT_BPF_H

#include "tk_bits.bpf.h"
#include "tk_loss.bpf.h"
#include "tk_shared.h"

const volatile int tk_transport = TK_TRANSPORT_RINGBUF;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} tk_events SEC(".maps");

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

#endif
