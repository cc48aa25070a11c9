/* statsnoop: trace stat-family syscalls. */
#include <stdio.h>
#include <string.h>

#include "statsnoop.h"
#include "statsnoop.skel.h"
#include "tracekit.h"

static struct {
	bool failed_only;
	bool timestamp;
	bool sysname;
} env;

/* The kernel's names, as libbpf-tools prints them: newstat is stat(2),
 * newlstat lstat(2), newfstat fstat(2). */
static const char *const syscall_names[STAT_SYS_MAX] = {
	"statfs", "newstat", "statx", "newfstat", "newfstatat", "newlstat",
};

static const struct argp_option options[] = {
	{ "timestamp", 't', 0, 0, "Print TIME(s): seconds since the first call shown", 0 },
	{ "sysname", 's', 0, 0, "Print a SYSCALL column", 0 },
	{ "failed", 'x', 0, 0, "Only failed calls", 0 },
	{ 0 },
};

static const char doc[] =
"Trace stat-family syscalls: statfs, newstat (stat), newlstat (lstat),\n"
"newfstat (fstat), newfstatat and statx, successful and failed.\n"
"\v"
"The set is libbpf-tools' statsnoop's; each is traced where the kernel\n"
"has its tracepoint (-v says which were skipped). glibc's stat() and\n"
"fstat() are newfstatat on x86_64 since glibc 2.33; fstatfs, ustat and\n"
"the 32-bit stat64 family are not traced.\n"
"\n"
"FD is bcc's name for the result: 0, or -1 with the errno in ERR. PATH\n"
"is the path as the caller passed it (relative stays relative). fstat\n"
"has none, and an empty path with a dirfd (AT_EMPTY_PATH, as glibc's\n"
"fstat) names none: PATH is then the path of the file behind the fd,\n"
"walked in BPF during the call (up to 64 names; \"...\" first when\n"
"cut; JSON: \"fd_path\": true), where libbpf-tools reads /proc after\n"
"the call.\n"
"Up to 4095 bytes of path are captured; a longer one ends in \"...\".\n"
"\n"
"Examples:\n"
"  statsnoop              # trace stat calls\n"
"  statsnoop -t           # with TIME(s)\n"
"  statsnoop -s           # with the syscall's name\n"
"  statsnoop -x           # only failed calls\n"
"  statsnoop -p 181       # only PID 181\n"
"  statsnoop -j -- ls /   # NDJSON, of one command\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)arg;
	(void)state;
	switch (key) {
	case 'x': env.failed_only = true; break;
	case 't': env.timestamp = true; break;
	case 's': env.sysname = true; break;
	default: return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "statsnoop",
	.doc = doc,
	.options = options,
	.parser = parse,
};

static void print_json(const struct stat_event *e)
{
	struct tk_json j;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "stat");
	tk_json_time(&j);
	tk_json_int(&j, "pid", e->pid);
	tk_json_int(&j, "tid", e->tid);
	tk_json_int(&j, "uid", e->uid);
	tk_json_strn(&j, "comm", e->comm, strnlen(e->comm, sizeof(e->comm)));
	tk_json_str(&j, "syscall", syscall_names[e->syscall]);
	tk_json_int(&j, "ret", e->ret);
	if (e->ret < 0 && tk_errno_name(e->ret))
		tk_json_str(&j, "error", tk_errno_name(e->ret));
	if (e->syscall == STAT_SYS_NEWFSTAT)
		tk_json_int(&j, "fd", e->fd);
	else if (e->fd != -1)
		tk_json_int(&j, "dirfd", e->fd);
	if (tk_opts.filter.cgroup_ids)
		tk_json_cgroup(&j, e->cgroup_id);
	if (e->ev_flags & STAT_F_PATH_FAULT ||
	    (e->syscall == STAT_SYS_NEWFSTAT && !(e->ev_flags & STAT_F_FD_PATH)))
		tk_json_null(&j, "path");
	else
		tk_json_strn(&j, "path", e->path, e->path_len);
	tk_json_bool(&j, "path_truncated", e->ev_flags & STAT_F_TRUNCATED);
	tk_json_bool(&j, "fd_path", e->ev_flags & STAT_F_FD_PATH);
	if (e->ev_flags & STAT_F_FD_PATH)
		tk_json_bool(&j, "path_prefix_missing", e->ev_flags & STAT_F_PREFIX_CUT);
	tk_json_end(&j);
}

