/* fsslower and fsdist: the file systems they know, choosing one (-t, or
 * the name the tool was run by: ext4slower, xfsdist, ...), and pointing
 * bpf/tk_fsop.bpf.h's probes at it. */
#ifndef TK_FSTYPES_H
#define TK_FSTYPES_H

#include "fsop.h"
#include "kfunc_or_tp.h"

struct bpf_object;

struct tk_fs {
	const char *type;             /* -t and /proc/filesystems: "ext4" */
	const char *alt;              /* another name it mounts as ("nfs4"), or NULL */
	const char *funcs[FSOP_MAX];  /* its functions, by enum fsop */
	/* Opens elsewhere, or NULL: a second f_op->open (NFSv4's, beside
	 * NFSv2/3's in funcs), and an inode_operations.atomic_open, which
	 * opens a file it creates or looks up without f_op->open. A
	 * function of a module not loaded (nfsv4) is left out (-v says). */
	const char *open2;
	const char *atomic_open;
};

/* "read", "write", "open", "fsync", "getattr"; and bcc's one-letter
 * column: R, W, O, S, G. */
const char *tk_fsop_name(unsigned op);
char tk_fsop_letter(unsigned op);

/* The known file systems by index (NULL past the last), and by name
 * (NULL for one not known): tracekitd's fs collector. */
const struct tk_fs *tk_fs_at(unsigned i);
const struct tk_fs *tk_fs_find(const char *type);

/* The file system named by -t TYPE; a usage error (exit 2) for one
 * not known. */
const struct tk_fs *tk_fs_by_type(const char *type);

/* The file system that the tool's own name starts with when it ends in
 * suffix ("ext4slower": ext4), else NULL. */
const struct tk_fs *tk_fs_by_tool_name(const char *argv0, const char *suffix);

/* Whether the kernel has this file system (in /proc/filesystems: built
 * in, or its module loaded): 1, 0, or -errno when the file is
 * unreadable. */
int tk_fs_present(const struct tk_fs *fs);

/* Exit 1 with one line when the kernel has not this file system (not
 * in /proc/filesystems: not built in, its module not loaded). */
void tk_fs_require(const struct tk_fs *fs);

/* Before tk_load_kfunc_or_tp: point the kf_ probes at fs's functions. */
void tk_fs_targets(const struct tk_fs *fs);

/* From the tool's configure: fs's names and the getattr argument for
 * the probes; tracepoints the kernel has not are left out. */
void tk_fs_configure(struct bpf_object *obj, const struct tk_fs *fs, enum tk_way way);

/* What the tracepoint way cannot see, for -v. */
extern const char tk_fs_tp_blind[];

/* The start of fsslower and fsdist: the file system from the name the
 * tool was run by when it ends in suffix ("slower": ext4slower; that
 * name is then the tool's in its messages), else from -t (an option
 * added here to the tool's); parse the arguments; exit 1 when the kernel has not
 * the file system; tk_init; load the skeleton, kernel functions first
 * (*way says which way was loaded; configure's ctx is way). */
struct tk_tool;
void *tk_fs_start(struct tk_tool *tool, const struct tk_fs **fs, const char *suffix,
		  int argc, char **argv, const struct tk_skel_ops *ops,
		  tk_configure_fn configure, enum tk_way *way);

#endif
