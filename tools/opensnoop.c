/* opensnoop: trace open(), openat() and openat2() calls. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
	bool full_path;
	bool flag_filter;
	unsigned long long flags_any;  /* -f: any of these bits */
	bool flags_rdonly;             /* -f O_RDONLY: read-only access mode */
	const char *path;    /* only opens whose path contains this */
} env;

/* The kernel's O_LARGEFILE: glibc's is 0 on 64-bit, where the kernel
 * forces the bit itself, but a caller may still pass it. */
#if defined(__aarch64__)
#define K_O_LARGEFILE 0400000
#else
#define K_O_LARGEFILE 0100000
#endif

/* -f names, as bcc takes them (Python's os.O_*). */
static const struct { const char *name; unsigned long long bits; } open_flags[] = {
	{ "O_RDONLY", O_RDONLY }, { "O_WRONLY", O_WRONLY }, { "O_RDWR", O_RDWR },
	{ "O_CREAT", O_CREAT }, { "O_EXCL", O_EXCL }, { "O_NOCTTY", O_NOCTTY },
	{ "O_TRUNC", O_TRUNC }, { "O_APPEND", O_APPEND },
	{ "O_NONBLOCK", O_NONBLOCK }, { "O_NDELAY", O_NDELAY },
	{ "O_DSYNC", O_DSYNC }, { "O_SYNC", O_SYNC }, { "O_RSYNC", O_RSYNC },
	{ "O_ASYNC", O_ASYNC }, { "O_DIRECT", O_DIRECT },
	{ "O_LARGEFILE", K_O_LARGEFILE }, { "O_DIRECTORY", O_DIRECTORY },
	{ "O_NOFOLLOW", O_NOFOLLOW }, { "O_NOATIME", O_NOATIME },
	{ "O_CLOEXEC", O_CLOEXEC }, { "O_PATH", O_PATH },
	{ "O_TMPFILE", O_TMPFILE },
};

static void add_flag_filter(const char *arg)
{
	size_t i;

	for (i = 0; i < sizeof(open_flags) / sizeof(open_flags[0]); i++) {
		if (strcmp(arg, open_flags[i].name))
			continue;
		env.flag_filter = true;
		if (open_flags[i].bits == O_RDONLY)
			env.flags_rdonly = true;
		env.flags_any |= open_flags[i].bits;
		return;
	}
	tk_usage_error("invalid --flag-filter value '%s': expected an open flag name such as O_WRONLY, O_RDWR, O_CREAT, O_TRUNC or O_APPEND",
		       arg);
}

static const struct argp_option options[] = {
	{ "failed", 'x', 0, 0, "Only failed opens", 0 },
	{ "extended-fields", 'e', 0, 0, "Print a FLAGS column (octal)", 0 },
	{ "print-uid", 'U', 0, 0, "Print a UID column", 0 },
	{ "timestamp", 'T', 0, 0,
	  "Print seconds since start (TIME(s)), as bcc's -T; --time is the wall clock", 0 },
	{ "full-path", 'F', 0, 0,
	  "Print the full path of relative opens (cwd or dirfd resolved in BPF)", 0 },
	{ "flag-filter", 'f', "FLAG", 0,
	  "Only opens with any of these flags (O_WRONLY, O_CREAT, ...); repeatable", 0 },
	{ "path", 'P', "SUBSTR", 0,
	  "Only opens whose path (with -F: full path) contains SUBSTR", 0 },
	{ 0 },
};

static const char doc[] =
"Trace open(), openat() and openat2() syscalls, successful and failed.\n"
"\v"
"FD is the descriptor returned, or -1 with the errno in ERR. Paths are\n"
"printed as the caller passed them (relative paths stay relative), or\n"
"with -F as full paths. --print-cgroup adds CGROUP, the opener's cgroup\n"
"v2 path, before PATH.\n"
"\n"
"bcc's letters: -T is bcc's seconds since start (TIME(s), long name\n"
"--timestamp); tracekit's wall-clock column (-T in other tools) is\n"
"--time here. -t TID is bcc's thread filter, the common --tid; with it\n"
"the first column is the TID, as in bcc.\n"
"\n"
"-F: a relative path is joined to the directory it is relative to, the\n"
"caller's working directory or openat's dirfd, whose path is walked in\n"
"BPF at the time of the call (the caller may be gone before /proc could\n"
"be read), across mount points, up to the caller's root (a chroot or a\n"
"container shows its own view). The walk stops after 64 steps (names\n"
"plus mount points) or 4095 bytes: the path then starts with \".../\"\n"
"(JSON: \"path_prefix_missing\": true). A dirfd that is not open leaves\n"
"the path as passed. Symbolic links and \"..\" in the caller's part are\n"
"not resolved: it is the directory, not the file opened, that is walked.\n"
"A directory deleted while in use is shown by the path it had.\n"
"\n"
"-f FLAG: opens whose flags have any of the FLAGs' bits, as bcc's -f.\n"
"O_RDONLY has no bit (it is 0): here it matches opens whose access mode\n"
"is read-only (bcc's -f O_RDONLY matches nothing). O_SYNC and O_TMPFILE\n"
"are several bits: any of them matches (O_TMPFILE: O_DIRECTORY too).\n"
"FLAG names: O_RDONLY O_WRONLY O_RDWR O_CREAT O_EXCL O_NOCTTY O_TRUNC\n"
"O_APPEND O_NONBLOCK O_NDELAY O_DSYNC O_SYNC O_RSYNC O_ASYNC O_DIRECT\n"
"O_LARGEFILE O_DIRECTORY O_NOFOLLOW O_NOATIME O_CLOEXEC O_PATH O_TMPFILE.\n"
"\n"
"Limits: up to 4095 bytes of path are captured per open (PATH_MAX with\n"
"its NUL); a longer path is cut there and marked with \"...\" (JSON:\n"
"\"path_truncated\": true). open() and openat2() are traced where the\n"
"kernel has their tracepoints (-v says which were skipped).\n"
"\n"
"Examples:\n"
"  opensnoop              # trace all opens\n"
"  opensnoop -x           # only failed opens\n"
"  opensnoop -T -U -e     # with TIME(s), UID and flags columns\n"
"  opensnoop -t 123       # only thread 123\n"
"  opensnoop -F           # full paths of relative opens\n"
"  opensnoop -f O_WRONLY -f O_RDWR  # only opens for writing\n"
"  opensnoop -p 181       # only PID 181\n"
"  opensnoop -n main      # only commands whose name contains \"main\"\n"
"  opensnoop -P /etc/     # only paths containing \"/etc/\"\n"
"  opensnoop --print-cgroup  # with the opener's cgroup (CGROUP column)\n"
"  opensnoop -d 10        # trace for 10 seconds\n"
"  opensnoop -j | jq .path  # NDJSON\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'x': env.failed_only = true; break;
	case 'e': env.extended = true; break;
	case 'U': env.print_uid = true; break;
	case 'T': env.timestamp = true; break;
	case 'F': env.full_path = true; break;
	case 'f': add_flag_filter(arg); break;
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

