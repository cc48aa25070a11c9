// SPDX-License-Identifier: GPL-2.0
/* funclatency: time each call of one function, kernel or user, into a
 * log2 histogram.
 *
 * Each probe is written once per attach method; libtrace points the
 * chosen ones at the function (tk_set_target): entry_fentry/exit_fexit
 * or entry_kprobe/exit_kretprobe for a kernel function, entry_uprobe/
 * exit_uretprobe for a user one.
 *
 * Start times are kept per thread as a stack, so that a call made while
 * another is running on the same thread (recursion, or an interrupt that
 * calls the function again) is timed too, each return popping its own
 * call: bcc keeps one start time per thread and loses the outer call.
 * Calls nested deeper than FUNCLATENCY_MAX_DEPTH are counted as failed
 * map inserts (no room for their start time). A return without its
 * entry (the call began before tracing) pops nothing.
 * The filters are judged at entry; a thread's stack is deleted when it
 * empties. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "funclatency.h"
#include "tk_bits.bpf.h"
#include "tk_loss.bpf.h"
#include "tk_filter.bpf.h"

const volatile unsigned long long unit_ns = 1;  /* 1000 for -u, 1000000 for -m */

struct start {
	u64 ts[FUNCLATENCY_MAX_DEPTH];
	u32 depth;  /* calls open; those above MAX_DEPTH have no time */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FUNCLATENCY_MAX_THREADS);
	__type(key, u32);  /* thread_key() */
	__type(value, struct start);
} starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct funclatency_hist);
} hist SEC(".maps");

static struct start empty;

/* The thread's key: its tid, but every CPU's idle task has tid 0 (an
 * interrupt on an idle CPU runs as it): there, one key per CPU, above
 * any tid (PID_MAX_LIMIT is 2^22). */
static __always_inline u32 thread_key(void)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();

	return tid ? tid : 0x80000000u | bpf_get_smp_processor_id();
}

static __always_inline int on_entry(void)
{
	u32 tid = thread_key(), d;
	struct start *s;

	if (!tk_task_wanted())
		return 0;
	s = tk_lookup_or_init(&starts, &tid, &empty);
	if (!s)
		return 0;
	d = s->depth;
	s->depth = d + 1;
	if (d < FUNCLATENCY_MAX_DEPTH)
		s->ts[d] = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int on_return(void)
{
	u64 now = bpf_ktime_get_ns(), delta;
	u32 tid = thread_key(), d, key = 0;
	u64 slot;  /* 64-bit: a 32-bit index is zero-extended in a copy of
		    * the register, and 5.x/6.1 verifiers lose its bound */
	struct funclatency_hist *h;
	struct start *s;

	s = bpf_map_lookup_elem(&starts, &tid);
	if (!s || !s->depth)
		return 0;
	d = s->depth - 1;
	s->depth = d;
	if (d >= FUNCLATENCY_MAX_DEPTH) {
		/* Nested too deep: no room was left for its start time. */
		tk_count_loss(TK_LOSS_MAP_FULL);
		return 0;
	}
	delta = now - s->ts[d];
	if (!d)
		bpf_map_delete_elem(&starts, &tid);
	h = bpf_map_lookup_elem(&hist, &key);
	if (!h)
		return 0;
	slot = tk_log2_slot(delta / unit_ns);
	if (slot >= FUNCLATENCY_SLOTS)
		slot = FUNCLATENCY_SLOTS - 1;
	/* Per-CPU, but atomic all the same: a uprobe's program runs with
	 * preemption enabled on recent kernels, so another task can run it
	 * on this CPU in between. */
	__sync_fetch_and_add(&h->slots[slot], 1);
	__sync_fetch_and_add(&h->sum_ns, delta);
	return 0;
}

SEC("fentry")
int BPF_PROG(entry_fentry)
{
	return on_entry();
}

SEC("kprobe")
int BPF_KPROBE(entry_kprobe)
{
	return on_entry();
}

SEC("uprobe")
int BPF_KPROBE(entry_uprobe)
{
	return on_entry();
}

SEC("fexit")
int BPF_PROG(exit_fexit)
{
	return on_return();
}

SEC("kretprobe")
int BPF_KRETPROBE(exit_kretprobe)
{
	return on_return();
}

SEC("uretprobe")
int BPF_KRETPROBE(exit_uretprobe)
{
	return on_return();
}

char LICENSE[] SEC("license") = "GPL";