static void print_text(const struct stat_event *e)
{
	static unsigned long long first_ns;
	char buf[16];

	if (!first_ns)
		first_ns = e->ts_ns;
	if (tk_opts.time)
		printf("%-8s ", tk_time_str(buf, sizeof(buf)));
	if (env.timestamp)
		printf("%-14.9f", (e->ts_ns - first_ns) / 1e9);
	printf("%-7d ", tk_opts.filter.tid ? e->tid : e->pid);
	tk_print_safe_padded(stdout, e->comm, strnlen(e->comm, sizeof(e->comm)), 16);
	printf(" %4d %3d", e->ret >= 0 ? e->ret : -1, e->ret >= 0 ? 0 : -e->ret);
	if (env.sysname)
		printf(" %-12s", syscall_names[e->syscall]);
	putchar(' ');
	if (tk_opts.filter.cgroup_ids) {
		tk_print_cgroup(stdout, e->cgroup_id, TK_CGROUP_WIDTH);
	}
	if (e->ev_flags & STAT_F_PATH_FAULT)
		fputs("[path unreadable]", stdout);
	if (e->ev_flags & STAT_F_PREFIX_CUT)
		fputs("...", stdout);
	tk_print_safe(stdout, e->path, e->path_len);
	if (e->ev_flags & STAT_F_TRUNCATED)
		fputs("...", stdout);
	putchar('\n');
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	const struct stat_event *e = data;

	(void)ctx;
	if (size < offsetof(struct stat_event, path) ||
	    e->path_len > size - offsetof(struct stat_event, path) ||
	    e->syscall >= STAT_SYS_MAX)
		return 0;  /* malformed: never trust sizes blindly */
	if (tk_opts.json)
		print_json(e);
	else
		print_text(e);
	return 0;
}

static int configure(void *s, void *ctx)
{
	struct statsnoop_bpf *skel = s;
	int i;

	(void)ctx;
	skel->rodata->failed_only = env.failed_only;
	if (tk_ensure_tracefs())
		return 0;  /* tk_load reports it */
	for (i = 0; i < STAT_SYS_MAX; i++)
		tk_syscall_tp_or_off(skel->obj, syscall_names[i]);
	return 0;
}

TK_SKEL_OPS(statsnoop_bpf);

int main(int argc, char **argv)
{
	struct statsnoop_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	tk_syscall_exits_target("stat_exit", syscall_names, STAT_SYS_MAX,
				"the stat syscalls' exits");
	skel = tk_load(&statsnoop_bpf_ops, configure, NULL);
	tk_events_open(skel->obj, handle_event, NULL);
	if (!tk_opts.json) {
		if (tk_opts.time)
			printf("%-8s ", "TIME");
		if (env.timestamp)
			printf("%-14s", "TIME(s)");
		printf("%-7s %-16s %4s %3s", tk_opts.filter.tid ? "TID" : "PID",
		       "COMM", "FD", "ERR");
		if (env.sysname)
			printf(" %-12s", "SYSCALL");
		putchar(' ');
		if (tk_opts.filter.cgroup_ids)
			printf("%-*s ", TK_CGROUP_WIDTH, TK_CGROUP_HEADER);
		printf("PATH\n");
	}
	tk_ready();
	tk_events_loop();
	tk_losses_report(skel->obj);
	statsnoop_bpf__destroy(skel);
	return tk_exit_status();
}
