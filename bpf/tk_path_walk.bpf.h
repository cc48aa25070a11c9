/* The path of a directory (or any dentry), built in BPF at the time of the
 * event: d_parent up to the root of its mount, then mnt_mountpoint into
 * the parent mount, until the current task's root (as the kernel's d_path
 * stops at a chroot or a container's root) or the root mount of its
 * namespace. Userspace cannot do this later from /proc: the task, its cwd
 * or its fd may be gone by then.
 *
 * The walk is bounded (TK_PATH_DEPTH steps, a path of TK_PATH_MAX - 1
 * bytes); when it stops on a bound before a root, the path's beginning is
 * missing and the caller is told so (tk_path_walk's *cut).
 *
 * CO-RE only: struct mount's vfsmount member is found by its relocated
 * offset (bpf_core_field_offset), not vmlinux.h's, so the walk is right on
 * every kernel whose BTF has struct mount (5.x to today's). */
#ifndef TK_PATH_WALK_BPF_H
#define TK_PATH_WALK_BPF_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "tk_fd.bpf.h"

#define TK_PATH_MAX 4096   /* PATH_MAX, with the NUL */
#define TK_NAME_MAX 255    /* NAME_MAX: the longest component */
#define TK_PATH_DEPTH 64   /* steps: directories plus mount points crossed */

#ifndef AT_FDCWD
#define AT_FDCWD -100
#endif

/* A place in the tree: (mount, dentry), as struct path; declared here so
 * that a local copy is not relocated as if it were the kernel's. */
struct tk_dpath {
	struct vfsmount *mnt;
	struct dentry *dentry;
};

/* Where a walk writes (a map value: too large for the stack). The path
 * ends at buf[TK_PATH_MAX]; a component is written below the last, and
 * the room above TK_PATH_MAX lets the verifier see every write bounded. */
struct tk_path_buf {
	char buf[TK_PATH_MAX + TK_NAME_MAX + 1];
};

/* The current task's working directory. */
static __always_inline bool tk_path_cwd(struct tk_dpath *p)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();

	p->mnt = BPF_CORE_READ(t, fs, pwd.mnt);
	p->dentry = BPF_CORE_READ(t, fs, pwd.dentry);
	return p->mnt && p->dentry;
}

/* What the current task's descriptor fd refers to; false for a closed or
 * out of range fd. */
static __always_inline bool tk_path_fd(int fd, struct tk_dpath *p)
{
	struct file *f = tk_fd_file(fd);

	if (!f)
		return false;
	p->mnt = BPF_CORE_READ(f, f_path.mnt);
	p->dentry = BPF_CORE_READ(f, f_path.dentry);
	return p->mnt && p->dentry;
}

/* The directory a *at() call's relative path starts from: dfd, or the
 * working directory for AT_FDCWD. */
static __always_inline bool tk_path_at(int dfd, struct tk_dpath *p)
{
	return dfd == AT_FDCWD ? tk_path_cwd(p) : tk_path_fd(dfd, p);
}

/* TK_PATH_MAX, in .data where the verifier does not know it: a walk
 * that began at the constant would be two walks to the verifier, one
 * before the first component is written (pos still the constant) and
 * one after (pos any offset), at every step, for 64 steps: 117361
 * instructions processed for statsnoop's exit program, against 14394
 * when pos is any offset from the start. */
volatile unsigned int tk_path_max_opaque = TK_PATH_MAX;

static __always_inline struct mount *tk_real_mount(struct vfsmount *vm)
{
	return (struct mount *)((char *)vm - bpf_core_field_offset(struct mount, mnt));
}

/* Write the path of p into b as "/a/b/c", ending at b->buf[TK_PATH_MAX];
 * return where it starts (TK_PATH_MAX for the root itself: an empty
 * string). *cut: the walk stopped on its bound (depth or length) before a
 * root, so the path's beginning is missing. At most TK_PATH_MAX - 1 bytes
 * are written, so the start is never 0. */
static __always_inline u32 tk_path_walk(struct tk_path_buf *b,
					const struct tk_dpath *p, bool *cut)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	struct vfsmount *root_mnt = BPF_CORE_READ(t, fs, root.mnt);
	struct dentry *root = BPF_CORE_READ(t, fs, root.dentry);
	struct vfsmount *vm = p->mnt;
	struct dentry *d = p->dentry, *top, *parent;
	struct mount *m = tk_real_mount(vm), *up;
	const unsigned char *name;
	u32 pos = tk_path_max_opaque & (2 * TK_PATH_MAX - 1), len;
	int i;

	*cut = false;
	top = BPF_CORE_READ(vm, mnt_root);
	for (i = 0; i < TK_PATH_DEPTH; i++) {
		if (d == root && vm == root_mnt)
			return pos;             /* the task's root */
		if (d == top) {                 /* the root of this mount */
			up = BPF_CORE_READ(m, mnt_parent);
			if (up == m)
				return pos;     /* the namespace's root mount */
			d = BPF_CORE_READ(m, mnt_mountpoint);
			m = up;
			vm = (struct vfsmount *)((char *)m +
				bpf_core_field_offset(struct mount, mnt));
			top = BPF_CORE_READ(vm, mnt_root);
			continue;
		}
		parent = BPF_CORE_READ(d, d_parent);
		if (!parent || parent == d)
			return pos;             /* the root of a detached tree */
		len = BPF_CORE_READ(d, d_name.len);
		name = BPF_CORE_READ(d, d_name.name);
		if (!len || len > TK_NAME_MAX || len + 1 >= pos)
			break;                  /* no room for "/name" */
		pos = (pos - len) & (TK_PATH_MAX - 1);
		bpf_probe_read_kernel(b->buf + pos, len & TK_NAME_MAX, name);
		pos = (pos - 1) & (TK_PATH_MAX - 1);
		b->buf[pos] = '/';
		d = parent;
	}
	*cut = true;
	return pos;
}

#endif
