/* execsnoop: trace exec() calls, successful and failed. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "execsnoop.h"
#include "execsnoop.skel.h"
#include "tracekit.h"

#define DEFAULT_MAX_ARGS 20

static struct {
	bool failed_only;
	bool print_uid;
	bool print_pcomm;
	bool print_cpu;
	bool quote;
	bool timestamp;
	const char *line;    /* only execs whose argv contains this */
	char comm[TK_TASK_COMM_LEN];  /* -n: matched against the new comm */
	long max_args;
} env = { .max_args = DEFAULT_MAX_ARGS };

enum { K_MAX_ARGS = 0x2000, K_FAILED_ONLY };

static const struct argp_option options[] = {
	{ "fails", 'x', 0, 0,
	  "Include failed execs (bcc's flag: they are shown by default here)", 0 },
	{ "failed-only", K_FAILED_ONLY, 0, 0, "Only failed execs", 0 },
	{ "quote", 'q', 0, 0,
	  "Put \"quotemarks\" around each argument (\" inside one as \\\")", 0 },
	{ "print-uid", 'U', 0, 0, "Print a UID column", 0 },
	{ "print-pcomm", 'M', 0, 0,
	  "Print the parent's command (PCOMM; the first column is then COMM)", 0 },
	{ "print-cpu", 'C', 0, 0, "Print the CPU the exec returned on", 0 },
	{ "timestamp", 't', 0, 0, "Print seconds since start (TIME(s))", 0 },
	{ "line", 'l', "STR", 0, "Only execs whose arguments contain STR", 0 },
	{ "max-args", K_MAX_ARGS, "N", 0,
	  "Print at most N arguments (default 20, at most 1000)", 0 },
	{ 0 },
};

/* bcc's -P is the common --ppid. */
static const struct tk_letter letters[] = { { 'P', "ppid" }, { 0 } };

static const char doc[] =
"Trace exec() syscalls, successful and failed.\n"
"\v"
"Limits: up to 8192 bytes of argv are captured per exec (all arguments\n"
"together); a failed exec's arguments are read from the caller, at most\n"
"64 arguments of at most 1023 bytes each. Arguments past --max-args or\n"
"past a limit are marked with \"...\" (JSON: \"args_truncated\": true).\n"
"-n matches the comm of the program exec'd (a substring; bcc: a Python\n"
"regex over the same comm). JSON records always carry ppid, pcomm and cpu.\n"
"\n"
"Examples:\n"
"  execsnoop              # trace all execs\n"
"  execsnoop --failed-only  # only failed execs\n"
"  execsnoop -T -U        # with time and UID columns\n"
"  execsnoop -M -C        # with parent command and CPU columns\n"
"  execsnoop -P 181       # only children of process 181\n"
"  execsnoop -q           # \"quote\" \"each\" \"argument\"\n"
"  execsnoop -n sh        # only programs whose name contains \"sh\"\n"
"  execsnoop -l --verbose # only execs with \"--verbose\" among the args\n"
"  execsnoop -u 1000      # only UID 1000\n"
"  execsnoop -c /sys/fs/cgroup/unified/system.slice  # only this cgroup\n"
"  execsnoop -j | jq .argv  # NDJSON\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'x': break;  /* bcc's "include failed execs": the default */
	case K_FAILED_ONLY: env.failed_only = true; break;
	case 'q': env.quote = true; break;
	case 'U': env.print_uid = true; break;
	case 'M': env.print_pcomm = true; break;
	case 'C': env.print_cpu = true; break;
	case 't': env.timestamp = true; break;
	case 'l':
		if (!*arg)
			tk_usage_error("invalid --line value '': expected a non-empty string");
		env.line = arg;
		break;
	case K_MAX_ARGS:
		env.max_args = tk_arg_long("--max-args", arg, 1, 1000);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "execsnoop",
	.doc = doc,
	.options = options,
	.parser = parse,
	.letters = letters,
};

/* True when one of the NUL-separated arguments contains env.line. */
static bool args_match(const struct exec_event *e)
{
	const char *p = e->args, *end = e->args + e->args_size;

	while (p < end) {
		size_t n = strnlen(p, end - p);

		if (memmem(p, n, env.line, strlen(env.line)))
			return true;
		p += n + 1;
	}
	return false;
}

static bool truncated(const struct exec_event *e, int shown)
{
	return (e->flags & EXEC_F_TRUNCATED) || shown < e->argc;
}

static void print_json(const struct exec_event *e)
{
	const char *p = e->args, *end = e->args + e->args_size;
	struct tk_json j;
	int shown = 0;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "exec");
	tk_json_time(&j);
	tk_json_int(&j, "pid", e->pid);
	tk_json_int(&j, "ppid", e->ppid);
	tk_json_int(&j, "uid", e->uid);
	tk_json_strn(&j, "comm", e->comm, strnlen(e->comm, sizeof(e->comm)));
	tk_json_strn(&j, "pcomm", e->pcomm, strnlen(e->pcomm, sizeof(e->pcomm)));
	tk_json_int(&j, "cpu", e->cpu);
	tk_json_int(&j, "ret", e->ret);
	if (tk_opts.filter.cgroup_ids)
		tk_json_cgroup(&j, e->cgroup_id);
	if (e->ret < 0 && tk_errno_name(e->ret))
		tk_json_str(&j, "error", tk_errno_name(e->ret));
	tk_json_int(&j, "argc", e->argc);
	tk_json_arr_open(&j, "argv");
	while (p < end && shown < env.max_args) {
		size_t n = strnlen(p, end - p);

		tk_json_strn(&j, NULL, p, n);
		shown++;
		p += n + 1;
	}
	tk_json_arr_close(&j);
	tk_json_bool(&j, "args_truncated", truncated(e, shown));
	if (e->flags & EXEC_F_ARGV_FAULT)
		tk_json_bool(&j, "args_unreadable", true);
	tk_json_end(&j);
}

