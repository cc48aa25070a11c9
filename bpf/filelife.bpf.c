// SPDX-License-Identifier: GPL-2.0
/* filelife: files created and then deleted while tracing, with their age.
 *
 * Creation time is kept in births, an LRU hash, until the file's
 * deletion emits an event. Two ways to see creations and deletions
 * (libtrace/kfunc_or_tp.h picks one):
 *
 * kf_*: kernel functions, as bcc. security_inode_create runs for every
 * regular file made by a name (open with O_CREAT, creat, mknod), by any
 * caller (nfsd, overlayfs too); vfs_unlink for every removal of a name.
 * births is keyed by the dentry, which both see.
 *
 * tp_*: syscall tracepoints. A file was created by open, openat, openat2
 * or creat when its struct file, found by the returned descriptor, has
 * FMODE_CREATED (set by the kernel when this open made the file: an
 * O_CREAT open of an existing file does not). The file's path is walked
 * from its dentry (tk_path_walk.bpf.h); unlink and unlinkat rebuild the
 * path from the directory they are relative to and the name passed.
 * births is keyed by that path's hash (tk_path_hash.bpf.h). Not seen:
 * mknod(2), files made by the kernel itself, deletions by a path that is
 * not spelled as the walk spells it ("./", "..", "//", a symbolic link
 * to a directory), renames over a file, and a creator or deleter in
 * another root (chroot, container). */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "filelife.h"
#include "tk_cgroup.bpf.h"
#include "tk_emit.bpf.h"
#include "tk_fd.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_path_hash.bpf.h"
#include "tk_path_walk.bpf.h"

/* include/linux/fs.h: set by do_open when the open created the file;
 * the same bit from 4.19 to 6.18. */
#define FMODE_CREATED 0x100000
#define AT_REMOVEDIR 0x200

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, FILELIFE_BIRTHS);
	__type(key, u64);     /* kf_: the dentry; tp_: its path's hash */
	__type(value, u64);   /* creation time, ktime ns */
} births SEC(".maps");

/* A deletion in progress, from entry to return. */
struct pending {
	struct dentry *dentry;   /* kf_ */
	const char *path;        /* tp_: the caller's */
	int dfd;
};

#define TK_PENDING_VALUE struct pending
#include "tk_pending.bpf.h"

