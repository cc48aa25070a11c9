/* mountsnoop: trace mount(), umount2() and the new mount API. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mountsnoop.h"
#include "mountsnoop.skel.h"
#include "tracekit.h"

static struct {
	bool parent;   /* -P: PCOMM and PPID columns */
} env;

/* The values of <linux/mount.h> and <linux/fcntl.h>, spelled out: a
 * build host's headers may predate the newest (MOVE_MOUNT_BENEATH is
 * 6.5), and <linux/mount.h> clashes with glibc's <sys/mount.h>. */
#define F(v, n) { (v), (v), n }
static const struct tk_flag_name mount_flags[] = {
	{ 0xffff0000, 0xc0ed0000, "MS_MGC_VAL" },
	F(1, "MS_RDONLY"), F(2, "MS_NOSUID"), F(4, "MS_NODEV"),
	F(8, "MS_NOEXEC"), F(16, "MS_SYNCHRONOUS"), F(32, "MS_REMOUNT"),
	F(64, "MS_MANDLOCK"), F(128, "MS_DIRSYNC"), F(256, "MS_NOSYMFOLLOW"),
	F(1024, "MS_NOATIME"), F(2048, "MS_NODIRATIME"), F(4096, "MS_BIND"),
	F(8192, "MS_MOVE"), F(16384, "MS_REC"), F(32768, "MS_SILENT"),
	F(1 << 16, "MS_POSIXACL"), F(1 << 17, "MS_UNBINDABLE"),
	F(1 << 18, "MS_PRIVATE"), F(1 << 19, "MS_SLAVE"),
	F(1 << 20, "MS_SHARED"), F(1 << 21, "MS_RELATIME"),
	F(1 << 22, "MS_KERNMOUNT"), F(1 << 23, "MS_I_VERSION"),
	F(1 << 24, "MS_STRICTATIME"), F(1 << 25, "MS_LAZYTIME"),
	F(1 << 30, "MS_ACTIVE"), F(1U << 31, "MS_NOUSER"),
	{ 0 },
};
static const struct tk_flag_name umount_flags[] = {
	F(1, "MNT_FORCE"), F(2, "MNT_DETACH"), F(4, "MNT_EXPIRE"),
	F(8, "UMOUNT_NOFOLLOW"), { 0 },
};
static const struct tk_flag_name fsopen_flags[] = {
	F(1, "FSOPEN_CLOEXEC"), { 0 },
};
static const struct tk_flag_name fsmount_flags[] = {
	F(1, "FSMOUNT_CLOEXEC"), { 0 },
};
/* The atime field (0x70) holds one value, not bits; RELATIME is 0. */
static const struct tk_flag_name mount_attr_flags[] = {
	F(1, "MOUNT_ATTR_RDONLY"), F(2, "MOUNT_ATTR_NOSUID"),
	F(4, "MOUNT_ATTR_NODEV"), F(8, "MOUNT_ATTR_NOEXEC"),
	{ 0x70, 0x10, "MOUNT_ATTR_NOATIME" },
	{ 0x70, 0x20, "MOUNT_ATTR_STRICTATIME" },
	F(0x80, "MOUNT_ATTR_NODIRATIME"), F(0x100000, "MOUNT_ATTR_IDMAP"),
	F(0x200000, "MOUNT_ATTR_NOSYMFOLLOW"),
	{ 0 },
};
static const struct tk_flag_name fsconfig_cmds[] = {
	{ 0, 0, "FSCONFIG_SET_FLAG" }, { 0, 1, "FSCONFIG_SET_STRING" },
	{ 0, 2, "FSCONFIG_SET_BINARY" }, { 0, 3, "FSCONFIG_SET_PATH" },
	{ 0, 4, "FSCONFIG_SET_PATH_EMPTY" }, { 0, 5, "FSCONFIG_SET_FD" },
	{ 0, 6, "FSCONFIG_CMD_CREATE" }, { 0, 7, "FSCONFIG_CMD_RECONFIGURE" },
	{ 0, 8, "FSCONFIG_CMD_CREATE_EXCL" },
	{ 0 },
};
static const struct tk_flag_name move_mount_flags[] = {
	F(0x1, "MOVE_MOUNT_F_SYMLINKS"), F(0x2, "MOVE_MOUNT_F_AUTOMOUNTS"),
	F(0x4, "MOVE_MOUNT_F_EMPTY_PATH"), F(0x10, "MOVE_MOUNT_T_SYMLINKS"),
	F(0x20, "MOVE_MOUNT_T_AUTOMOUNTS"), F(0x40, "MOVE_MOUNT_T_EMPTY_PATH"),
	F(0x100, "MOVE_MOUNT_SET_GROUP"), F(0x200, "MOVE_MOUNT_BENEATH"),
	{ 0 },
};
static const struct tk_flag_name open_tree_flags[] = {
	F(1, "OPEN_TREE_CLONE"), F(02000000, "OPEN_TREE_CLOEXEC"),
	F(0x100, "AT_SYMLINK_NOFOLLOW"), F(0x800, "AT_NO_AUTOMOUNT"),
	F(0x1000, "AT_EMPTY_PATH"), F(0x8000, "AT_RECURSIVE"),
	{ 0 },
};
static const struct tk_flag_name fspick_flags[] = {
	F(1, "FSPICK_CLOEXEC"), F(2, "FSPICK_SYMLINK_NOFOLLOW"),
	F(4, "FSPICK_NO_AUTOMOUNT"), F(8, "FSPICK_EMPTY_PATH"),
	{ 0 },
};
static const struct tk_flag_name at_flags[] = {
	F(0x100, "AT_SYMLINK_NOFOLLOW"), F(0x800, "AT_NO_AUTOMOUNT"),
	F(0x1000, "AT_EMPTY_PATH"), F(0x8000, "AT_RECURSIVE"),
	{ 0 },
};
#undef F

