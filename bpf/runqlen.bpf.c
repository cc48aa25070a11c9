// SPDX-License-Identifier: GPL-2.0
/* runqlen: sample the length of each CPU's run queue. One perf event per
 * CPU (cpu-clock at -f Hz, opened by libtrace) runs this program; it
 * counts, on the CPU's own histogram, how many tasks wait on the CFS run
 * queue of the task it interrupts (its cfs_rq's queued entities, less
 * that task itself: 0 on an idle CPU or with one runnable task), as bcc.
 * With task filters, only the samples that interrupt a wanted task. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "runqlen.h"
#include "tk_bits.bpf.h"
#include "tk_filter.bpf.h"

/* Linux 6.14 renamed cfs_rq's nr_running to nr_queued. Both names are
 * declared here, so the program builds against a vmlinux.h of either
 * (vmlinux/arm64's is 6.12's). */
struct cfs_rq___pre614 {
	unsigned int nr_running;
} __attribute__((preserve_access_index));

struct cfs_rq___614 {
	unsigned int nr_queued;
} __attribute__((preserve_access_index));

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct runqlen_slots);
} hist SEC(".maps");

SEC("perf_event")
int runqlen_perf_event(struct bpf_perf_event_data *ctx)
{
	struct task_struct *t = (void *)bpf_get_current_task();
	struct runqlen_slots *h;
	struct cfs_rq *cfs;
	u32 zero = 0;
	u64 len;

	if (!tk_task_wanted())
		return 0;
	cfs = BPF_CORE_READ(t, se.cfs_rq);
	if (bpf_core_field_exists(((struct cfs_rq___pre614 *)cfs)->nr_running))
		len = BPF_CORE_READ((struct cfs_rq___pre614 *)cfs, nr_running);
	else
		len = BPF_CORE_READ((struct cfs_rq___614 *)cfs, nr_queued);
	if (len)
		len--;  /* the running task */
	tk_bound(len, RUNQLEN_SLOTS - 1);
	h = bpf_map_lookup_elem(&hist, &zero);
	if (h)  /* this CPU's own: no atomics needed */
		h->slots[len]++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