/* bcc's perf buffer is sized in pages per CPU; tracekit's buffer in KiB
 * (one ring for all CPUs where the kernel has it). */
static const struct tk_bcc_missing bcc_missing[] = {
	{ "-b", "use --buffer-kb KB (the event buffer in KiB, not pages)" },
	{ "--buffer-pages", "use --buffer-kb KB (the event buffer in KiB, not pages)" },
	{ 0 },
};

/* bcc's letter for the thread filter: the common --tid (lists too). */
static const struct tk_letter letters[] = { { 't', "tid" }, { 0 } };

static const struct tk_tool tool = {
	.name = "opensnoop",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "T",
	.letters = letters,
	.bcc_missing = bcc_missing,
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
	if (tk_opts.filter.cgroup_ids)
		tk_json_cgroup(&j, e->cgroup_id);
	if (e->ev_flags & OPEN_F_PATH_FAULT)
		tk_json_null(&j, "path");
	else
		tk_json_strn(&j, "path", e->path, e->path_len);
	tk_json_bool(&j, "path_truncated", e->ev_flags & OPEN_F_TRUNCATED);
	if (env.full_path)
		tk_json_bool(&j, "path_prefix_missing",
			     e->ev_flags & OPEN_F_PREFIX_CUT);
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
	printf("%-6d ", tk_opts.filter.tid ? e->tid : e->pid);
	tk_print_safe_padded(stdout, e->comm, strnlen(e->comm, sizeof(e->comm)), 16);
	printf(" %3d %3d ", e->ret >= 0 ? e->ret : -1,
	       e->ret >= 0 ? 0 : -e->ret);
	if (env.extended)
		printf("%08llo ", e->flags);
	if (tk_opts.filter.cgroup_ids)
		tk_print_cgroup(stdout, e->cgroup_id, TK_CGROUP_WIDTH);
	if (e->ev_flags & OPEN_F_PATH_FAULT)
		fputs("[path unreadable]", stdout);
	if (e->ev_flags & OPEN_F_PREFIX_CUT)
		fputs("...", stdout);
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
	skel->rodata->full_path = env.full_path;
	skel->rodata->flag_filter = env.flag_filter;
	skel->rodata->flags_any = env.flags_any;
	skel->rodata->flags_rdonly = env.flags_rdonly;
	if (tk_ensure_tracefs())
		return 0;  /* tk_load reports it */
	tk_syscall_tp_or_off(skel->obj, "open");
	tk_syscall_tp_or_off(skel->obj, "openat2");
	return 0;
}

TK_SKEL_OPS(opensnoop_bpf);

int main(int argc, char **argv)
{
	struct opensnoop_bpf *skel;

	static const char *const opens[] = { "open", "openat", "openat2" };

	tk_parse_args(&tool, argc, argv);
	tk_init();
	tk_syscall_exits_target("open_exit", opens, sizeof(opens) / sizeof(opens[0]),
				"the open syscalls' exits");
	skel = tk_load(&opensnoop_bpf_ops, configure, NULL);
	tk_events_open(skel->obj, handle_event, NULL);
	if (!tk_opts.json) {
		if (tk_opts.time)
			printf("%-8s ", "TIME");
		if (env.timestamp)
			printf("%-8s ", "TIME(s)");
		if (env.print_uid)
			printf("%-7s ", "UID");
		printf("%-6s %-16s %3s %3s ", tk_opts.filter.tid ? "TID" : "PID",
		       "COMM", "FD", "ERR");
		if (env.extended)
			printf("%-8s ", "FLAGS");
		if (tk_opts.filter.cgroup_ids)
			printf("%-*s ", TK_CGROUP_WIDTH, TK_CGROUP_HEADER);
		printf("PATH\n");
	}
	tk_ready();
	tk_events_loop();
	tk_losses_report(skel->obj);
	opensnoop_bpf__destroy(skel);
	return tk_exit_status();
}
