/* runqslower: trace run queue waits longer than a threshold, one line
 * each, with the task that was on the CPU. */
#include <stdio.h>
#include <string.h>

#include "runqslower.h"
#include "runqslower.skel.h"
#include "tracekit.h"

static struct {
	long min_us;
	bool min_set;
	bool previous;
} env = { .min_us = 10000 };

static const struct argp_option options[] = {
	{ "previous", 'P', 0, 0, "Also show the previous task's name and TID", 0 },
	{ 0 },
};

/* bcc's -t TID is the common --tid. */
static const struct tk_letter letters[] = { { 't', "tid" }, { 0 } };

static const char doc[] =
"Trace high run queue latency: each wait of a task from becoming runnable\n"
"(woken, or preempted) to running that is longer than min_us (default\n"
"10000 us; 0: every wait).\n"
"\v"
"bcc's columns: TIME, COMM, TID, LAT(us) (the wait in whole microseconds,\n"
"reported when above min_us); with -P, PREV COMM and PREV TID, the task\n"
"that was on the CPU when the waiting one got it. JSON: a record per wait\n"
"with \"pid\", \"tid\", \"comm\", \"lat_ns\" and the previous task's \"prev_pid\",\n"
"\"prev_tid\" and \"prev_comm\". -u, -c and -n judge a task as it was when\n"
"it last left a CPU (a new task by its parent), since only then is it the\n"
"current task: the first wait of a task that was asleep when tracing\n"
"began is not seen. libbpf-tools' -c COMM (a comm prefix) is -n COMM here\n"
"(a substring); -c is the common --cgroup.\n"
"\n"
"Examples:\n"
"  runqslower         # trace run queue latency higher than 10000 us (default)\n"
"  runqslower 1000    # trace run queue latency higher than 1000 us\n"
"  runqslower -p 123  # trace pid 123\n"
"  runqslower -t 123  # trace tid 123 (use for threads only)\n"
"  runqslower -P      # also show previous task comm and TID\n"
"  runqslower -j 0 -- make  # every wait of a build's tasks, NDJSON\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'P':
		env.previous = true;
		break;
	case ARGP_KEY_ARG:
		if (env.min_set)
			tk_usage_error("unexpected argument '%s' after min_us", arg);
		env.min_us = tk_arg_long("min_us", arg, 0, 1000000000);
		env.min_set = true;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "runqslower",
	.no_print_cgroup = true,
	.doc = doc,
	.options = options,
	.parser = parse,
	.args_doc = "[min_us]",
	.own_letters = "t",
	.letters = letters,
};

static void print_json(const struct runqslower_event *e)
{
	struct tk_json j;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "runqslower");
	tk_json_time(&j);
	tk_json_int(&j, "pid", e->pid);
	tk_json_int(&j, "tid", e->tid);
	tk_json_strn(&j, "comm", e->comm, strnlen(e->comm, sizeof(e->comm)));
	tk_json_uint(&j, "lat_ns", e->lat_ns);
	tk_json_int(&j, "prev_pid", e->prev_pid);
	tk_json_int(&j, "prev_tid", e->prev_tid);
	tk_json_strn(&j, "prev_comm", e->prev_comm, strnlen(e->prev_comm, sizeof(e->prev_comm)));
	tk_json_end(&j);
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	const struct runqslower_event *e = data;
	char hms[16];

	(void)ctx;
	if (size < sizeof(*e))
		return 0;  /* malformed */
	if (tk_opts.json) {
		print_json(e);
		return 0;
	}
	printf("%-8s ", tk_time_str(hms, sizeof(hms)));
	tk_print_safe_padded(stdout, e->comm, strnlen(e->comm, sizeof(e->comm)), 16);
	printf(" %-6d %14llu", e->tid, e->lat_ns / 1000);
	if (env.previous) {
		putchar(' ');
		tk_print_safe_padded(stdout, e->prev_comm,
				     strnlen(e->prev_comm, sizeof(e->prev_comm)), 16);
		printf(" %-6d", e->prev_tid);
	}
	putchar('\n');
	return 0;
}

static int configure(void *s, void *ctx)
{
	struct runqslower_bpf *skel = s;

	(void)ctx;
	skel->rodata->min_lat_ns = env.min_us ? (env.min_us + 1ULL) * 1000 : 0;
	TK_SCHED_CHOOSE_START_MAP(skel, sched_switch_tp_btf);
	return 0;
}

TK_SKEL_OPS(runqslower_bpf);

int main(int argc, char **argv)
{
	struct runqslower_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	skel = tk_load(&runqslower_bpf_ops, configure, NULL);
	tk_events_open(skel->obj, handle_event, NULL);
	if (!tk_opts.json) {
		printf("Tracing run queue latency higher than %ld us\n", env.min_us);
		if (env.previous)
			printf("%-8s %-16s %-6s %14s %-16s %-6s\n", "TIME", "COMM", "TID",
			       "LAT(us)", "PREV COMM", "PREV TID");
		else
			printf("%-8s %-16s %-6s %14s\n", "TIME", "COMM", "TID", "LAT(us)");
	}
	tk_ready();
	tk_events_loop();
	tk_losses_report(skel->obj);
	runqslower_bpf__destroy(skel);
	return tk_exit_status();
}
