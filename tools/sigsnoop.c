/* sigsnoop: trace signals as they are generated, with their senders. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "sigsnoop.h"
#include "sigsnoop.skel.h"
#include "tracekit.h"

static struct {
	bool failed;                 /* -x */
	bool kill_only;              /* -k */
	bool names;                  /* -n */
	bool sig_filter;             /* -s */
	unsigned long long sigs[2];
} env;

static const struct argp_option options[] = {
	{ "failed", 'x', 0, 0, "Only signals not delivered (ignored, already pending, ...)", 0 },
	{ "kill", 'k', 0, 0, "Only signals sent by kill()-family calls", 0 },
	{ "signal", 's', "SIGNALS", 0, "Only these signals: numbers or names, comma-separated (9,TERM)", 0 },
	{ "name", 'n', 0, 0, "SIG column by name (SIGTERM), not number", 0 },
	{ 0 },
};

/* The kill()-family calls -k marks (their tracepoints: sys_enter_<name>). */
static const char *const kill_calls[] = {
	"kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo",
};

/* The tracepoint's result (enum trace_signal_result). */
static const char *const results[] = {
	"delivered", "ignored", "already_pending", "overflow_fail", "lose_info",
};

static const char doc[] =
"Trace signals as the kernel generates them (tracepoint\n"
"signal:signal_generate): sent by kill() and friends, and the kernel's own\n"
"(SIGCHLD at an exit, SIGSEGV, SIGPIPE, timers).\n"
"\v"
"libbpf-tools' columns: TIME, PID and COMM of the sender (the task that\n"
"was running: for the kernel's signals, the task the kernel acted for),\n"
"SIG (-n: by name), TPID and TCOMM of the target thread, and RESULT: the\n"
"tracepoint's, 0 delivered (queued), 1 ignored, 2 already pending, 3\n"
"overflow (no room in the queue), 4 delivered without its information\n"
"(libbpf-tools shows the siginfo's errno there, which is 0 for nearly\n"
"every signal). -x keeps those not 0. -k keeps the signals sent inside a\n"
"kill(), tkill(), tgkill(), rt_sigqueueinfo() or rt_tgsigqueueinfo()\n"
"call (libbpf-tools' -k shows the calls themselves: killsnoop does).\n"
"JSON adds the sender's tid and uid, the target's process (\"tgid\"), the\n"
"si_code (\"code\"), \"group\" (sent to the whole process) and names.\n"
"\n"
"Examples:\n"
"  sigsnoop               # trace signals\n"
"  sigsnoop -k -n         # signals from kill() and friends, by name\n"
"  sigsnoop -x            # signals not delivered\n"
"  sigsnoop -s SEGV,BUS   # only these signals\n"
"  sigsnoop -j -- make    # NDJSON, of signals make's processes send\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'x': env.failed = true; break;
	case 'k': env.kill_only = true; break;
	case 'n': env.names = true; break;
	case 's':
		tk_arg_signals("--signal", arg, env.sigs);
		env.sig_filter = true;
		break;
	default: return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "sigsnoop",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "n",
};

/* "SIGTERM", or the number where glibc has no name (real-time signals). */
static const char *sig_text(int sig, char *buf, size_t len)
{
	const char *name = tk_signal_name(sig);

	if (env.names && name)
		snprintf(buf, len, "SIG%s", name);
	else
		snprintf(buf, len, "%d", sig);
	return buf;
}

static void print_header(void)
{
	if (tk_opts.time)
		printf("%-8s ", "TIME");
	printf("%-8s %-7s %-16s ", "TIME", "PID", "COMM");
	if (tk_opts.filter.cgroup_ids)
		printf("%-*s ", TK_CGROUP_WIDTH, TK_CGROUP_HEADER);
	printf("%-12s %-7s %-16s %s\n", "SIG", "TPID", "TCOMM", "RESULT");
}

static void print_text(const struct sig_event *e)
{
	char buf[32];

	if (tk_opts.time)
		printf("%-8s ", tk_time_str(buf, sizeof(buf)));
	tk_time_str(buf, sizeof(buf));  /* bcc's TIME column */
	printf("%-8s %-7d ", buf, e->pid);
	tk_print_safe_padded(stdout, e->comm, strnlen(e->comm, sizeof(e->comm)), 16);
	putchar(' ');
	if (tk_opts.filter.cgroup_ids)
		tk_print_cgroup(stdout, e->cgroup_id, TK_CGROUP_WIDTH);
	printf("%-12s %-7d ", sig_text(e->sig, buf, sizeof(buf)), e->ttid);
	tk_print_safe_padded(stdout, e->tcomm, strnlen(e->tcomm, sizeof(e->tcomm)), 16);
	printf(" %d\n", e->result);
}

static void print_json(const struct sig_event *e)
{
	struct tk_json j;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "signal");
	tk_json_time(&j);
	tk_json_task(&j, e->pid, e->tid, e->uid, e->comm, sizeof(e->comm), e->cgroup_id);
	tk_json_int(&j, "sig", e->sig);
	tk_json_name(&j, "signal_name", tk_signal_name(e->sig));
	tk_json_int(&j, "code", e->code);
	tk_json_int(&j, "ttid", e->ttid);
	if (e->tgid >= 0)
		tk_json_int(&j, "tgid", e->tgid);
	else
		tk_json_null(&j, "tgid");
	tk_json_strn(&j, "tcomm", e->tcomm, strnlen(e->tcomm, sizeof(e->tcomm)));
	tk_json_bool(&j, "group", e->group);
	tk_json_int(&j, "result", e->result);
	if (e->result >= 0 && e->result < (int)(sizeof(results) / sizeof(results[0])))
		tk_json_str(&j, "result_name", results[e->result]);
	else
		tk_json_null(&j, "result_name");
	tk_json_end(&j);
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	const struct sig_event *e = data;

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
	struct sigsnoop_bpf *skel = s;
	char prefix[64];
	size_t i;

	(void)ctx;
	skel->rodata->failed_only = env.failed;
	skel->rodata->kill_only = env.kill_only;
	skel->rodata->sig_filter = env.sig_filter;
	skel->rodata->sig_mask[0] = env.sigs[0];
	skel->rodata->sig_mask[1] = env.sigs[1];
	for (i = 0; i < sizeof(kill_calls) / sizeof(kill_calls[0]); i++) {
		if (env.kill_only) {
			if (tk_ensure_tracefs())
				return 0;  /* tk_load reports it */
			tk_syscall_tp_or_off(skel->obj, kill_calls[i]);
		} else {
			/* NAME_enter and NAME_exit */
			snprintf(prefix, sizeof(prefix), "%s_e", kill_calls[i]);
			tk_programs_off(skel->obj, prefix);
		}
	}
	return 0;
}

TK_SKEL_OPS(sigsnoop_bpf);

int main(int argc, char **argv)
{
	struct sigsnoop_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	skel = tk_load(&sigsnoop_bpf_ops, configure, NULL);
	tk_events_open(skel->obj, handle_event, NULL);
	if (!tk_opts.json)
		print_header();
	tk_ready();
	tk_events_loop();
	tk_losses_report(skel->obj);
	sigsnoop_bpf__destroy(skel);
	return tk_exit_status();
}
