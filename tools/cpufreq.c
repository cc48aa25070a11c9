/* cpufreq: CPU frequency samples per CPU and per process, as histograms
 * in MHz. */
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpufreq.h"
#include "mapread.h"
#include "perfevent.h"
#include "tracekit.h"
#include "cpufreq.skel.h"

static struct {
	long freq;
	bool per_comm;
} env = { .freq = 99 };

static const struct argp_option options[] = {
	{ "frequency", 'f', "HZ", 0, "Sample each CPU HZ times a second (default 99)", 0 },
	{ "per-process", 'P', 0, 0, "A histogram per process name (comm) instead of per CPU", 0 },
	{ 0 },
};

static const char doc[] =
"Sample CPU frequency, per CPU or per process, as histograms in MHz.\n"
"\v"
"power:cpu_frequency keeps each CPU's current frequency (from the\n"
"cpufreq driver's scaling_cur_freq at start); each CPU is sampled by its\n"
"own cpu-clock perf event (99 Hz, as bcc) and a sample counts the\n"
"frequency its CPU runs at: in that CPU's histogram, in the whole\n"
"system's (syswide), and with -P in that of the sampled task's comm (the\n"
"idle task's samples in syswide only, as bcc). The frequency is the one\n"
"the kernel last reported: where the hardware changes it on its own\n"
"(intel_pstate with HWP) the kernel reports no change. Without a cpufreq\n"
"driver (most VMs) the kernel reports no frequency: cpufreq says so and\n"
"exits 1. Task filters keep only the samples that interrupt a wanted task.\n"
"\n"
"Examples:\n"
"  cpufreq            # per-CPU histograms until Ctrl-C\n"
"  cpufreq -P 5 1     # per-process histograms of 5 seconds, once\n"
"  cpufreq -f 199     # sample at 199 Hz\n"
"  cpufreq -j -- make # while make runs, its samples only\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'P': env.per_comm = true; break;
	case 'f':
		env.freq = tk_arg_long("-f/--frequency", arg, 1, tk_perf_max_sample_rate());
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "cpufreq",
	.no_print_cgroup = true,
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "P",
	.periodic = true,
};

static int ncpu;
static unsigned start_mhz[CPUFREQ_MAX_CPUS];

/* Each CPU's frequency from its cpufreq driver; without one on any CPU,
 * the kernel reports no frequency at all: say so and exit 1. */
static void read_start_freqs(void)
{
	bool any = false;
	int c;

	if (ncpu > CPUFREQ_MAX_CPUS)
		tk_fail("%d CPUs: cpufreq follows at most %d", ncpu, CPUFREQ_MAX_CPUS);
	for (c = 0; c < ncpu; c++) {
		char path[96];
		unsigned long khz;
		FILE *f;

		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", c);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%lu", &khz) == 1) {
			start_mhz[c] = khz / 1000;
			any = true;
		}
		fclose(f);
	}
	if (!any)
		tk_fail("this kernel reports no CPU frequency: no cpufreq driver (/sys/devices/system/cpu/cpu0/cpufreq is absent), so power:cpu_frequency never fires; load the CPU's cpufreq driver (intel_pstate, amd-pstate, acpi-cpufreq, ...) or run where there is one (most VMs have none)");
}

static void print_hist(const unsigned long long *slots, const char *label,
		       const char *key, const char *val, int cpu)
{
	struct tk_json j;

	if (tk_opts.json) {
		tk_json_begin(&j, stdout);
		tk_json_str(&j, "type", "histogram");
		tk_json_time(&j);
		if (cpu >= 0)
			tk_json_int(&j, "cpu", cpu);
		if (key)
			tk_json_str(&j, key, val);
		tk_hist_json_linear(&j, slots, CPUFREQ_SLOTS, 0, CPUFREQ_STEP, "MHz");
		tk_json_end(&j);
		return;
	}
	tk_hist_print_linear(stdout, slots, CPUFREQ_SLOTS, 0, CPUFREQ_STEP, label);
	putchar('\n');
}

struct comm_row {
	struct cpufreq_comm key;
	struct cpufreq_slots val;
};

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct comm_row *)a)->key.comm,
		      ((const struct comm_row *)b)->key.comm);
}

static void print_interval(void *arg, int seq)
{
	struct cpufreq_bpf *skel = arg;
	static unsigned long long *last, *diff;
	static struct comm_row *rows;
	unsigned long long all[CPUFREQ_SLOTS] = { 0 };
	char buf[16], label[32];
	int c, s, n;

	(void)seq;
	if (!last) {
		last = calloc(ncpu, sizeof(*last) * CPUFREQ_SLOTS);
		diff = calloc(ncpu, sizeof(*diff) * CPUFREQ_SLOTS);
		rows = calloc(CPUFREQ_MAX_COMMS, sizeof(*rows));
		if (!last || !diff || !rows)
			tk_fail("out of memory");
	}
	if (tk_percpu_slots_delta(skel->maps.hist, 0, CPUFREQ_SLOTS, true, last, diff))
		tk_fail("cannot read the histogram map");
	if (!tk_opts.json) {
		putchar('\n');
		if (tk_opts.time)
			printf("%-8s\n", tk_time_str(buf, sizeof(buf)));
	}
	if (env.per_comm) {
		n = tk_map_take_all(skel->maps.comms, rows, sizeof(*rows),
				    offsetof(struct comm_row, val), CPUFREQ_MAX_COMMS);
		qsort(rows, n, sizeof(*rows), by_name);
		for (c = 0; c < n; c++)
			print_hist(rows[c].val.slots, rows[c].key.comm, "comm",
				   rows[c].key.comm, -1);
	}
	for (c = 0; c < ncpu; c++) {
		for (s = 0; s < CPUFREQ_SLOTS; s++)
			all[s] += diff[c * CPUFREQ_SLOTS + s];
		if (env.per_comm)
			continue;
		snprintf(label, sizeof(label), "cpu%d", c);
		print_hist(diff + c * CPUFREQ_SLOTS, label, NULL, NULL, c);
	}
	print_hist(all, "syswide", NULL, NULL, -1);
	fflush(stdout);
}

static int configure(void *s, void *ctx)
{
	struct cpufreq_bpf *skel = s;

	(void)ctx;
	skel->rodata->by_comm = env.per_comm;
	memcpy(skel->bss->cur_mhz, start_mhz, sizeof(start_mhz));
	if (!env.per_comm)
		bpf_map__set_autocreate(skel->maps.comms, false);
	return 0;
}

TK_SKEL_OPS(cpufreq_bpf);

int main(int argc, char **argv)
{
	struct cpufreq_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	ncpu = libbpf_num_possible_cpus();
	read_start_freqs();
	tk_set_perf_event_hz(env.freq, NULL);
	skel = tk_load(&cpufreq_bpf_ops, configure, NULL);
	tk_ready();
	tk_print_intervals(print_interval, skel);
	tk_losses_report(skel->obj);
	cpufreq_bpf__destroy(skel);
	return tk_exit_status();
}
