/* wakeuptime: time threads spend asleep, by the stacks of the threads
 * that woke them (bcc's wakeuptime). */
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "stacks.h"
#include "tracekit.h"
#include "wake.h"
#include "wakeuptime.h"
#include "wakeuptime.skel.h"

static const char doc[] =
"Summarize sleep time by the stacks of the threads that ended the sleeps.\n"
"\v"
"A thread's sleep runs from its switch out (asleep, not preempted) to its\n"
"wakeup, in microseconds, as bcc's wakeuptime (offwaketime counts to the\n"
"switch back in and shows the sleeper's stacks too). It is counted against\n"
"the user and kernel stacks and comm of the waker, taken at the wakeup\n"
"(sched_waking, in the waker's context; a wakeup from an interrupt shows\n"
"the interrupted task as waker, as in bcc), and the sleeper's comm; counts\n"
"are by comm, not by thread. Filters (-p, -t, -u, -k, --uid, -c, -n) judge\n"
"the sleeping thread as it leaves the CPU. Stacks print at the end (after\n"
"[duration] seconds, or on Ctrl-C): bcc's report by default (\"target:\",\n"
"the waker's frames innermost first, \"waker:\", the total), with the\n"
"largest total last; -f one folded line per stack, for flamegraph.pl:\n"
"waker;user outer..inner;kernel outer..inner;target us; -j NDJSON.\n"
"bcc takes kernel stacks only: -K does the same. User stacks are walked by\n"
"frame pointers (--unwind fp only).\n"
"As in bcc's offcputime, -u is --user-threads-only and -d --delimited,\n"
"so --uid and --duration have no short letter.\n"
"\n"
"Examples:\n"
"  wakeuptime               # all threads, until Ctrl-C\n"
"  wakeuptime 5             # for 5 seconds\n"
"  wakeuptime -f 5 > out.folded; flamegraph.pl --countname=us out.folded > wakeup.svg\n"
"  wakeuptime -p 185        # sleeps of process 185's threads\n"
"  wakeuptime -m 1000 -K    # only sleeps of 1 ms or more, kernel stacks\n";

static const struct tk_letter letters[] = { { 't', "tid" }, { 0 } };

static const struct tk_tool tool = {
	.name = "wakeuptime",
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
	struct wakeuptime_bpf *skel = s;

	(void)ctx;
	return tk_wake_configure(skel->obj, skel->maps.wake_counts);
}

TK_SKEL_OPS(wakeuptime_bpf);

/* The sleeper is only a comm: its side of the entry has no stacks. */
static void read_key(struct bpf_object *obj, const void *k, struct tk_wake_entry *e)
{
	const struct wakeup_key *key = k;
	struct tk_wake_side target = {
		.user_stack_id = TK_STACK_NOT_TAKEN, .kern_stack_id = TK_STACK_NOT_TAKEN,
	};

	memcpy(target.comm, key->target, sizeof(target.comm));
	tk_wake_side_read(obj, &target, &e->target);
	tk_wake_side_read(obj, &key->waker, &e->waker);
}

/* bcc's: waker;stack outer..inner;target. */
static char *fold(const struct tk_wake_entry *e)
{
	struct tk_fold l = { 0 };

	tk_fold_put(&l, e->waker.comm);
	tk_fold_outward(&l, &e->waker);
	tk_fold_put(&l, e->target.comm);
	return l.s;
}

/* bcc's: "target:", the waker's frames innermost first, "waker:". */
static void report(const struct tk_wake_entry *e)
{
	printf("    %-16s %s\n", "target:", e->target.comm);
	tk_wake_print_inward(&e->waker);
	printf("    %-16s %s\n", "waker:", e->waker.comm);
	printf("        %llu\n\n", e->us);
}

static void json(struct tk_json *j, const struct tk_wake_entry *e)
{
	tk_json_str(j, "target_comm", e->target.comm);
	tk_json_str(j, "waker_comm", e->waker.comm);
	tk_wake_json_stacks(j, &e->waker, "");
}

static const struct tk_wake_print wake_print = {
	.key_size = sizeof(struct wakeup_key),
	.read = read_key, .fold = fold, .report = report, .json = json,
};

int main(int argc, char **argv)
{
	struct wakeuptime_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	skel = tk_load(&wakeuptime_bpf_ops, configure, NULL);
	tk_wake_run(skel->obj, skel->maps.wake_counts, &wake_print);
	wakeuptime_bpf__destroy(skel);
	return tk_exit_status();
}