/* How an argument is printed. A_STR and A_FSVAL take the next string
 * slot (bpf/mountsnoop.bpf.c reads the slots in the same order). */
enum arg_kind {
	A_STR,     /* "string" */
	A_FD,      /* a descriptor, AT_FDCWD by name */
	A_FLAGS,   /* names of a table */
	A_CMD,     /* fsconfig's command */
	A_FSVAL,   /* fsconfig's value: a string for string commands */
	A_ATTR,    /* mount_setattr's struct mount_attr */
	A_UINT,
};

struct arg {
	const char *name;
	enum arg_kind kind;
	const struct tk_flag_name *names;
};

static const struct call {
	const char *name;      /* also its tracepoints': sys_enter_<name> */
	int nargs;
	struct arg args[5];
} calls[MOUNT_OP_MAX] = {
	[MOUNT_OP_MOUNT] = { "mount", 5, {
		{ "source", A_STR }, { "target", A_STR }, { "fstype", A_STR },
		{ "flags", A_FLAGS, mount_flags }, { "data", A_STR } } },
	[MOUNT_OP_UMOUNT] = { "umount", 2, {
		{ "target", A_STR }, { "flags", A_FLAGS, umount_flags } } },
	[MOUNT_OP_FSOPEN] = { "fsopen", 2, {
		{ "fs_name", A_STR }, { "flags", A_FLAGS, fsopen_flags } } },
	[MOUNT_OP_FSCONFIG] = { "fsconfig", 5, {
		{ "fd", A_FD }, { "cmd", A_CMD }, { "key", A_STR },
		{ "value", A_FSVAL }, { "aux", A_UINT } } },
	[MOUNT_OP_FSMOUNT] = { "fsmount", 3, {
		{ "fs_fd", A_FD }, { "flags", A_FLAGS, fsmount_flags },
		{ "attr_flags", A_FLAGS, mount_attr_flags } } },
	[MOUNT_OP_MOVE_MOUNT] = { "move_mount", 5, {
		{ "from_dfd", A_FD }, { "from_path", A_STR },
		{ "to_dfd", A_FD }, { "to_path", A_STR },
		{ "flags", A_FLAGS, move_mount_flags } } },
	[MOUNT_OP_OPEN_TREE] = { "open_tree", 3, {
		{ "dfd", A_FD }, { "path", A_STR },
		{ "flags", A_FLAGS, open_tree_flags } } },
	[MOUNT_OP_FSPICK] = { "fspick", 3, {
		{ "dfd", A_FD }, { "path", A_STR },
		{ "flags", A_FLAGS, fspick_flags } } },
	[MOUNT_OP_MOUNT_SETATTR] = { "mount_setattr", 5, {
		{ "dfd", A_FD }, { "path", A_STR },
		{ "flags", A_FLAGS, at_flags }, { "attr", A_ATTR },
		{ "size", A_UINT } } },
};

