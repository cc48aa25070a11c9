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

/* When the reader was last woken (ktime ns); shared by all CPUs, written
 * at most once per TK_EVENTS_WAKE_MS. */
__u64 tk_last_wake;

/* Wake the reader for this event? Yes when it has not been woken for
 * TK_EVENTS_WAKE_MS (a lone event is seen at once) or when a quarter of
 * the buffer is waiting (a storm cannot fill it between two polls). */
static __always_inline u64 tk_wake_flags(void)
{
	u64 now = bpf_ktime_get_ns();

	if (now - tk_last_wake >= TK_EVENTS_WAKE_MS * 1000000ULL ||
	    bpf_ringbuf_query(&tk_events, BPF_RB_AVAIL_DATA) >
	    bpf_ringbuf_query(&tk_events, BPF_RB_RING_SIZE) / 4) {
		tk_last_wake = now;
		return BPF_RB_FORCE_WAKEUP;
	}
	return BPF_RB_NO_WAKEUP;
}

/* Send size bytes at data; size must be provably bounded by the caller. */
static __always_inline int tk_emit(void *ctx, void *data, u64 size)
{
	long err;

	if (tk_transport == TK_TRANSPORT_RINGBUF)
		err = bpf_ringbuf_output(&tk_events, data, size, tk_wake_flags());
	else
		err = bpf_perf_event_output(ctx, &tk_events, BPF_F_CURRENT_CPU,
					    data, size);
	if (err)
		tk_count_loss(TK_LOSS_EVENT);
	return err;
}

#endif
