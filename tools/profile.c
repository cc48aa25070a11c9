/* profile: sample the stacks the CPUs run, at a frequency or every N
 * nanoseconds of CPU time, for flame graphs (-f) or bcc's report. */
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

#include "perfevent.h"
#include "stacks.h"
#include "tracekit.h"
#include "profile.skel.h"

static struct {
	long freq;         /* -F; 0 with -c */
	long period;       /* -c */
	const char *cpus;  /* -C */
	bool include_idle; /* -I */
} env;

static const struct argp_option options[] = {
	{ "frequency", 'F', "HZ", 0,
	  "Sample each CPU HZ times a second (default 49)", 0 },
	{ "count", 'c', "NS", 0,
	  "Sample each CPU every NS nanoseconds of cpu-clock instead", 0 },
	{ "cpu", 'C', "CPUS", 0, "Only these CPUs (a list such as 0,2-3)", 0 },
	{ "include-idle", 'I', 0, 0, "Include the idle task's stacks", 0 },
	{ 0 },
};

static const char doc[] =
"Profile CPU usage by sampling stack traces at a timed interval.\n"
"\v"
"Each CPU is sampled by its own cpu-clock perf event; a sample counts the\n"
"user and kernel stack of the task it interrupts. The idle task is left\n"
"out unless -I. Stacks print at the end (after [duration] seconds, or on\n"
"Ctrl-C): bcc's report by default, with the most frequent stack last;\n"
"-f one folded line per stack, as flamegraph.pl reads it\n"
"(comm;outer;...;inner count, user frames then kernel frames); -j NDJSON.\n"
"-A (as bcc's) puts each frame's raw address before it in the report and\n"
"-j; -s shows each frame's offset in its function (func+0x1a).\n"
"As in bcc, -c is --count (the sample period) and -d --delimited, so\n"
"--cgroup and --duration have no short letter.\n"
"\n"
"Examples:\n"
"  profile                  # all CPUs at 49 Hz, until Ctrl-C\n"
"  profile -F 99 10         # 99 Hz for 10 seconds\n"
"  profile -f -F 999 10 > out.folded; flamegraph.pl out.folded > cpu.svg\n"
"  profile -p 181 -U -f 5   # user stacks of process 181\n"
"  profile -L 182 5         # thread 182 only\n"
"  profile -K -C 0-1 5      # kernel stacks on CPUs 0 and 1\n"
"  profile -c 1000000 5     # every ms of CPU time\n"
"  profile -d -f 5          # folded, '-' between user and kernel frames\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'F':
		env.freq = tk_arg_long("-F/--frequency", arg, 1, tk_perf_max_sample_rate());
		break;
	case 'c':
		env.period = tk_arg_long("-c/--count", arg, 1, LONG_MAX);
		break;
	case 'C': {
		int n = libbpf_num_possible_cpus();
		bool set[n > 0 ? n : 1];

		if (n > 0 && tk_parse_cpu_list(arg, set, n))
			tk_usage_error("invalid -C/--cpu value '%s': expected CPUs 0-%d, as a list such as 0,2-3",
				       arg, n - 1);
		env.cpus = arg;
		break;
	}
	case 'I': env.include_idle = true; break;
	case ARGP_KEY_ARG:
		tk_arg_duration(arg);
		break;
	case ARGP_KEY_END:
		if (env.freq && env.period)
			tk_usage_error("options -F/--frequency and -c/--count cannot be combined");
		if (!env.period && !env.freq)
			env.freq = 49;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* bcc's hash of (process, stack) counts is tracekit's --max-stacks. */
static const struct tk_bcc_missing bcc_missing[] = {
	{ "--hash-storage-size", "use --max-stacks N (the distinct process and stack counts kept)" },
	{ 0 },
};

/* bcc's letter for the thread filter: the common --tid (lists too). */
static const struct tk_letter letters[] = { { 'L', "tid" }, { 0 } };

static const struct tk_tool tool = {
	.name = "profile",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "cd",
	.letters = letters,
	.extra = &tk_stack_argp,
	.args_doc = "[duration]",
	.bcc_missing = bcc_missing,
};

static int configure(void *s, void *ctx)
{
	struct profile_bpf *skel = s;

	(void)ctx;
	skel->rodata->include_idle = env.include_idle;
	return tk_stacks_configure(skel->obj);
}

TK_SKEL_OPS(profile_bpf);

int main(int argc, char **argv)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
	};
	struct tk_stacks_print how = { .unit = "samples" };
	static char describe[64];
	struct profile_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	if (env.freq) {
		attr.freq = 1;
		attr.sample_freq = env.freq;
		snprintf(describe, sizeof(describe), "cpu-clock %ld Hz", env.freq);
	} else {
		attr.sample_period = env.period;
		snprintf(describe, sizeof(describe), "cpu-clock every %ld ns",
			 env.period);
	}
	tk_set_perf_event(&attr, env.cpus, describe);
	skel = tk_load(&profile_bpf_ops, configure, NULL);
	tk_stacks_open(skel->obj);
	tk_ready();
	tk_stacks_wait();
	/* Stop sampling: the counts are those of the run, not of the run
	 * and the time symbolizing takes. */
	tk_detach();
	how.include_idle = env.include_idle;
	tk_stacks_print(skel->obj, &how);
	tk_stacks_report(skel->obj, &how);
	profile_bpf__destroy(skel);
	return tk_exit_status();
}