static const struct argp_option options[] = {
	{ "parent-process", 'P', 0, 0, "Print the parent's COMM and PID (PCOMM, PPID columns)", 0 },
	/* bcc's spelling of it */
	{ "parent_process", 'P', 0, OPTION_HIDDEN, 0, 0 },
	{ 0 },
};

static const char doc[] =
"Trace mount() and umount2() and the new mount API: fsopen(), fsconfig(),\n"
"fsmount(), move_mount(), open_tree(), fspick() and mount_setattr().\n"
"\v"
"One line per call, at its end: COMM, PID, TID, the caller's mount\n"
"namespace (MNT_NS, its inode number) and CALL, the call as it was made,\n"
"with its flags by name and its result: 0, a descriptor, or -ERRNO.\n"
"umount is umount2(2) (the kernel's sys_umount). Calls the kernel has\n"
"no tracepoint for are not traced (-v says which): the new mount API\n"
"came in Linux 5.2, mount_setattr in 5.12.\n"
"\n"
"Strings are quoted with C escapes; up to 4095 bytes of each are\n"
"captured, a longer one is marked with ... after its quote (JSON:\n"
"\"<arg>_truncated\": true). A string BPF could not read (BPF cannot\n"
"fault a page in) is shown by its address. fsconfig's value is read\n"
"as a string for FSCONFIG_SET_STRING and _SET_PATH only.\n"
"\n"
"bcc's mountsnoop prints fsopen's flags as MS_* flags; here they are\n"
"FSOPEN_CLOEXEC. libbpf-tools' -t (timestamp) is the wall-clock TIME\n"
"column, --time; its -d (one line per field) is not here: -d is\n"
"--duration, and -j gives every field by name.\n"
"\n"
"Examples:\n"
"  mountsnoop              # trace mount calls\n"
"  mountsnoop -P           # with the parent's COMM and PID\n"
"  mountsnoop -t           # with a wall-clock TIME column\n"
"  mountsnoop -p 181       # only PID 181\n"
"  mountsnoop -j           # NDJSON: every argument by name\n"
"  mountsnoop -- unshare -m sh -c 'mount -t tmpfs none /mnt'\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)arg;
	(void)state;
	switch (key) {
	case 'P': env.parent = true; break;
	default: return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* libbpf-tools' -t: the wall-clock column. */
static const struct tk_letter letters[] = { { 't', "time" }, { 0 } };

static const struct tk_tool tool = {
	.name = "mountsnoop",
	.doc = doc,
	.options = options,
	.parser = parse,
	.letters = letters,
};

/* A string as C source spells it, as bcc's mountsnoop prints it. */
static void put_quoted(FILE *f, const char *s, size_t len)
{
	static const char esc[] = "\aa\bb\tt\nn\vv\ff\rr\"\"\\\\";
	const char *p;
	size_t i;

	fputc('"', f);
	for (i = 0; i < len; i++) {
		unsigned char c = s[i];

		if (c && (p = strchr(esc, c)) && (p - esc) % 2 == 0)
			fprintf(f, "\\%c", p[1]);
		else if (c >= 0x20 && c < 0x7f)
			fputc(c, f);
		else
			fprintf(f, "\\x%02x", c);
	}
	fputc('"', f);
}

static void put_fd(FILE *f, long long fd)
{
	if (fd == AT_FDCWD)
		fputs("AT_FDCWD", f);
	else
		fprintf(f, "%lld", fd);
}

/* A string argument: "..." or NULL, its address when unreadable. */
static void put_str(FILE *f, const struct mount_event *e, int slot,
		    unsigned long long ptr)
{
	if (!ptr)
		fputs("NULL", f);
	else if (e->str_flags & MOUNT_STR_FAULT(slot))
		fprintf(f, "0x%llx", ptr);
	else {
		put_quoted(f, e->str[slot], e->str_len[slot]);
		if (e->str_flags & MOUNT_STR_CUT(slot))
			fputs("...", f);
	}
}

static bool fsval_is_str(unsigned long long cmd)
{
	return cmd == 1 || cmd == 3 || cmd == 4;
}

static void put_attr(FILE *f, const struct mount_event *e)
{
	char a[256], b[256], c[256];

	if (!e->args[3]) {
		fputs("NULL", f);
		return;
	}
	if (!e->attr_read) {
		fprintf(f, "0x%llx", e->args[3]);
		return;
	}
	fprintf(f, "{attr_set=%s, attr_clr=%s, propagation=%s, userns_fd=%llu}",
		tk_flags_str(a, sizeof(a), e->attr[0], mount_attr_flags),
		tk_flags_str(b, sizeof(b), e->attr[1], mount_attr_flags),
		tk_flags_str(c, sizeof(c), e->attr[2], mount_flags), e->attr[3]);
}

/* "mount(\"tmpfs\", ...) = 0": the CALL column and JSON's "call". */
static void put_call(FILE *f, const struct mount_event *e)
{
	const struct call *c = &calls[e->op];
	char buf[512];
	int i, slot = 0;

	fprintf(f, "%s(", c->name);
	for (i = 0; i < c->nargs; i++) {
		const struct arg *a = &c->args[i];
		unsigned long long v = e->args[i];

		if (i)
			fputs(", ", f);
		switch (a->kind) {
		case A_STR:
			put_str(f, e, slot++, v);
			break;
		case A_FSVAL:
			if (fsval_is_str(e->args[1]))
				put_str(f, e, slot, v);
			else if (v)
				fprintf(f, "0x%llx", v);
			else
				fputs("NULL", f);
			slot++;
			break;
		case A_FD:
			put_fd(f, (int)v);
			break;
		case A_FLAGS:
			fputs(tk_flags_str(buf, sizeof(buf), v, a->names), f);
			break;
		case A_CMD:
			if (tk_enum_name(v, fsconfig_cmds))
				fputs(tk_enum_name(v, fsconfig_cmds), f);
			else
				fprintf(f, "%llu", v);
			break;
		case A_ATTR:
			put_attr(f, e);
			break;
		case A_UINT:
			fprintf(f, "%u", (unsigned)v);
			break;
		}
	}
	if (e->ret < 0 && tk_errno_name(e->ret))
		fprintf(f, ") = -%s", tk_errno_name(e->ret));
	else
		fprintf(f, ") = %d", e->ret);
}

static void json_args(struct tk_json *j, const struct mount_event *e)
{
	const struct call *c = &calls[e->op];
	char key[64];
	int i, slot = 0;

	tk_json_obj_open(j, "args");
	for (i = 0; i < c->nargs; i++) {
		const struct arg *a = &c->args[i];
		unsigned long long v = e->args[i];
		bool str = a->kind == A_STR ||
			   (a->kind == A_FSVAL && fsval_is_str(e->args[1]));

		if (str) {
			if (!v || (e->str_flags & MOUNT_STR_FAULT(slot)))
				tk_json_null(j, a->name);
			else
				tk_json_strn(j, a->name, e->str[slot], e->str_len[slot]);
			if (e->str_flags & MOUNT_STR_CUT(slot)) {
				snprintf(key, sizeof(key), "%s_truncated", a->name);
				tk_json_bool(j, key, true);
			}
		} else if (a->kind == A_FD) {
			tk_json_int(j, a->name, (int)v);
		} else if (a->kind == A_ATTR) {
			if (!e->attr_read) {
				tk_json_null(j, a->name);
			} else {
				tk_json_obj_open(j, a->name);
				tk_json_uint(j, "attr_set", e->attr[0]);
				tk_json_uint(j, "attr_clr", e->attr[1]);
				tk_json_uint(j, "propagation", e->attr[2]);
				tk_json_uint(j, "userns_fd", e->attr[3]);
				tk_json_obj_close(j);
			}
		} else if (a->kind == A_FSVAL) {
			tk_json_uint(j, a->name, v);   /* a blob's address, or 0 */
		} else {
			tk_json_uint(j, a->name, a->kind == A_UINT ? (unsigned)v : v);
		}
		if (a->kind == A_STR || a->kind == A_FSVAL)
			slot++;
	}
	tk_json_obj_close(j);
}

static void print_json(const struct mount_event *e, const char *call, size_t len)
{
	struct tk_json j;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "mount");
	tk_json_time(&j);
	tk_json_int(&j, "pid", e->pid);
	tk_json_int(&j, "tid", e->tid);
	tk_json_int(&j, "uid", e->uid);
	tk_json_strn(&j, "comm", e->comm, strnlen(e->comm, sizeof(e->comm)));
	tk_json_int(&j, "ppid", e->ppid);
	tk_json_strn(&j, "pcomm", e->pcomm, strnlen(e->pcomm, sizeof(e->pcomm)));
	tk_json_uint(&j, "mnt_ns", e->mnt_ns);
	if (tk_opts.filter.cgroup_ids)
		tk_json_cgroup(&j, e->cgroup_id);
	tk_json_str(&j, "syscall", calls[e->op].name);
	json_args(&j, e);
	tk_json_int(&j, "ret", e->ret);
	if (e->ret < 0 && tk_errno_name(e->ret))
		tk_json_str(&j, "error", tk_errno_name(e->ret));
	tk_json_strn(&j, "call", call, len);
	tk_json_end(&j);
}

