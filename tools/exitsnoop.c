/* exitsnoop: trace process exits, with their exit code or signal. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "exitsnoop.h"
#include "exitsnoop.skel.h"
#include "tracekit.h"

static struct {
	bool timestamp;     /* -t */
	bool utc;           /* --utc */
	bool failed;        /* -x */
	bool per_thread;    /* --per-thread */
	const char *label;  /* --label */
} env;

enum { K_UTC = 0x2000, K_LABEL, K_PER_THREAD, K_THREADED };

static const struct argp_option options[] = {
	{ "timestamp", 't', 0, 0, "TIME-<zone> column: local time of the exit, in ms", 0 },
	{ "utc", K_UTC, 0, 0, "The same in UTC (implies -t)", 0 },
	{ "failed", 'x', 0, 0, "Only exits with a non-zero code or a signal", 0 },
	{ "per-thread", K_PER_THREAD, 0, 0, "Every thread's exit, not each process's", 0 },
	{ "threaded", K_THREADED, 0, OPTION_ALIAS, 0, 0 },
	{ "label", K_LABEL, "LABEL", 0, "LABEL column holding LABEL (empty: \"exit\")", 0 },
	{ 0 },
};

static const char doc[] =
"Trace process exits (tracepoint sched:sched_process_exit), with the exit\n"
"code or the signal that ended them.\n"
"\v"
"bcc's columns: PCOMM, PID, PPID, TID, AGE(s) (since the process started)\n"
"and EXIT_CODE: 0, \"code N\" or \"signal N (NAME)\", with \", core dumped\".\n"
"A process is reported when its last thread exits (TID is that thread),\n"
"with the code it left: exit_group() and a fatal signal give every thread\n"
"the same. bcc and libbpf-tools report the main thread's exit instead,\n"
"which comes first when the main thread calls pthread_exit(). PPID is the\n"
"parent at the exit (a reaper's, once the parent has gone). JSON adds the\n"
"uid, \"age_ns\", \"exit_code\" (the kernel's status word), \"code\" or\n"
"\"signal\" and \"signal_name\", and \"core_dumped\".\n"
"\n"
"Examples:\n"
"  exitsnoop              # trace process exits\n"
"  exitsnoop -x           # only failures and signals\n"
"  exitsnoop -t --label exit   # timestamps and a label column\n"
"  exitsnoop --per-thread # every thread's exit\n"
"  exitsnoop -j -- make   # NDJSON, of make and its children\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 't': env.timestamp = true; break;
	case K_UTC: env.utc = env.timestamp = true; break;
	case 'x': env.failed = true; break;
	case K_PER_THREAD:
	case K_THREADED: env.per_thread = true; break;
	case K_LABEL: env.label = arg; break;
	default: return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "exitsnoop",
	.doc = doc,
	.options = options,
	.parser = parse,
};

/* The signal's name without "SIG", or "?". */
static const char *sig_name(int sig)
{
	const char *n = tk_signal_name(sig);

	return n ? n : "?";
}

/* bcc's EXIT_CODE text. */
static void print_code(int code)
{
	int sig = code & 0x7f;

	if (!sig)
		printf(code ? "code %d" : "0", (code >> 8) & 0xff);
	else
		printf("signal %d (%s)", sig, sig_name(sig));
	if (code & 0x80)
		printf(", core dumped");
}

static void print_header(void)
{
	char zone[16] = "UTC";
	time_t now = time(NULL);
	struct tm tm;

	if (tk_opts.time)
		printf("%-8s ", "TIME");
	if (env.timestamp) {   /* bcc's "%-13s", with no blank after */
		char title[32];

		if (!env.utc)
			strftime(zone, sizeof(zone), "%Z", localtime_r(&now, &tm));
		snprintf(title, sizeof(title), "TIME-%s", zone);
		printf("%-13s", title);
	}
	if (env.label)
		printf("%-6s", "LABEL");
	printf("%-16s %-7s %-7s %-7s ", "PCOMM", "PID", "PPID", "TID");
	if (tk_opts.filter.cgroup_ids)
		printf("%-*s ", TK_CGROUP_WIDTH, TK_CGROUP_HEADER);
	printf("%-7s %s\n", "AGE(s)", "EXIT_CODE");
}

/* HH:MM:SS.mmm, local or UTC, now. */
static const char *stamp(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (env.utc)
		gmtime_r(&ts.tv_sec, &tm);
	else
		localtime_r(&ts.tv_sec, &tm);
	n = strftime(buf, len, "%H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%03ld", ts.tv_nsec / 1000000);
	return buf;
}

static void print_text(const struct exit_event *e)
{
	char buf[32];

	if (tk_opts.time)
		printf("%-8s ", tk_time_str(buf, sizeof(buf)));
	if (env.timestamp)
		printf("%-13s", stamp(buf, sizeof(buf)));
	if (env.label)
		printf("%-6s", *env.label ? env.label : "exit");
	tk_print_safe_padded(stdout, e->comm, strnlen(e->comm, sizeof(e->comm)), 16);
	printf(" %-7d %-7d %-7d ", e->pid, e->ppid, e->tid);
	if (tk_opts.filter.cgroup_ids)
		tk_print_cgroup(stdout, e->cgroup_id, TK_CGROUP_WIDTH);
	printf("%-7.2f ", e->age_ns / 1e9);
	print_code(e->exit_code);
	putchar('\n');
}

static void print_json(const struct exit_event *e)
{
	int sig = e->exit_code & 0x7f;
	struct tk_json j;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", e->threads ? "exit" : "thread_exit");
	tk_json_time(&j);
	tk_json_task(&j, e->pid, e->tid, e->uid, e->comm, sizeof(e->comm), e->cgroup_id);
	tk_json_int(&j, "ppid", e->ppid);
	if (env.label)
		tk_json_str(&j, "label", *env.label ? env.label : "exit");
	tk_json_uint(&j, "age_ns", e->age_ns);
	tk_json_int(&j, "exit_code", e->exit_code);
	if (sig) {
		tk_json_null(&j, "code");
		tk_json_int(&j, "signal", sig);
		tk_json_str(&j, "signal_name", sig_name(sig));
	} else {
		tk_json_int(&j, "code", (e->exit_code >> 8) & 0xff);
		tk_json_null(&j, "signal");
		tk_json_null(&j, "signal_name");
	}
	tk_json_bool(&j, "core_dumped", e->exit_code & 0x80);
	tk_json_end(&j);
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	const struct exit_event *e = data;

	(void)ctx;
	if (size < sizeof(*e))
		return 0;  /* malformed */
	if (tk_opts.json)
		print_json(e);
	else
		print_text(e);
	return 0;
}

static int configure(void *s, void *ctx)
{
	struct exitsnoop_bpf *skel = s;

	(void)ctx;
	skel->rodata->per_thread = env.per_thread;
	skel->rodata->failed_only = env.failed;
	return 0;
}

TK_SKEL_OPS(exitsnoop_bpf);

int main(int argc, char **argv)
{
	struct exitsnoop_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	skel = tk_load(&exitsnoop_bpf_ops, configure, NULL);
	tk_events_open(skel->obj, handle_event, NULL);
	if (!tk_opts.json)
		print_header();
	tk_ready();
	tk_events_loop();
	tk_losses_report(skel->obj);
	exitsnoop_bpf__destroy(skel);
	return tk_exit_status();
}