struct scratch {
	struct filelife_event e;
	/* tp_: the unlink's full path is built in e.name, the caller's part
	 * read after the directory's, at any offset up to
	 * FILELIFE_NAME_MAX: this is the rest of that read (and the room
	 * tk_path_hash reads past a path's end). */
	char spill[FILELIFE_NAME_MAX];
	struct tk_path_buf walk;
	char walk_pad[8];   /* tk_path_hash reads words */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

static __always_inline void born(u64 key)
{
	u64 now = bpf_ktime_get_ns();

	if (bpf_map_update_elem(&births, &key, &now, BPF_ANY))
		tk_count_loss(TK_LOSS_MAP_FULL);
}

/* The event of a deletion of key, or NULL when key was not created
 * while tracing; its name is the caller's to fill. */
static __always_inline struct scratch *died(u64 key)
{
	u64 *t = bpf_map_lookup_elem(&births, &key), ts;
	u32 zero = 0;
	struct scratch *s;
	u64 pid_tgid;

	if (!t)
		return NULL;
	ts = *t;
	bpf_map_delete_elem(&births, &key);
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return NULL;
	s->e.age_ns = bpf_ktime_get_ns() - ts;
	pid_tgid = tk_pid_tgid();   /* the ids shown: the tool's namespace's */
	s->e.pid = pid_tgid >> 32;
	s->e.tid = (u32)pid_tgid;
	s->e.uid = (u32)bpf_get_current_uid_gid();
	s->e.cgroup_id = tk_cgroup_id();
	s->e.flags = 0;
	s->e.name_len = 0;
	bpf_get_current_comm(s->e.comm, sizeof(s->e.comm));
	return s;
}

static __always_inline void send(void *ctx, struct filelife_event *e, long n)
{
	u64 size;

	if (n <= 0) {
		e->flags |= FILELIFE_F_FAULT;
		n = 1;
		e->name[0] = 0;
	}
	e->name_len = n - 1;
	size = n;
	tk_bound(size, FILELIFE_NAME_MAX);
	size += offsetof(struct filelife_event, name);
	tk_emit(ctx, e, size);
}

/* ---- kf_: kernel functions ---- */

static __always_inline int kf_create(struct dentry *dentry)
{
	if (tk_task_wanted())
		born((u64)dentry);
	return 0;
}

SEC("fentry/security_inode_create")
int BPF_PROG(kf_create_fentry, struct inode *dir, struct dentry *dentry)
{
	return kf_create(dentry);
}

SEC("kprobe/security_inode_create")
int BPF_KPROBE(kf_create_kprobe, struct inode *dir, struct dentry *dentry)
{
	return kf_create(dentry);
}

/* vfs_unlink's dentry is its second argument before 5.12, its third
 * since (a user_namespace, from 6.3 an mnt_idmap, came first), and so is
 * its return value, in fexit's context, the fourth or the fifth slot.
 * The same change gave struct vfsmount mnt_userns (later mnt_idmap).
 * (Not struct renamedata, the usual test: Debian's 5.10 has it.) */
struct vfsmount___userns {
	struct user_namespace *mnt_userns;
};

#define UNLINK_LATER                                                        \
	(bpf_core_field_exists(struct vfsmount___userns, mnt_userns) ||     \
	 bpf_core_field_exists(struct vfsmount, mnt_idmap))

/* ctx[i] of a trampoline program, for i chosen by a CO-RE constant: one
 * load per asm statement, so that clang cannot merge the two into a load
 * at a computed offset (which the verifier refuses), and the verifier,
 * knowing the constant, never sees the slot this kernel lacks. */
#define CTX_SLOT(ctx, later, a, b) ({                                          \
	u64 __v;                                                              \
	if (later)                                                            \
		asm volatile("%0 = *(u64 *)(%1 + %2)" : "=r"(__v)               \
			     : "r"(ctx), "i"((b) * 8));                        \
	else                                                                  \
		asm volatile("%0 = *(u64 *)(%1 + %2)" : "=r"(__v)               \
			     : "r"(ctx), "i"((a) * 8));                        \
	__v; })

static __always_inline int kf_unlink_enter(struct dentry *dentry)
{
	struct pending p = { .dentry = dentry };

	if (tk_task_wanted() && bpf_map_lookup_elem(&births, &dentry))
		tk_pending_put((u32)bpf_get_current_pid_tgid(), &p);
	return 0;
}

SEC("fentry/vfs_unlink")
int BPF_PROG(kf_unlink_entry_fentry)
{
	return kf_unlink_enter((struct dentry *)CTX_SLOT(ctx, UNLINK_LATER, 1, 2));
}

SEC("kprobe/vfs_unlink")
int BPF_KPROBE(kf_unlink_entry_kprobe, void *a0, void *a1, void *a2)
{
	/* Both registers read, then one chosen: pt_regs has both. */
	barrier_var(a1);
	barrier_var(a2);
	return kf_unlink_enter(UNLINK_LATER ? a2 : a1);
}

static __always_inline int kf_unlink_exit(void *ctx, long ret)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct pending *p = tk_pending_get(tid);
	struct dentry *dentry;
	struct scratch *s;
	long n;

	if (!p)
		return 0;
	dentry = p->dentry;
	tk_pending_clear(tid, p);
	if (ret)
		return 0;   /* not deleted: still alive */
	s = died((u64)dentry);
	if (!s)
		return 0;
	n = bpf_probe_read_kernel_str(s->e.name, TK_NAME_MAX + 1,
				      BPF_CORE_READ(dentry, d_name.name));
	send(ctx, &s->e, n);
	return 0;
}

SEC("fexit/vfs_unlink")
int BPF_PROG(kf_unlink_exit_fexit)
{
	return kf_unlink_exit(ctx, (int)CTX_SLOT(ctx, UNLINK_LATER, 3, 4));
}

SEC("kretprobe/vfs_unlink")
int BPF_KRETPROBE(kf_unlink_exit_kretprobe, long ret)
{
	return kf_unlink_exit(ctx, (int)ret);
}

/* ---- tp_: syscall tracepoints ---- */

