// SPDX-License-Identifier: GPL-2.0
/* cpufreq: sample each CPU's frequency, as bcc. power:cpu_frequency keeps
 * each CPU's current frequency in cur_mhz (userspace sets the start from
 * cpufreq's scaling_cur_freq); one perf event per CPU (cpu-clock at -f Hz,
 * opened by libtrace) counts, on the CPU's own histogram, the frequency
 * its CPU runs at, and with -P on its comm's. With task filters, only the
 * samples that interrupt a wanted task; the frequency is followed on
 * every CPU whoever runs. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "cpufreq.h"
#include "tk_bits.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_loss.bpf.h"

const volatile bool by_comm = false;

/* Each CPU's frequency in MHz; 0: not known (no sample counted). */
unsigned int cur_mhz[CPUFREQ_MAX_CPUS] = {};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct cpufreq_slots);
} hist SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CPUFREQ_MAX_COMMS);
	__type(key, struct cpufreq_comm);
	__type(value, struct cpufreq_slots);
} comms SEC(".maps");

static __always_inline int set_freq(u32 state, u64 cpu)
{
	if (cpu >= CPUFREQ_MAX_CPUS)
		return 0;
	tk_bound(cpu, CPUFREQ_MAX_CPUS - 1);  /* for the verifier */
	cur_mhz[cpu] = state / 1000;  /* kHz */
	return 0;
}

SEC("tp_btf/cpu_frequency")
int BPF_PROG(cpu_frequency_tp_btf, unsigned int state, unsigned int cpu)
{
	return set_freq(state, cpu);
}

SEC("raw_tp/cpu_frequency")
int BPF_PROG(cpu_frequency_raw_tp, unsigned int state, unsigned int cpu)
{
	return set_freq(state, cpu);
}

SEC("tracepoint/power/cpu_frequency")
int cpu_frequency_tp(struct trace_event_raw_cpu *ctx)
{
	return set_freq(ctx->state, ctx->cpu_id);
}

SEC("perf_event")
int cpufreq_perf_event(struct bpf_perf_event_data *ctx)
{
	static const struct cpufreq_slots zero;
	struct cpufreq_comm key = {};
	u32 cpu = bpf_get_smp_processor_id(), z = 0, mhz;
	struct cpufreq_slots *h;
	u64 slot;

	if (!tk_task_wanted())
		return 0;
	if (cpu >= CPUFREQ_MAX_CPUS)
		return 0;
	mhz = cur_mhz[cpu];
	if (!mhz)
		return 0;
	slot = mhz / CPUFREQ_STEP;
	tk_bound(slot, CPUFREQ_SLOTS - 1);
	h = bpf_map_lookup_elem(&hist, &z);
	if (h)  /* this CPU's own: no atomics needed */
		h->slots[slot]++;
	if (!by_comm || !(u32)bpf_get_current_pid_tgid())
		return 0;  /* the idle task has no process, as in bcc */
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	h = tk_lookup_or_init(&comms, &key, &zero);
	if (h)
		__sync_fetch_and_add(&h->slots[slot], 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
