/* runqlen: summarize the run queue length as a histogram, by sampling. */
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>

#include "perfevent.h"
#include "runqlen.h"
#include "tracekit.h"
#include "runqlen.skel.h"

static struct {
	long freq;
	bool per_cpu;
	bool occupancy;
} env = { .freq = 99 };

static const struct argp_option options[] = {
	{ "cpus", 'C', 0, 0, "Print output for each CPU separately", 0 },
	{ "runqocc", 'O', 0, 0, "Report run queue occupancy", 0 },
	{ "frequency", 'f', "HZ", 0, "Sample each CPU HZ times a second (default 99)", 0 },
	{ 0 },
};

static const struct tk_bcc_missing missing[] = {
	{ "--host", "the length is the sampled task's CFS run queue's, as bcc's default" },
	{ "-H", "the length is the sampled task's CFS run queue's, as bcc's default" },
	{ 0 },
};

static const char doc[] =
"Summarize scheduler run queue length as a histogram.\n"
"\v"
"Each CPU is sampled by its own cpu-clock perf event (99 Hz, as bcc); a\n"
"sample counts the tasks waiting on the CFS run queue of the task it\n"
"interrupts, less that task: 0 on an idle CPU or with one runnable task.\n"
"A task in a cgroup with CPU control has a run queue of its group (as in\n"
"bcc). -O gives the occupancy instead: the percentage of samples with a\n"
"task waiting. Task filters keep only the samples that interrupt a\n"
"wanted task.\n"
"\n"
"Examples:\n"
"  runqlen            # summarize run queue length as a histogram\n"
"  runqlen 1 10       # print 1 second summaries, 10 times\n"
"  runqlen -T 1       # 1s summaries and timestamps\n"
"  runqlen -O         # report run queue occupancy\n"
"  runqlen -C         # show each CPU separately\n"
"  runqlen -f 199     # sample at 199 Hz\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'C': env.per_cpu = true; break;
	case 'O': env.occupancy = true; break;
	case 'f':
		env.freq = tk_arg_long("-f/--frequency", arg, 1, tk_perf_max_sample_rate());
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "runqlen",
	.no_print_cgroup = true,
	.doc = doc,
	.options = options,
	.parser = parse,
	.periodic = true,
	.bcc_missing = missing,
};

/* One CPU's samples (cpu < 0: all CPUs'). */
static void print_one(const unsigned long long *slots, int cpu)
{
	unsigned long long total = 0, queued = 0;
	struct tk_json j;
	double occ;
	int s;

	for (s = 0; s < RUNQLEN_SLOTS; s++) {
		total += slots[s];
		queued += s ? slots[s] : 0;
	}
	occ = total ? 100.0 * queued / total : 0;
	if (tk_opts.json) {
		tk_json_begin(&j, stdout);
		tk_json_str(&j, "type", env.occupancy ? "runqocc" : "histogram");
		tk_json_time(&j);
		if (cpu >= 0)
			tk_json_int(&j, "cpu", cpu);
		if (env.occupancy) {
			tk_json_uint(&j, "samples", total);
			tk_json_uint(&j, "queued", queued);
			tk_json_double(&j, "percent", occ);
		} else {
			tk_hist_json_linear(&j, slots, RUNQLEN_SLOTS, 0, 1, "runqlen");
		}
		tk_json_end(&j);
		return;
	}
	if (env.occupancy) {
		if (cpu >= 0)
			printf("runqocc, CPU %-3d %6.2f%%\n", cpu, occ);
		else
			printf("runqocc: %0.2f%%\n", occ);
		return;
	}
	if (cpu >= 0)
		printf("\ncpu = %d\n", cpu);
	tk_hist_print_linear(stdout, slots, RUNQLEN_SLOTS, 0, 1, "runqlen");
}

static void print_interval(void *arg, int seq)
{
	struct runqlen_bpf *skel = arg;
	static unsigned long long *last, *diff;
	int ncpu = libbpf_num_possible_cpus(), c, n;
	char buf[16];

	(void)seq;
	n = env.per_cpu ? ncpu : 1;
	if (!last) {
		last = calloc(n, sizeof(*last) * RUNQLEN_SLOTS);
		diff = calloc(n, sizeof(*diff) * RUNQLEN_SLOTS);
		if (!last || !diff)
			tk_fail("out of memory");
	}
	if (tk_percpu_slots_delta(skel->maps.hist, 0, RUNQLEN_SLOTS, env.per_cpu, last, diff))
		tk_fail("cannot read the histogram map");
	if (!tk_opts.json) {
		putchar('\n');
		if (tk_opts.time)
			printf("%-8s\n", tk_time_str(buf, sizeof(buf)));
	}
	for (c = 0; c < n; c++)
		print_one(diff + c * RUNQLEN_SLOTS, env.per_cpu ? c : -1);
	fflush(stdout);
}

TK_SKEL_OPS(runqlen_bpf);

int main(int argc, char **argv)
{
	struct runqlen_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	tk_set_perf_event_hz(env.freq, NULL);
	skel = tk_load(&runqlen_bpf_ops, NULL, NULL);
	tk_ready();
	tk_print_intervals(print_interval, skel);
	tk_losses_report(skel->obj);
	runqlen_bpf__destroy(skel);
	return tk_exit_status();
}
