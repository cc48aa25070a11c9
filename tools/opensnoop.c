/* opensnoop: trace open(), openat() and openat2() calls. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "opensnoop.h"
#include "opensnoop.skel.h"
#include "tracekit.h"

static struct {
	bool failed_only;
	bool extended;
	bool print_uid;
	bool timestamp;
	const char *path;    /* only opens whose path contains this */
} env;

static const struct argp_option options[] = {
	{ "failed", 'x', 0, 0, "Only failed opens", 0 },
	{ "extended-fields", 'e', 0, 0, "Print a FLAGS column (octal)", 0 },
	{ "print-uid", 'U', 0, 0, "Print a UID column", 0 },
	{ "timestamp", 't', 0, 0, "Print seconds since start (TIME(s))", 0 },
	{ "path", 'P', "SUBSTR", 0, "Only opens whose path contains SUBSTR", 0 },
	{ 0 },
};

static const char doc[] =
"Trace open(), openat() and openat2() syscalls, successful and failed.\n"
"\v"
"FD is the descriptor returned, or -1 with the errno in ERR. Paths are\n"
"printed as the caller passed them (relative paths stay relative).\n"
"\n"
"Limits: up to 4095 bytes of path are captured per open (PATH_MAX with\n"
"its NUL); a longer path is cut there and marked with \"...\" (JSON:\n"
"\"path_truncated\": true). open() and openat2() are traced where the\n"
"kernel has their tracepoints (-v says which were skipped).\n"
"\n"
"Examples:\n"
"  opensnoop              # trace all opens\n"
"  opensnoop -x           # only failed opens\n"
"  opensnoop -T -U -e     # with time, UID and flags columns\n"
"  opensnoop -p 181       # only PID 181\n"
"  opensnoop -n main      # only commands whose name contains \"main\"\n"
"  opensnoop -P /etc/     # only paths containing \"/etc/\"\n"
"  opensnoop -d 10        # trace for 10 seconds\n"
"  opensnoop -j | jq .path  # NDJSON\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'x': env.failed_only = true; break;
	case 'e': env.extended = true; break;
	case 'U': env.print_uid = true; break;
	case 't': env.timestamp = true; break;
	case 'P':
		if (!*arg)
			tk_usage_error("invalid --path value '': expected a non-empty string");
		env.path = arg;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "opensnoop",
	.doc = doc,
	.options = options,
	.parser = parse,
};

static const char *const syscall_names[] = { "open", "openat", "openat2" };

static void print_json(const struct open_event *e)
{
	struct tk_json j;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "open");
	tk_json_time(&j);
	tk_json_int(&j, "pid", e->pid);
	tk_json_int(&j, "tid", e->tid);
	tk_json_int(&j, "uid", e->uid);
	tk_json_strn(&j, "comm", e->comm, strnlen(e->comm, sizeof(e->comm)));
	tk_json_str(&j, "syscall", syscall_names[e->syscall]);
	if (e->ret >= 0)
		tk_json_int(&j, "fd", e->ret);
	else
		tk_json_null(&j, "fd");
	tk_json_int(&j, "ret", e->ret);
	if (e->ret < 0 && tk_errno_name(e->ret))
		tk_json_str(&j, "error", tk_errno_name(e->ret));
	tk_json_uint(&j, "flags", e->flags);
	if (e->ev_flags & OPEN_F_PATH_FAULT)
		tk_json_null(&j, "path");
	else
		tk_json_strn(&j, "path", e->path, e->path_len);
	tk_json_bool(&j, "path_truncated", e->ev_flags & OPEN_F_TRUNCATED);
	tk_json_end(&j);
}

static void print_text(const struct open_event *e)
{
	char buf[16];

	if (tk_opts.time)
		printf("%-8s ", tk_time_str(buf, sizeof(buf)));
	if (env.timestamp)
		printf("%-8.3f ", tk_elapsed());
	if (env.print_uid)
		printf("%-7d ", e->uid);
	printf("%-6d ", e->pid);
	tk_print_safe_padded(stdout, e->comm, strnlen(e->comm, sizeof(e->comm)), 16);
	printf(" %3d %3d ", e->ret >= 0 ? e->ret : -1,
	       e->ret >= 0 ? 0 : -e->ret);
	if (env.extended)
		printf("%08llo ", e->flags);
	if (e->ev_flags & OPEN_F_PATH_FAULT)
		fputs("[path unreadable]", stdout);
	tk_print_safe(stdout, e->path, e->path_len);
	if (e->ev_flags & OPEN_F_TRUNCATED)
		fputs("...", stdout);
	putchar('\n');
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	const struct open_event *e = data;

	(void)ctx;
	if (size < offsetof(struct open_event, path) ||
	    e->path_len > size - offsetof(struct open_event, path) ||
	    e->syscall > OPEN_SYS_OPENAT2)
		return 0;  /* malformed: never trust sizes blindly */
	if (env.path && !memmem(e->path, e->path_len, env.path, strlen(env.path)))
		return 0;
	if (tk_opts.json)
		print_json(e);
	else
		print_text(e);
	return 0;
}

/* open() (not on arm64) and openat2() (Linux 5.6+) are optional. */
static int configure(void *s, void *ctx)
{
	struct opensnoop_bpf *skel = s;

	(void)ctx;
	skel->rodata->failed_only = env.failed_only;
	if (tk_ensure_tracefs())
		return 0;  /* tk_load reports it */
	if (!tk_tracepoint_exists("syscalls", "sys_enter_open")) {
		tk_info("open(): no syscalls:sys_enter_open tracepoint on this kernel; not traced");
		bpf_program__set_autoload(skel->progs.open_enter, false);
		bpf_program__set_autoload(skel->progs.open_exit, false);
	}
	if (!tk_tracepoint_exists("syscalls", "sys_enter_openat2")) {
		tk_info("openat2(): no syscalls:sys_enter_openat2 tracepoint on this kernel; not traced");
		bpf_program__set_autoload(skel->progs.openat2_enter, false);
		bpf_program__set_autoload(skel->progs.openat2_exit, false);
	}
	return 0;
}

TK_SKEL_OPS(opensnoop_bpf);

int main(int argc, char **argv)
{
	struct opensnoop_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	skel = tk_load(&opensnoop_bpf_ops, configure, NULL);
	tk_events_open(skel->obj, handle_event, NULL);
	if (!tk_opts.json) {
		if (tk_opts.time)
			printf("%-8s ", "TIME");
		if (env.timestamp)
			printf("%-8s ", "TIME(s)");
		if (env.print_uid)
			printf("%-7s ", "UID");
		printf("%-6s %-16s %3s %3s ", "PID", "COMM", "FD", "ERR");
		if (env.extended)
			printf("%-8s ", "FLAGS");
		printf("PATH\n");
	}
	tk_ready();
	tk_events_loop();
	tk_losses_report(skel->obj);
	opensnoop_bpf__destroy(skel);
	return 0;
}
