/* killsnoop: trace kill()-family syscalls. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "killsnoop.h"
#include "killsnoop.skel.h"
#include "tracekit.h"

static struct {
	bool failed;                 /* -x */
	int target;                  /* -T */
	bool sig_filter;             /* -s */
	unsigned long long sigs[2];
	int pid_width;               /* bcc: pid_max's digits + 1 */
} env;

enum { K_TPID = 'T' };

static const struct argp_option options[] = {
	{ "failed", 'x', 0, 0, "Only calls that failed", 0 },
	{ "tpid", K_TPID, "PID", 0, "Only calls aimed at this PID (or thread, or its process)", 0 },
	{ "signal", 's', "SIGNALS", 0, "Only these signals: numbers or names, comma-separated (9,TERM)", 0 },
	{ 0 },
};

/* Each call's name (also its tracepoints': sys_enter_<name>). */
static const char *const calls[KILL_SYS_MAX] = {
	[KILL_SYS_KILL] = "kill",
	[KILL_SYS_TKILL] = "tkill",
	[KILL_SYS_TGKILL] = "tgkill",
	[KILL_SYS_RT_SIGQUEUEINFO] = "rt_sigqueueinfo",
	[KILL_SYS_RT_TGSIGQUEUEINFO] = "rt_tgsigqueueinfo",
};

static const char doc[] =
"Trace signals sent by kill(), tkill(), tgkill(), rt_sigqueueinfo() and\n"
"rt_tgsigqueueinfo() (sigqueue, pthread_kill, raise).\n"
"\v"
"bcc's columns: TIME (HH:MM:SS), PID and COMM of the sender, SIG, TPID\n"
"(kill's pid argument: 0 and negative ones name a process group, -1 every\n"
"process; for tkill and tgkill the thread) and RESULT (0 or -errno); the\n"
"PID columns are as wide as pid_max, as bcc's. Each call is reported when\n"
"it returns. JSON adds the call, the sender's tid and uid, tgkill's\n"
"\"tgid\", the signal's name and the error's. bcc traces kill() only; -T\n"
"matches TPID or, for tgkill, the process. pidfd_send_signal() is not\n"
"traced.\n"
"\n"
"Examples:\n"
"  killsnoop              # trace kill()-family calls\n"
"  killsnoop -x           # only the calls that failed\n"
"  killsnoop -T 189       # only those aimed at PID 189\n"
"  killsnoop -s 9,TERM    # only SIGKILL and SIGTERM\n"
"  killsnoop -j -- ./run-tests   # NDJSON, of one command\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'x': env.failed = true; break;
	case K_TPID: env.target = tk_arg_long("--tpid", arg, 1, 0x7fffffff); break;
	case 's':
		tk_arg_signals("--signal", arg, env.sigs);
		env.sig_filter = true;
		break;
	default: return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "killsnoop",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "T",
};

static int pid_width(void)
{
	char buf[32] = "";
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");
	int n = 6;

	if (f && fgets(buf, sizeof(buf), f))
		n = (int)strcspn(buf, "\n") + 1;
	if (f)
		fclose(f);
	return n < 6 ? 6 : n;
}

static void print_header(void)
{
	int w = env.pid_width;

	if (tk_opts.time)
		printf("%-8s ", "TIME");
	printf("%-9s %-*s %-16s ", "TIME", w, "PID", "COMM");
	if (tk_opts.filter.cgroup_ids)
		printf("%-*s ", TK_CGROUP_WIDTH, TK_CGROUP_HEADER);
	printf("%-4s %-*s %s\n", "SIG", w, "TPID", "RESULT");
}

static void print_text(const struct kill_event *e)
{
	char buf[32];
	int w = env.pid_width;

	if (tk_opts.time)
		printf("%-8s ", tk_time_str(buf, sizeof(buf)));
	tk_time_str(buf, sizeof(buf));  /* bcc's TIME column */
	printf("%-9s %-*d ", buf, w, e->pid);
	tk_print_safe_padded(stdout, e->comm, strnlen(e->comm, sizeof(e->comm)), 16);
	putchar(' ');
	if (tk_opts.filter.cgroup_ids)
		tk_print_cgroup(stdout, e->cgroup_id, TK_CGROUP_WIDTH);
	printf("%-4d %-*d %d\n", e->sig, w, e->tpid, e->ret);
}

static void print_json(const struct kill_event *e)
{
	struct tk_json j;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "kill");
	tk_json_time(&j);
	tk_json_task(&j, e->pid, e->tid, e->uid, e->comm, sizeof(e->comm), e->cgroup_id);
	tk_json_str(&j, "syscall", calls[e->syscall]);
	tk_json_int(&j, "sig", e->sig);
	tk_json_name(&j, "signal_name", tk_signal_name(e->sig));
	tk_json_int(&j, "tpid", e->tpid);
	if (e->syscall == KILL_SYS_TGKILL || e->syscall == KILL_SYS_RT_TGSIGQUEUEINFO)
		tk_json_int(&j, "tgid", e->tgid);
	tk_json_int(&j, "ret", e->ret);
	tk_json_error(&j, e->ret);
	tk_json_end(&j);
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	const struct kill_event *e = data;

	(void)ctx;
	if (size < sizeof(*e) || e->syscall >= KILL_SYS_MAX)
		return 0;  /* malformed */
	if (tk_opts.json)
		print_json(e);
	else
		print_text(e);
	return 0;
}

static int configure(void *s, void *ctx)
{
	struct killsnoop_bpf *skel = s;
	int i;

	(void)ctx;
	skel->rodata->failed_only = env.failed;
	skel->rodata->target = env.target;
	skel->rodata->sig_filter = env.sig_filter;
	skel->rodata->sig_mask[0] = env.sigs[0];
	skel->rodata->sig_mask[1] = env.sigs[1];
	if (tk_ensure_tracefs())
		return 0;  /* tk_load reports it */
	for (i = 0; i < KILL_SYS_MAX; i++)
		tk_syscall_tp_or_off(skel->obj, calls[i]);
	return 0;
}

TK_SKEL_OPS(killsnoop_bpf);

int main(int argc, char **argv)
{
	struct killsnoop_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	env.pid_width = pid_width();
	skel = tk_load(&killsnoop_bpf_ops, configure, NULL);
	tk_events_open(skel->obj, handle_event, NULL);
	if (!tk_opts.json)
		print_header();
	tk_ready();
	tk_events_loop();
	tk_losses_report(skel->obj);
	killsnoop_bpf__destroy(skel);
	return tk_exit_status();
}