/* -q as bcc prints it: "arg", a quote inside as \" (and nothing else
 * escaped by bcc; control bytes get tracekit's \xNN as without -q). */
static void print_quoted(const char *p, size_t n)
{
	const char *q;

	putchar('"');
	while ((q = memchr(p, '"', n))) {
		tk_print_safe(stdout, p, q - p);
		fputs("\\\"", stdout);
		n -= q - p + 1;
		p = q + 1;
	}
	tk_print_safe(stdout, p, n);
	putchar('"');
}

static void print_text(const struct exec_event *e)
{
	const char *p = e->args, *end = e->args + e->args_size;
	char buf[16];
	int shown = 0;

	if (tk_opts.time)
		printf("%-8s ", tk_time_str(buf, sizeof(buf)));
	if (env.timestamp)
		printf("%-8.3f ", tk_elapsed());
	if (env.print_uid)
		printf("%-6d ", e->uid);
	tk_print_safe_padded(stdout, e->comm, strnlen(e->comm, sizeof(e->comm)), 16);
	printf(" %-6d ", e->pid);
	if (env.print_pcomm) {
		tk_print_safe_padded(stdout, e->pcomm,
				     strnlen(e->pcomm, sizeof(e->pcomm)), 16);
		putchar(' ');
	}
	printf("%-6d ", e->ppid);
	if (env.print_cpu)
		printf("%-4d ", e->cpu);
	printf("%3d ", e->ret);
	if (tk_opts.filter.cgroup_ids)
		tk_print_cgroup(stdout, e->cgroup_id, TK_CGROUP_WIDTH);
	while (p < end && shown < env.max_args) {
		size_t n = strnlen(p, end - p);

		if (shown)
			putchar(' ');
		if (env.quote)
			print_quoted(p, n);
		else
			tk_print_safe(stdout, p, n);
		shown++;
		p += n + 1;
	}
	if (e->flags & EXEC_F_ARGV_FAULT && !shown)
		fputs("[argv unreadable]", stdout);
	if (truncated(e, shown))
		fputs(" ...", stdout);
	putchar('\n');
}

/* libbpf-tools' header, whose first column is PCOMM; with -M, bcc's:
 * COMM PID PCOMM PPID, and CPU (-C) after PPID as in bcc. */
static void print_header(void)
{
	if (tk_opts.time)
		printf("%-8s ", "TIME");
	if (env.timestamp)
		printf("%-8s ", "TIME(s)");
	if (env.print_uid)
		printf("%-6s ", "UID");
	printf("%-16s %-6s ", env.print_pcomm ? "COMM" : "PCOMM", "PID");
	if (env.print_pcomm)
		printf("%-16s ", "PCOMM");
	printf("%-6s ", "PPID");
	if (env.print_cpu)
		printf("%-4s ", "CPU");
	printf("%3s ", "RET");
	if (tk_opts.filter.cgroup_ids)
		printf("%-*s ", TK_CGROUP_WIDTH, TK_CGROUP_HEADER);
	printf("%s\n", "ARGS");
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	const struct exec_event *e = data;

	(void)ctx;
	if (size < offsetof(struct exec_event, args) ||
	    e->args_size > size - offsetof(struct exec_event, args))
		return 0;  /* malformed: never trust sizes blindly */
	if (env.line && !args_match(e))
		return 0;
	if (env.comm[0] && !strstr(e->comm, env.comm))
		return 0;
	if (tk_opts.json)
		print_json(e);
	else
		print_text(e);
	return 0;
}

static int configure(void *s, void *ctx)
{
	struct execsnoop_bpf *skel = s;

	(void)ctx;
	skel->rodata->failed_only = env.failed_only;
	return 0;
}

TK_SKEL_OPS(execsnoop_bpf);

int main(int argc, char **argv)
{
	struct execsnoop_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	/* -n names the program exec'd, not the caller: match it on the
	 * event's comm rather than in the kernel's task filter. */
	memcpy(env.comm, tk_opts.filter.comm, sizeof(env.comm));
	memset(tk_opts.filter.comm, 0, sizeof(tk_opts.filter.comm));
	skel = tk_load(&execsnoop_bpf_ops, configure, NULL);
	tk_events_open(skel->obj, handle_event, NULL);
	if (!tk_opts.json)
		print_header();
	tk_ready();
	tk_events_loop();
	tk_losses_report(skel->obj);
	execsnoop_bpf__destroy(skel);
	return tk_exit_status();
}
