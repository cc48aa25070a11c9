/* filelife: files created and deleted while tracing, with their age. */
#include <stdio.h>
#include <string.h>

#include "filelife.h"
#include "filelife.skel.h"
#include "kfunc_or_tp.h"
#include "tracekit.h"

static const char doc[] =
"Trace short-lived files: those created and then deleted while tracing,\n"
"with their age and who deleted them.\n"
"\v"
"A line per deleted file: TIME of the deletion, PID and COMM of the\n"
"deleting process, AGE(s) from creation to deletion, FILE its name (the\n"
"last component of its path). Files that existed before tracing began\n"
"are not shown. Task filters (-p, -u, -n, -c, ...) apply to the creator\n"
"and to the deleter: both must pass. JSON: \"age_ns\", \"file\".\n"
"\n"
"Kernel functions are traced where the kernel allows it (fentry, else\n"
"kprobes), as bcc: security_inode_create sees every regular file made\n"
"by name, by any caller (open with O_CREAT, creat, mknod, nfsd), and\n"
"vfs_unlink every deletion. On a kernel without either (-v says), the\n"
"syscall tracepoints are used: creations by open, openat, openat2 and\n"
"creat (files those calls really made, not those they opened), deletions\n"
"by unlink and unlinkat, matched by path. They do not see mknod(2), files\n"
"made or deleted by the kernel itself, renames over a file, a deletion by\n"
"a path spelled otherwise than the file's own (\"./\", \"..\", \"//\", a\n"
"symbolic link to a directory), nor paths deeper than 64 components.\n"
"TRACEKIT_ATTACH=tp chooses the tracepoints on any kernel.\n"
"Up to 16384 files created and not yet deleted are remembered; beyond\n"
"that the oldest are forgotten (their deletion is not shown).\n"
"\n"
"Examples:\n"
"  filelife               # trace short-lived files\n"
"  filelife -p 181        # only files made and deleted by PID 181\n"
"  filelife -j            # NDJSON\n";

static const struct tk_tool tool = {
	.name = "filelife",
	.doc = doc,
};

static const char *tp_blind =
	"mknod(2), the kernel's own creations and deletions, renames over a file, "
	"or deletions by a path spelled otherwise than the created file's";

/* FILE: the last component of the name (the tracepoint way sends the
 * path as unlink's caller passed it). */
static const char *last_component(const struct filelife_event *e, size_t *len)
{
	const char *slash = memrchr(e->name, '/', e->name_len);
	const char *name = slash ? slash + 1 : e->name;

	*len = e->name_len - (name - e->name);
	return name;
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	const struct filelife_event *e = data;
	const char *name;
	struct tk_json j;
	size_t len;
	char hms[16];

	(void)ctx;
	if (size < offsetof(struct filelife_event, name) ||
	    e->name_len > size - offsetof(struct filelife_event, name))
		return 0;  /* malformed */
	name = last_component(e, &len);
	if (tk_opts.json) {
		tk_json_begin(&j, stdout);
		tk_json_str(&j, "type", "filelife");
		tk_json_time(&j);
		tk_json_int(&j, "pid", e->pid);
		tk_json_int(&j, "tid", e->tid);
		tk_json_int(&j, "uid", e->uid);
		tk_json_strn(&j, "comm", e->comm, strnlen(e->comm, sizeof(e->comm)));
		tk_json_uint(&j, "age_ns", e->age_ns);
		if (tk_opts.filter.cgroup_ids)
			tk_json_cgroup(&j, e->cgroup_id);
		if (e->flags & FILELIFE_F_FAULT)
			tk_json_null(&j, "file");
		else
			tk_json_strn(&j, "file", name, len);
		tk_json_end(&j);
		return 0;
	}
	printf("%-8s %-7d ", tk_time_str(hms, sizeof(hms)), e->pid);
	tk_print_safe_padded(stdout, e->comm, strnlen(e->comm, sizeof(e->comm)), 16);
	printf(" %-7.2f ", e->age_ns / 1e9);
	if (tk_opts.filter.cgroup_ids)
		tk_print_cgroup(stdout, e->cgroup_id, TK_CGROUP_WIDTH);
	if (e->flags & FILELIFE_F_FAULT)
		fputs("[name unreadable]", stdout);
	tk_print_safe(stdout, name, len);
	putchar('\n');
	return 0;
}

/* unlink() has no tracepoints on arm64 (nor open() and creat(), whose
 * exits main leaves out). */
static int configure(void *s, void *ctx)
{
	struct filelife_bpf *skel = s;
	const enum tk_way *way = ctx;

	if (*way != TK_WAY_TP || tk_ensure_tracefs())
		return 0;  /* tk_load reports a missing tracefs */
	if (!tk_tracepoint_exists("syscalls", "sys_exit_unlink"))
		bpf_program__set_autoload(skel->progs.tp_unlink_enter_tp, false);
	return 0;
}

TK_SKEL_OPS(filelife_bpf);

int main(int argc, char **argv)
{
	static enum tk_way way;
	struct filelife_bpf *skel;

	static const char *const opens[] = { "open", "openat", "openat2", "creat" };
	static const char *const unlinks[] = { "unlink", "unlinkat" };

	tk_parse_args(&tool, argc, argv);
	tk_init();
	/* The tracepoint way's exits (those the kernel has: arm64 has no
	 * open, creat or unlink). */
	tk_syscall_exits_target("tp_opens_exit", opens, sizeof(opens) / sizeof(opens[0]),
				"the open and creat syscalls' exits");
	tk_syscall_exits_target("tp_unlinks_exit", unlinks, sizeof(unlinks) / sizeof(unlinks[0]),
				"the unlink syscalls' exits");
	skel = tk_load_kfunc_or_tp(&filelife_bpf_ops, configure, &way, &way, tp_blind);
	tk_events_open(skel->obj, handle_event, NULL);
	if (!tk_opts.json) {
		printf("%-8s %-7s %-16s %-7s ", "TIME", "PID", "COMM", "AGE(s)");
		if (tk_opts.filter.cgroup_ids)
			printf("%-*s ", TK_CGROUP_WIDTH, TK_CGROUP_HEADER);
		printf("FILE\n");
	}
	tk_ready();
	tk_events_loop();
	tk_losses_report(skel->obj);
	filelife_bpf__destroy(skel);
	return tk_exit_status();
}
