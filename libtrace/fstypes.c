/* The file systems of fsslower and fsdist, and the settings of their
 * probes (bpf/tk_fsop.bpf.h). */
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fstypes.h"
#include "functarget.h"
#include "kbtf.h"
#include "opts.h"
#include "setup.h"

/* The functions libbpf-tools' fsslower and fsdist trace; and NFSv4's
 * opens, which those miss (bcc's nfsslower traces nfs4_file_open, not
 * nfs_atomic_open: NFSv4 opens a file it creates there). */
static const struct tk_fs file_systems[] = {
	{ "ext4", NULL, { "ext4_file_read_iter", "ext4_file_write_iter",
			  "ext4_file_open", "ext4_sync_file", "ext4_file_getattr" },
	  NULL, NULL },
	{ "xfs", NULL, { "xfs_file_read_iter", "xfs_file_write_iter",
			 "xfs_file_open", "xfs_file_fsync", "xfs_vn_getattr" },
	  NULL, NULL },
	{ "btrfs", NULL, { "btrfs_file_read_iter", "btrfs_file_write_iter",
			   "btrfs_file_open", "btrfs_sync_file", "btrfs_getattr" },
	  NULL, NULL },
	{ "nfs", "nfs4", { "nfs_file_read", "nfs_file_write",
			   "nfs_file_open", "nfs_file_fsync", "nfs_getattr" },
	  "nfs4_file_open", "nfs_atomic_open" },
};
#define N_FS (sizeof(file_systems) / sizeof(file_systems[0]))

static const char *const op_names[FSOP_MAX] = {
	"read", "write", "open", "fsync", "getattr",
};

const char tk_fs_tp_blind[] =
	"mmap'd I/O, io_uring, aio, the kernel's own I/O, or stat by path "
	"(only fstat); and it times the whole system call, not the file "
	"system alone";

const char *tk_fsop_name(unsigned op)
{
	return op < FSOP_MAX ? op_names[op] : "?";
}

char tk_fsop_letter(unsigned op)
{
	return op < FSOP_MAX ? "RWOSG"[op] : '?';
}

const struct tk_fs *tk_fs_at(unsigned i)
{
	return i < N_FS ? &file_systems[i] : NULL;
}

const struct tk_fs *tk_fs_find(const char *type)
{
	size_t i;

	for (i = 0; i < N_FS; i++)
		if (!strcmp(type, file_systems[i].type))
			return &file_systems[i];
	return NULL;
}

const struct tk_fs *tk_fs_by_type(const char *type)
{
	const struct tk_fs *fs = tk_fs_find(type);

	if (fs)
		return fs;
	tk_usage_error("invalid -t/--type value '%s': expected ext4, xfs, btrfs or nfs", type);
}

const struct tk_fs *tk_fs_by_tool_name(const char *argv0, const char *suffix)
{
	const char *base = strrchr(argv0, '/');
	size_t i, n, sl = strlen(suffix);

	base = base ? base + 1 : argv0;
	n = strlen(base);
	if (n <= sl || strcmp(base + n - sl, suffix))
		return NULL;
	for (i = 0; i < N_FS; i++)
		if (strlen(file_systems[i].type) == n - sl &&
		    !strncmp(base, file_systems[i].type, n - sl))
			return &file_systems[i];
	return NULL;
}

int tk_fs_present(const struct tk_fs *fs)
{
	FILE *f = fopen("/proc/filesystems", "re");
	char line[128], name[64];
	bool found = false;

	if (!f)
		return -errno;
	while (!found && fgets(line, sizeof(line), f))
		/* "nodev\tnfs" or "\text4" */
		found = sscanf(line, "%*[^\t]\t%63s", name) == 1 ? !strcmp(name, fs->type)
			: sscanf(line, "\t%63s", name) == 1 && !strcmp(name, fs->type);
	fclose(f);
	return found;
}

void tk_fs_require(const struct tk_fs *fs)
{
	int present = tk_fs_present(fs);

	if (present < 0)
		tk_fail("cannot read /proc/filesystems: %s", strerror(-present));
	if (!present)
		tk_fail("the kernel has no %s file system (not in /proc/filesystems: "
			"load its module, modprobe %s)", fs->type, fs->type);
}

void tk_fs_targets(const struct tk_fs *fs)
{
	static char fam[FSOP_MAX][2][32];
	unsigned op;

	for (op = 0; op < FSOP_MAX; op++) {
		snprintf(fam[op][0], sizeof(fam[op][0]), "kf_%s_in", op_names[op]);
		snprintf(fam[op][1], sizeof(fam[op][1]), "kf_%s_out", op_names[op]);
		tk_set_target(fam[op][0], NULL, fs->funcs[op], -1);
		tk_set_target(fam[op][1], NULL, fs->funcs[op], -1);
	}
	if (fs->open2) {
		tk_set_target("kf_open2_in", NULL, fs->open2, -1);
		tk_set_target("kf_open2_out", NULL, fs->open2, -1);
	}
	if (fs->atomic_open) {
		tk_set_target("kf_aopen_in", NULL, fs->atomic_open, -1);
		tk_set_target("kf_aopen_out", NULL, fs->atomic_open, -1);
	}
}

/* The kf_ programs of an open function of fs's beyond funcs: off when it
 * has none, or the kernel has not the function (its module is not
 * loaded: nfsv4 until the first NFSv4 mount). */