/* A successful open: if it made the file, remember the file's path. */
static __always_inline int tp_open_exit(long fd)
{
	struct tk_dpath p;
	struct file *f;
	struct scratch *s;
	u32 zero = 0, start;
	bool cut;

	if (fd < 0 || !tk_task_wanted())
		return 0;
	f = tk_fd_file(fd);
	if (!f || !(BPF_CORE_READ(f, f_mode) & FMODE_CREATED))
		return 0;
	p.mnt = BPF_CORE_READ(f, f_path.mnt);
	p.dentry = BPF_CORE_READ(f, f_path.dentry);
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s || !p.mnt || !p.dentry)
		return 0;
	start = tk_path_walk(&s->walk, &p, &cut);
	if (cut)
		return 0;   /* a path too deep to rebuild: not matched later */
	born(tk_path_hash(s->walk.buf, start, TK_PATH_MAX - start));
	return 0;
}

/* One program for the exits of open, openat, openat2 and creat, and one
 * for unlink's and unlinkat's, each attached to those the kernel has
 * (tk_syscall_exits_target): their dentry walks make them large for the
 * verifier (0.4 s of load each here), which then checks each once. */
SEC("tp")
int tp_opens_exit_tp(struct trace_event_raw_sys_exit *ctx)
{
	return tp_open_exit(ctx->ret);
}

static __always_inline int tp_unlink_enter(int dfd, const char *path)
{
	struct pending p = { .path = path, .dfd = dfd };

	if (tk_task_wanted())
		tk_pending_put((u32)bpf_get_current_pid_tgid(), &p);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_unlink")
int tp_unlink_enter_tp(struct trace_event_raw_sys_enter *ctx)
{
	return tp_unlink_enter(AT_FDCWD, (const char *)ctx->args[0]);
}

SEC("tracepoint/syscalls/sys_enter_unlinkat")
int tp_unlinkat_enter_tp(struct trace_event_raw_sys_enter *ctx)
{
	if (ctx->args[2] & AT_REMOVEDIR)
		return 0;   /* rmdir: no file */
	return tp_unlink_enter(ctx->args[0], (const char *)ctx->args[1]);
}

/* A successful unlink: the path it removed, spelled as the creating
 * open's walk spells it (the directory walked, "/", the name as passed),
 * in the event's name, and its hash. The name is read at exit, when the
 * kernel has copied it, so its pages are present. */
static __always_inline int tp_unlink_exit(void *ctx, long ret)
{
	u32 tid = (u32)bpf_get_current_pid_tgid(), zero = 0, start, dir_len = 0;
	struct pending *pp = tk_pending_get(tid);
	struct pending p;
	struct tk_dpath dir;
	struct scratch *s;
	bool cut = false;
	char c;
	long n;

	if (!pp)
		return 0;
	p = *pp;
	tk_pending_clear(tid, pp);
	if (ret)
		return 0;
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s || bpf_probe_read_user(&c, 1, p.path))
		return 0;
	if (c != '/') {
		if (!tk_path_at(p.dfd, &dir))
			return 0;
		start = tk_path_walk(&s->walk, &dir, &cut);
		if (cut)
			return 0;
		dir_len = (TK_PATH_MAX - start) & (TK_PATH_MAX - 1);
		bpf_probe_read_kernel(s->e.name, dir_len,
				      s->walk.buf + (start & (TK_PATH_MAX - 1)));
		s->e.name[dir_len] = '/';
		dir_len++;
	}
	n = bpf_probe_read_user_str(s->e.name + (dir_len & (TK_PATH_MAX - 1)),
				    FILELIFE_NAME_MAX, p.path);
	if (n <= 1)
		return 0;
	n += dir_len;
	if (n > FILELIFE_NAME_MAX)
		return 0;   /* longer than any path the walk makes */
	s = died(tk_path_hash(s->e.name, 0, n - 1));
	if (!s)
		return 0;
	/* died() left the name built above in place */
	send(ctx, &s->e, n);
	return 0;
}

SEC("tp")
int tp_unlinks_exit_tp(struct trace_event_raw_sys_exit *ctx)
{
	return tp_unlink_exit(ctx, ctx->ret);
}

char LICENSE[] SEC("license") = "GPL";
