// SPDX-License-Identifier: GPL-2.0
/* llcstat: last-level cache references and misses by process (thread
 * with -t) and CPU, as bcc. Two hardware perf events per CPU, opened by
 * libtrace: PERF_COUNT_HW_CACHE_REFERENCES and PERF_COUNT_HW_CACHE_MISSES,
 * each overflowing every -c events; each overflow adds its sample period
 * to the counts of the task it interrupts. With task filters, only the
 * overflows that interrupt a wanted task. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "llcstat.h"
#include "tk_filter.bpf.h"
#include "tk_loss.bpf.h"

const volatile bool per_thread = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LLCSTAT_MAX_KEYS);
	__type(key, struct llcstat_key);
	__type(value, struct llcstat_val);
} counts SEC(".maps");

static __always_inline int count(u64 period, bool miss)
{
	struct llcstat_key key = {};
	struct llcstat_val *v, zero = {};
	u64 id = bpf_get_current_pid_tgid();

	if (!tk_task_wanted())
		return 0;
	key.cpu = bpf_get_smp_processor_id();
	key.pid = id >> 32;
	key.tid = per_thread ? (u32)id : key.pid;
	v = tk_lookup_or_init(&counts, &key, &zero);
	if (!v)
		return 0;
	if (miss)
		__sync_fetch_and_add(&v->miss, period);
	else
		__sync_fetch_and_add(&v->ref, period);
	bpf_get_current_comm(v->comm, sizeof(v->comm));
	return 0;
}

SEC("perf_event")
int llcstat_ref_perf_event(struct bpf_perf_event_data *ctx)
{
	return count(ctx->sample_period, false);
}

SEC("perf_event")
int llcstat_miss_perf_event(struct bpf_perf_event_data *ctx)
{
	return count(ctx->sample_period, true);
}

char LICENSE[] SEC("license") = "GPL";