static void print_text(const struct mount_event *e, const char *call, size_t len)
{
	char buf[16];

	if (tk_opts.time)
		printf("%-8s ", tk_time_str(buf, sizeof(buf)));
	tk_print_safe_padded(stdout, e->comm, strnlen(e->comm, sizeof(e->comm)), 16);
	printf(" %-7d %-7d ", e->pid, e->tid);
	if (env.parent) {
		tk_print_safe_padded(stdout, e->pcomm,
				     strnlen(e->pcomm, sizeof(e->pcomm)), 16);
		printf(" %-7d ", e->ppid);
	}
	printf("%-11u ", e->mnt_ns);
	if (tk_opts.filter.cgroup_ids)
		tk_print_cgroup(stdout, e->cgroup_id, TK_CGROUP_WIDTH);
	fwrite(call, 1, len, stdout);
	putchar('\n');
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	const struct mount_event *e = data;
	char *call = NULL;
	size_t len = 0, i;
	FILE *f;

	(void)ctx;
	if (size < offsetof(struct mount_event, str) || e->op >= MOUNT_OP_MAX ||
	    e->nstr > MOUNT_STRS ||
	    size < offsetof(struct mount_event, str) + e->nstr * MOUNT_STR_MAX)
		return 0;  /* malformed: never trust sizes blindly */
	for (i = 0; i < e->nstr; i++)
		if (e->str_len[i] >= MOUNT_STR_MAX)
			return 0;
	f = open_memstream(&call, &len);
	if (!f)
		return 0;
	put_call(f, e);
	fclose(f);
	if (tk_opts.json)
		print_json(e, call, len);
	else
		print_text(e, call, len);
	free(call);
	return 0;
}