static void other_open(struct bpf_object *obj, const struct tk_fs *fs, const char *func,
		       const char *prefix)
{
	char err[256];

	if (func && !tk_kernel_func_check("/proc/kallsyms", func, err, sizeof(err)))
		return;
	if (func)
		tk_info("%s: %s; its opens are not seen (load its module: %s)", fs->type, err,
			strcmp(func, "nfs4_file_open") ? fs->type : "modprobe nfsv4");
	tk_programs_off(obj, prefix);
}

/* Which argument of inode_operations.getattr is the struct path: 0
 * before 5.12, 1 since (a user namespace, later an idmap, came first). */
static unsigned getattr_path_arg(void)
{
	const struct btf *btf = tk_kernel_btf();
	const struct btf_type *t, *m;
	const struct btf_param *p;
	const struct btf_member *mem;
	int id, i;

	if (!btf)
		return 1;
	id = btf__find_by_name_kind(btf, "inode_operations", BTF_KIND_STRUCT);
	if (id < 0)
		return 1;
	t = btf__type_by_id(btf, id);
	mem = btf_members(t);
	for (i = 0; i < btf_vlen(t); i++, mem++) {
		if (strcmp(btf__name_by_offset(btf, mem->name_off), "getattr"))
			continue;
		m = btf__type_by_id(btf, btf__resolve_type(btf, mem->type));
		if (!btf_is_ptr(m))
			return 1;
		m = btf__type_by_id(btf, m->type);
		if (!btf_is_func_proto(m) || !btf_vlen(m))
			return 1;
		p = btf_params(m);
		/* the first parameter: const struct path *? */
		m = btf__type_by_id(btf, p->type);
		if (!btf_is_ptr(m))
			return 1;
		m = btf__type_by_id(btf, btf__resolve_type(btf, m->type));
		return m && btf_is_struct(m) &&
		       !strcmp(btf__name_by_offset(btf, m->name_off), "path") ? 0 : 1;
	}
	return 1;
}

void tk_fs_configure(struct bpf_object *obj, const struct tk_fs *fs, enum tk_way way)
{
	/* optional: not on every kernel or architecture */
	static const char *const optional[][2] = {
		{ "read", "preadv2" }, { "write", "pwritev2" }, { "open", "open" },
		{ "open", "openat2" }, { "getattr", "newfstat" },
		{ "getattr", "newfstatat" }, { "getattr", "statx" },
	};
	char type[FSOP_TYPE_LEN] = "", alt[FSOP_TYPE_LEN] = "", name[64];
	unsigned arg;
	size_t i;

	if (way == TK_WAY_KFUNC) {
		arg = getattr_path_arg();
		tk_set_rodata(obj, "getattr_path_arg", &arg, sizeof(arg));
		other_open(obj, fs, fs->open2, "kf_open2_");
		other_open(obj, fs, fs->atomic_open, "kf_aopen_");
		return;
	}
	strncpy(type, fs->type, sizeof(type) - 1);
	if (fs->alt)
		strncpy(alt, fs->alt, sizeof(alt) - 1);
	tk_set_rodata(obj, "fs_type", type, sizeof(type));
	tk_set_rodata(obj, "fs_type_alt", alt, sizeof(alt));
	if (tk_ensure_tracefs())
		return;  /* tk_load reports it */
	for (i = 0; i < sizeof(optional) / sizeof(optional[0]); i++) {
		snprintf(name, sizeof(name), "sys_enter_%s", optional[i][1]);
		if (tk_tracepoint_exists("syscalls", name))
			continue;
		tk_info("%s(): no syscalls:%s tracepoint on this kernel; not traced",
			optional[i][1], name);
		snprintf(name, sizeof(name), "tp_%s_%s_", optional[i][0], optional[i][1]);
		tk_programs_off(obj, name);
	}
}

/* -t TYPE, shared by fsslower and fsdist (an argp child); without a
 * file system from the tool's name, it is required. */
static const struct tk_fs **chosen;

static const struct argp_option fs_options[] = {
	{ "type", 't', "TYPE", 0,
	  "File system: ext4, xfs, btrfs or nfs (default: the tool's name's)", 0 },
	{ 0 },
};

static error_t parse_fs_opt(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 't': *chosen = tk_fs_by_type(arg); return 0;
	case ARGP_KEY_END:
		if (!*chosen)
			tk_usage_error("no file system: give -t TYPE (ext4, xfs, btrfs or nfs)");
		return 0;
	default:
		return ARGP_ERR_UNKNOWN;
	}
}

static const struct argp fs_argp = { .options = fs_options, .parser = parse_fs_opt };

void *tk_fs_start(struct tk_tool *tool, const struct tk_fs **fs, const char *suffix,
		  int argc, char **argv, const struct tk_skel_ops *ops,
		  tk_configure_fn configure, enum tk_way *way)
{
	const char *base = strrchr(argv[0], '/');

	*fs = tk_fs_by_tool_name(argv[0], suffix);
	if (*fs)
		tool->name = base ? base + 1 : argv[0];
	chosen = fs;
	tool->extra = &fs_argp;
	tk_parse_args(tool, argc, argv);
	tk_fs_require(*fs);
	tk_init();
	tk_fs_targets(*fs);
	return tk_load_kfunc_or_tp(ops, configure, way, way, tk_fs_tp_blind);
}
