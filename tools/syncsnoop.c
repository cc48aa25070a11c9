/* syncsnoop: trace sync-family syscalls. */
#include <stdio.h>
#include <string.h>

#include "syncsnoop.h"
#include "syncsnoop.skel.h"
#include "tracekit.h"

#define F(v, n) { (v), (v), n }
static const struct tk_flag_name msync_flags[] = {
	F(1, "MS_ASYNC"), F(2, "MS_INVALIDATE"), F(4, "MS_SYNC"), { 0 },
};
static const struct tk_flag_name sfr_flags[] = {
	F(1, "SYNC_FILE_RANGE_WAIT_BEFORE"), F(2, "SYNC_FILE_RANGE_WRITE"),
	F(4, "SYNC_FILE_RANGE_WAIT_AFTER"), { 0 },
};
#undef F

/* Each call's name (also its tracepoints': sys_enter_<name>) and
 * arguments by name, for JSON. */
static const struct {
	const char *name;
	const char *args[4];
	const struct tk_flag_name *flags;   /* its last argument's names */
} calls[SYNC_SYS_MAX] = {
	[SYNC_SYS_SYNC] = { "sync", { 0 } },
	[SYNC_SYS_FSYNC] = { "fsync", { "fd" } },
	[SYNC_SYS_FDATASYNC] = { "fdatasync", { "fd" } },
	[SYNC_SYS_MSYNC] = { "msync", { "addr", "len", "flags" }, msync_flags },
	[SYNC_SYS_SYNC_FILE_RANGE] = { "sync_file_range",
		{ "fd", "offset", "nbytes", "flags" }, sfr_flags },
	[SYNC_SYS_SYNCFS] = { "syncfs", { "fd" } },
};

static const char doc[] =
"Trace sync-family syscalls: sync, fsync, fdatasync, msync,\n"
"sync_file_range and syncfs.\n"
"\v"
"bcc's columns: TIME(s), the call's entry in seconds since boot (the\n"
"kernel's monotonic clock, as bcc), COMM and CALL. JSON adds the pid,\n"
"tid, uid, each argument by name (flags in \"flag_names\"), the result\n"
"(\"ret\", \"error\") and the call's latency (\"lat_ns\"); the event is sent\n"
"when the call returns. Each call is traced where the kernel has its\n"
"tracepoint (-v says which were skipped); arm's sync_file_range2 is not.\n"
"\n"
"Examples:\n"
"  syncsnoop              # trace sync calls\n"
"  syncsnoop -p 181       # only PID 181\n"
"  syncsnoop -j -- make install   # NDJSON, of one command\n";

static const struct tk_tool tool = {
	.name = "syncsnoop",
	.doc = doc,
};

static void print_json(const struct sync_event *e)
{
	const char *const *names = calls[e->syscall].args;
	struct tk_json j;
	char buf[128];
	int i;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "sync");
	tk_json_time(&j);
	tk_json_int(&j, "pid", e->pid);
	tk_json_int(&j, "tid", e->tid);
	tk_json_int(&j, "uid", e->uid);
	tk_json_strn(&j, "comm", e->comm, strnlen(e->comm, sizeof(e->comm)));
	if (tk_opts.filter.cgroup_ids)
		tk_json_cgroup(&j, e->cgroup_id);
	tk_json_str(&j, "syscall", calls[e->syscall].name);
	tk_json_obj_open(&j, "args");
	for (i = 0; i < 4 && names[i]; i++) {
		if (!strcmp(names[i], "fd"))
			tk_json_int(&j, names[i], (int)e->args[i]);
		else
			tk_json_uint(&j, names[i], e->args[i]);
		if (!strcmp(names[i], "flags"))
			tk_json_str(&j, "flag_names", tk_flags_str(buf, sizeof(buf),
					e->args[i], calls[e->syscall].flags));
	}
	tk_json_obj_close(&j);
	tk_json_int(&j, "ret", e->ret);
	if (e->ret < 0 && tk_errno_name(e->ret))
		tk_json_str(&j, "error", tk_errno_name(e->ret));
	tk_json_uint(&j, "lat_ns", e->lat_ns);
	tk_json_end(&j);
}

static void print_text(const struct sync_event *e)
{
	char buf[16];

	if (tk_opts.time)
		printf("%-8s ", tk_time_str(buf, sizeof(buf)));
	printf("%-18.9f ", e->ts_ns / 1e9);
	tk_print_safe_padded(stdout, e->comm, strnlen(e->comm, sizeof(e->comm)), 16);
	putchar(' ');
	if (tk_opts.filter.cgroup_ids)
		tk_print_cgroup(stdout, e->cgroup_id, TK_CGROUP_WIDTH);
	printf("%s\n", calls[e->syscall].name);
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	const struct sync_event *e = data;

	(void)ctx;
	if (size < sizeof(*e) || e->syscall >= SYNC_SYS_MAX)
		return 0;  /* malformed */
	if (tk_opts.json)
		print_json(e);
	else
		print_text(e);
	return 0;
}

static int configure(void *s, void *ctx)
{
	struct syncsnoop_bpf *skel = s;
	int i;

	(void)ctx;
	if (tk_ensure_tracefs())
		return 0;  /* tk_load reports it */
	for (i = 0; i < SYNC_SYS_MAX; i++)
		tk_syscall_tp_or_off(skel->obj, calls[i].name);
	return 0;
}

TK_SKEL_OPS(syncsnoop_bpf);

int main(int argc, char **argv)
{
	struct syncsnoop_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	skel = tk_load(&syncsnoop_bpf_ops, configure, NULL);
	tk_events_open(skel->obj, handle_event, NULL);
	if (!tk_opts.json) {
		if (tk_opts.time)
			printf("%-8s ", "TIME");
		printf("%-18s %-16s ", "TIME(s)", "COMM");
		if (tk_opts.filter.cgroup_ids)
			printf("%-*s ", TK_CGROUP_WIDTH, TK_CGROUP_HEADER);
		printf("CALL\n");
	}
	tk_ready();
	tk_events_loop();
	tk_losses_report(skel->obj);
	syncsnoop_bpf__destroy(skel);
	return tk_exit_status();
}
