// SPDX-License-Identifier: GPL-2.0
/* funclatency: time each call of a function, kernel or user, or of the
 * functions a pattern matches, into log2 histograms (one, or one per
 * function with -F; per cgroup too with --print-cgroup).
 *
 * Each probe is written once per attach method; libtrace points the
 * chosen ones at the functions (tk_set_target, tk_set_target_multi):
 * entry_fentry/exit_fexit or entry_kprobe/exit_kretprobe for a kernel
 * function, entry_kprobe_multi/exit_kretprobe_multi (else the kprobes,
 * one per function) for several, entry_uprobe/exit_uretprobe for a user
 * function and the _multi ones for several.
 *
 * Start times (and which function each call is) are kept per thread as
 * a stack, across all the functions, so that a call made while
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
#include "tk_cgroup.bpf.h"
#include "tk_loss.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_probe_index.bpf.h"

const volatile unsigned long long unit_ns = 1;  /* 1000 for -u, 1000000 for -m */

/* -F: one histogram per function, hist[i] for function i; how a hit
 * knows its function (its cookie, else a kprobe's address):
 * tk_probe_index.bpf.h, set by userspace (tk_probe_index_set). */

/* -l: calls nested deeper than this are not timed (bcc: "the outermost
 * n levels"); without -l every level up to FUNCLATENCY_MAX_DEPTH is,
 * and deeper ones are counted as failed map inserts. */
const volatile unsigned int max_level = FUNCLATENCY_MAX_DEPTH;
const volatile bool level_set = false;

struct start {
	u64 ts[FUNCLATENCY_MAX_DEPTH];
	u32 func[FUNCLATENCY_MAX_DEPTH];
	u32 depth;  /* calls open; those at max_level and above have no time */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FUNCLATENCY_MAX_THREADS);
	__type(key, u32);  /* thread_key() */
	__type(value, struct start);
} starts SEC(".maps");

/* One entry per function with -F (userspace sets max_entries), else 1. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct funclatency_hist);
} hist SEC(".maps");

/* With --print-cgroup (tk_filter.cgroup_ids), in place of hist: by
 * function and cgroup, an entry made on a cgroup's first call. The map
 * not used has one entry (userspace sets max_entries). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, FUNCLATENCY_MAX_CGROUP_HISTS);
	__type(key, struct funclatency_key);
	__type(value, struct funclatency_hist);
} cgroup_hist SEC(".maps");

static struct start empty;
static struct funclatency_hist zero_hist;

/* The thread's key: its tid, but every CPU's idle task has tid 0 (an
 * interrupt on an idle CPU runs as it): there, one key per CPU, above
 * any tid (PID_MAX_LIMIT is 2^22). */
static __always_inline u32 thread_key(void)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();

	return tid ? tid : 0x80000000u | bpf_get_smp_processor_id();
}

static __always_inline int on_entry(u32 func)
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
	if (d < max_level) {
		u64 i = d;

		/* The test right on the index, hidden from the compiler,
		 * which would otherwise fold it into the one above and
		 * leave the verifier no bound. */
		asm volatile("" : "+r"(i));
		if (i < FUNCLATENCY_MAX_DEPTH) {
			s->ts[i] = bpf_ktime_get_ns();
			s->func[i] = func;
		}
	}
	return 0;
}

/* The histogram of a call of function func that returns now: of the
 * cgroup current is in as it returns, with --print-cgroup. */
static __always_inline struct funclatency_hist *hist_of(u32 func)
{
	struct funclatency_key key = {};

	if (!tk_filter.cgroup_ids)
		return bpf_map_lookup_elem(&hist, &func);
	key.cgroup_id = tk_cgroup_id();
	key.func = func;
	return tk_lookup_or_init(&cgroup_hist, &key, &zero_hist);
}

static __always_inline int on_return(void)
{
	u64 now = bpf_ktime_get_ns(), delta;
	u32 tid = thread_key(), d, func;
	u64 slot, i;  /* 64-bit: a 32-bit index is zero-extended in a copy of
		    * the register, and 5.x/6.1 verifiers lose its bound */
	struct funclatency_hist *h;
	struct start *s;

	s = bpf_map_lookup_elem(&starts, &tid);
	if (!s || !s->depth)
		return 0;
	d = s->depth - 1;
	s->depth = d;
	if (d >= max_level) {
		/* Beyond -l: not timed, by request. Without -l: nested
		 * too deep, no room was left for its start time. */
		if (!level_set)
			tk_count_loss(TK_LOSS_MAP_FULL);
		return 0;
	}
	i = d;
	asm volatile("" : "+r"(i));  /* as in on_entry */
	if (i >= FUNCLATENCY_MAX_DEPTH)
		return 0;
	delta = now - s->ts[i];
	func = s->func[i];
	if (!d)
		bpf_map_delete_elem(&starts, &tid);
	h = hist_of(func);
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
	return on_entry(0);  /* one function */
}

SEC("kprobe")
int BPF_KPROBE(entry_kprobe)
{
	return on_entry(tk_probe_index(ctx, PT_REGS_IP(ctx)));
}

SEC("kprobe.multi")
int BPF_KPROBE(entry_kprobe_multi)
{
	return on_entry(tk_probe_index(ctx, PT_REGS_IP(ctx)));
}

SEC("uprobe")
int BPF_KPROBE(entry_uprobe)
{
	return on_entry(tk_probe_index(ctx, 0));
}

/* Loaded as uprobe.multi (TK_TRACE_UPROBE_MULTI): libbpf 1.1 does not
 * know the section name. */
SEC("uprobe")
int BPF_KPROBE(entry_uprobe_multi)
{
	return on_entry(tk_probe_index(ctx, 0));
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

SEC("kretprobe.multi")
int BPF_KRETPROBE(exit_kretprobe_multi)
{
	return on_return();
}

SEC("uretprobe")
int BPF_KRETPROBE(exit_uretprobe)
{
	return on_return();
}

SEC("uretprobe")
int BPF_KRETPROBE(exit_uretprobe_multi)
{
	return on_return();
}

char LICENSE[] SEC("license") = "GPL";