/* The new mount API is 5.2+, mount_setattr 5.12+. */
static int configure(void *s, void *ctx)
{
	struct mountsnoop_bpf *skel = s;
	int op;

	(void)ctx;
	if (tk_ensure_tracefs())
		return 0;  /* tk_load reports it */
	for (op = 0; op < MOUNT_OP_MAX; op++)
		tk_syscall_tp_or_off(skel->obj, calls[op].name);
	return 0;
}

TK_SKEL_OPS(mountsnoop_bpf);

int main(int argc, char **argv)
{
	struct mountsnoop_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	skel = tk_load(&mountsnoop_bpf_ops, configure, NULL);
	tk_events_open(skel->obj, handle_event, NULL);
	if (!tk_opts.json) {
		if (tk_opts.time)
			printf("%-8s ", "TIME");
		printf("%-16s %-7s %-7s ", "COMM", "PID", "TID");
		if (env.parent)
			printf("%-16s %-7s ", "PCOMM", "PPID");
		printf("%-11s ", "MNT_NS");
		if (tk_opts.filter.cgroup_ids)
			printf("%-*s ", TK_CGROUP_WIDTH, TK_CGROUP_HEADER);
		printf("CALL\n");
	}
	tk_ready();
	tk_events_loop();
	tk_losses_report(skel->obj);
	mountsnoop_bpf__destroy(skel);
	return tk_exit_status();
}
