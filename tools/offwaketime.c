/* offwaketime: time threads spend blocked, by the stacks they blocked in
 * joined with the stacks of the threads that woke them (bcc's
 * offwaketime). */
#include <stdio.h>

#include "json.h"
#include "offwaketime.h"
#include "offwaketime.skel.h"
#include "stacks.h"
#include "tracekit.h"
#include "wake.h"

static const char doc[] =
"Summarize blocked time by the blocked thread's stacks and its waker's.\n"
"\v"
"A thread's block runs from its switch out to its switch back in, in\n"
"microseconds (wait on the run queue after the wakeup included), and is\n"
"counted against the user and kernel stacks it blocked in, joined with\n"
"the stacks of the thread that woke it, taken at the wakeup (sched_waking,\n"
"in the waker's context; a wakeup from an interrupt shows the interrupted\n"
"task as waker, as in bcc). A block that no wakeup ended (preemption) is\n"
"left out: offcputime has it. Filters (-p, -t, -u, -k, --uid, -c, -n) judge\n"
"the blocked thread as it leaves the CPU. Stacks print at the end (after\n"
"[duration] seconds, or on Ctrl-C): bcc's report by default (the waker,\n"
"outermost frame first, \"--\", then the blocked thread innermost first),\n"
"with the largest total last; -f one folded line per pair, for\n"
"flamegraph.pl: target comm;user;kernel;--;waker kernel;waker user;waker comm\n"
"(the waker's frames innermost first, so that the flame grows from the\n"
"target to the waker's outermost frame); -j NDJSON. User stacks are\n"
"walked by frame pointers (--unwind fp only).\n"
"As in bcc, -u is --user-threads-only and -d --delimited, so --uid and\n"
"--duration have no short letter.\n"
"\n"
"Examples:\n"
"  offwaketime              # all threads, until Ctrl-C\n"
"  offwaketime 5            # for 5 seconds\n"
"  offwaketime -f 5 > out.folded; flamegraph.pl --countname=us out.folded > wake.svg\n"
"  offwaketime -p 185       # threads of process 185 blocked\n"
"  offwaketime -m 1000      # only blocks of 1 ms or more\n"
"  offwaketime -K -- ./server   # kernel stacks, while ./server runs\n";

static const struct tk_letter letters[] = { { 't', "tid" }, { 0 } };

static const struct tk_tool tool = {
	.name = "offwaketime",
	.doc = doc,
	.options = tk_wake_options,
	.parser = tk_wake_parse,
	.own_letters = "ud",
	.letters = letters,
	.extra = &tk_stack_argp,
	.args_doc = "[duration]",
	.no_print_cgroup = true,
};

static int configure(void *s, void *ctx)
{
	struct offwaketime_bpf *skel = s;

	(void)ctx;
	return tk_wake_configure(skel->obj, skel->maps.wake_counts);
}

TK_SKEL_OPS(offwaketime_bpf);

/* --- Output ------------------------------------------------------------- */

static void read_key(struct bpf_object *obj, const void *k, struct tk_wake_entry *e)
{
	const struct offwake_key *key = k;

	tk_wake_side_read(obj, &key->target, &e->target);
	tk_wake_side_read(obj, &key->waker, &e->waker);
}

/* bcc's: target;user outer..inner;kernel outer..inner;--;waker kernel
 * inner..outer;waker user inner..outer;waker. */
static char *fold(const struct tk_wake_entry *e)
{
	struct tk_fold l = { 0 };

	tk_fold_put(&l, e->target.comm);
	tk_fold_outward(&l, &e->target);
	tk_fold_put(&l, "--");
	tk_fold_inward(&l, &e->waker);
	tk_fold_put(&l, e->waker.comm);
	return l.s;
}

/* bcc's: the waker outermost first, "--", the target innermost first. */
static void report(const struct tk_wake_entry *e)
{
	printf("    %-16s %s %u\n", "waker:", e->waker.comm, e->waker.pid);
	tk_wake_print_outward(&e->waker);
	printf("    %-16s %s\n", "--", "--");
	tk_wake_print_inward(&e->target);
	printf("    %-16s %s %u\n", "target:", e->target.comm, e->target.pid);
	printf("        %llu\n\n", e->us);
}

static void json(struct tk_json *j, const struct tk_wake_entry *e)
{
	tk_json_str(j, "comm", e->target.comm);
	tk_json_uint(j, "pid", e->target.tgid);
	tk_json_uint(j, "tid", e->target.pid);
	tk_wake_json_stacks(j, &e->target, "");
	tk_json_str(j, "waker_comm", e->waker.comm);
	tk_json_uint(j, "waker_pid", e->waker.tgid);
	tk_json_uint(j, "waker_tid", e->waker.pid);
	tk_wake_json_stacks(j, &e->waker, "waker_");
}

static const struct tk_wake_print wake_print = {
	.key_size = sizeof(struct offwake_key),
	.read = read_key, .fold = fold, .report = report, .json = json,
	.untimed = true,
};

int main(int argc, char **argv)
{
	struct offwaketime_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	skel = tk_load(&offwaketime_bpf_ops, configure, NULL);
	tk_wake_run(skel->obj, skel->maps.wake_counts, &wake_print);
	offwaketime_bpf__destroy(skel);
	return tk_exit_status();
}
