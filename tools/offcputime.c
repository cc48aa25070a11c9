/* offcputime: time threads spend off CPU (blocked, asleep, or waiting to
 * run again), by the stacks they left the CPU from. */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "offcputime.h"
#include "offcputime.skel.h"
#include "stacks.h"
#include "tracekit.h"

static struct {
	bool user_threads;   /* -u */
	bool kernel_threads; /* -k */
	long state;          /* --state */
	long min_us, max_us; /* -m, -M */
} env = { .state = OFFCPU_ANY_STATE, .min_us = 1, .max_us = LONG_MAX };

enum { K_STATE = 0x2000 };

static const struct argp_option options[] = {
	{ "user-threads-only", 'u', 0, 0, "Only user threads (no kernel threads)", 0 },
	{ "kernel-threads-only", 'k', 0, 0, "Only kernel threads (no user threads)", 0 },
	{ "min-block-time", 'm', "US", 0,
	  "Only blocks of at least US microseconds (default 1)", 0 },
	{ "max-block-time", 'M', "US", 0,
	  "Only blocks of at most US microseconds (default: no limit)", 0 },
	{ "state", K_STATE, "STATE", 0,
	  "Only threads leaving in this state: 0 (preempted, still runnable), "
	  "or a bitmask matched against the task state (1 TASK_INTERRUPTIBLE, "
	  "2 TASK_UNINTERRUPTIBLE)", 0 },
	{ 0 },
};

static const char doc[] =
"Summarize off-CPU time by stack trace.\n"
"\v"
"A thread's time off CPU runs from its switch out to its switch in, in\n"
"microseconds, counted against the user and kernel stacks it left from;\n"
"it includes time waiting on the run queue after a wakeup or preemption\n"
"(--state 1 or 2 keeps only sleeps). Filters judge a thread as it leaves\n"
"the CPU. The idle task is left out. Stacks print at the end (after\n"
"[duration] seconds, or on Ctrl-C): bcc's report by default, with the\n"
"largest total last; -f one folded line per stack, weighted by\n"
"microseconds (comm;outer;...;inner us, user frames then kernel frames);\n"
"-j NDJSON. -s (bcc's --offset) shows each frame's offset in its\n"
"function (func+0x1a), in folded lines too (which bcc refuses), and -A\n"
"each frame's raw address in the report and -j.\n"
"As in bcc, -u is --user-threads-only and -d --delimited, so\n"
"--uid and --duration have no short letter. Up to 32768 threads off CPU\n"
"at once; more are counted as failed map inserts.\n"
"\n"
"Examples:\n"
"  offcputime               # all threads, until Ctrl-C\n"
"  offcputime 5             # for 5 seconds\n"
"  offcputime -f 5 > out.folded; flamegraph.pl --countname=us out.folded > offcpu.svg\n"
"  offcputime -p 185        # threads of process 185\n"
"  offcputime -t 188        # thread 188 only\n"
"  offcputime -m 1000       # only blocks of 1 ms or more\n"
"  offcputime -M 10000      # only blocks of 10 ms or less\n"
"  offcputime --state 2     # only uninterruptible sleeps\n"
"  offcputime -u -K 5       # user threads, kernel stacks only\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'u': env.user_threads = true; break;
	case 'k': env.kernel_threads = true; break;
	case 'm':
		env.min_us = tk_arg_long("-m/--min-block-time", arg, 0, LONG_MAX);
		break;
	case 'M':
		env.max_us = tk_arg_long("-M/--max-block-time", arg, 0, LONG_MAX);
		break;
	case K_STATE:
		env.state = tk_arg_long("--state", arg, 0, INT_MAX);
		break;
	case ARGP_KEY_ARG:
		tk_arg_duration(arg);
		break;
	case ARGP_KEY_END:
		if (env.user_threads && env.kernel_threads)
			tk_usage_error("options -u/--user-threads-only and -k/--kernel-threads-only cannot be combined");
		if (env.min_us > env.max_us)
			tk_usage_error("invalid -m/--min-block-time value '%ld': more than -M/--max-block-time %ld",
				       env.min_us, env.max_us);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* bcc's letter for the thread filter: the common --tid (lists too). */
static const struct tk_letter letters[] = { { 't', "tid" }, { 0 } };

static const struct tk_tool tool = {
	.name = "offcputime",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "ud",
	.letters = letters,
	.extra = &tk_stack_argp,
	.args_doc = "[duration]",
};

static int configure(void *s, void *ctx)
{
	struct offcputime_bpf *skel = s;

	(void)ctx;
	skel->rodata->user_threads_only = env.user_threads;
	skel->rodata->kernel_threads_only = env.kernel_threads;
	skel->rodata->state = env.state;
	skel->rodata->min_block_us = env.min_us;
	skel->rodata->max_block_us = env.max_us == LONG_MAX ? UINT64_MAX :
				     (uint64_t)env.max_us;
	return tk_stacks_configure(skel->obj);
}

TK_SKEL_OPS(offcputime_bpf);

int main(int argc, char **argv)
{
	struct tk_stacks_print how = {
		.unit = "us", .by_thread = true,
		.unseen_key = "blocks_untimed",
		.unseen_text = "blocks not timed: the thread's switch back in reached no tracer "
			       "(this kernel does not trace every context switch)",
	};
	struct offcputime_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	skel = tk_load(&offcputime_bpf_ops, configure, NULL);
	tk_stacks_run(skel->obj, &how);
	offcputime_bpf__destroy(skel);
	return tk_exit_status();
}
