/* fsslower and fsdist: the probes that time one file system's reads,
 * writes, opens, fsyncs and getattrs. The tool defines, before
 * including this header,
 *
 *   static __always_inline void fsop_done(void *ctx, u32 op,
 *           struct dentry *de, s64 bytes, u64 offset, u64 ts, u64 lat_ns);
 *
 * which gets each finished operation (op: enum fsop; de: its file's
 * dentry; ts: its start, ktime).
 *
 * Two ways (libtrace/kfunc_or_tp.h picks one; libtrace/fstypes.c points
 * them at the chosen file system):
 *
 * kf_*: the file system's own functions (ext4_file_read_iter, ...), at
 * entry and return (fentry/fexit, else kprobe/kretprobe), as bcc: every
 * caller, the time spent in the file system alone. A file system may
 * open files in two more functions (NFS: NFSv4's own f_op->open,
 * nfs4_file_open, beside NFSv2/3's nfs_file_open; and its
 * inode_operations.atomic_open, nfs_atomic_open, which opens a file it
 * creates or looks up without calling f_op->open): kf_open2_ and
 * kf_aopen_, left out where the file system has not them.
 *
 * tp_*: syscall tracepoints, the whole system call timed, for files
 * whose super block's type is fs_type (fd -> struct file -> f_inode ->
 * i_sb -> s_type -> name). getattr only as fstat (newfstat, or
 * newfstatat/statx on a descriptor with AT_EMPTY_PATH): a path has no
 * file to look at in BPF. Not seen: mmap'd I/O, io_uring, aio, the
 * kernel's own I/O. */
#ifndef TK_FSOP_BPF_H
#define TK_FSOP_BPF_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "fsop.h"
#include "tk_fd.bpf.h"
#include "tk_filter.bpf.h"

/* tp_: the file system type's name, and a second one it also goes by
 * (nfs: "nfs4"; else empty). */
const volatile char fs_type[FSOP_TYPE_LEN] = {};
const volatile char fs_type_alt[FSOP_TYPE_LEN] = {};
/* kf_: which argument of the getattr function is its struct path *:
 * 0 before 5.12, 1 since (a user namespace or idmap came first). */
const volatile __u32 getattr_path_arg = 0;

struct fsop_pending {
	u64 ts;
	u64 offset;
	struct dentry *de;
	struct file *file;   /* kf_aopen_: the file it may open */
	u32 op;
};

#define TK_PENDING_VALUE struct fsop_pending
#include "tk_pending.bpf.h"

#define FSOP_AT_EMPTY_PATH 0x1000
/* struct file's f_mode: an atomic_open opened the file (include/linux/fs.h,
 * since 4.18). */
#define FSOP_FMODE_OPENED 0x80000

static __always_inline bool fsop_same_type(const char *name, const volatile char *want)
{
	int i;

	if (!want[0])
		return false;
#pragma unroll
	for (i = 0; i < FSOP_TYPE_LEN; i++) {
		if (name[i] != want[i])
			return false;
		if (!name[i])
			return true;
	}
	return true;
}

/* Is file on the chosen file system? */
static __always_inline bool fsop_file_wanted(struct file *f)
{
	char name[FSOP_TYPE_LEN] = {};
	const char *p;

	if (!f)
		return false;
	p = BPF_CORE_READ(f, f_inode, i_sb, s_type, name);
	if (!p || bpf_probe_read_kernel_str(name, sizeof(name), p) < 0)
		return false;
	return fsop_same_type(name, fs_type) || fsop_same_type(name, fs_type_alt);
}

static __always_inline int fsop_begin(u32 op, struct dentry *de, u64 offset)
{
	struct fsop_pending p = { .ts = bpf_ktime_get_ns(), .offset = offset,
				  .de = de, .op = op };

	tk_pending_put((u32)bpf_get_current_pid_tgid(), &p);
	return 0;
}

/* The operation's end: bytes is the result of a read or write. A
 * pending entry of another operation (kf_: one file system function
 * calling another) is left to its own end. */
static __always_inline int fsop_end(void *ctx, u32 op, s64 ret)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct fsop_pending *pp = tk_pending_get(tid);
	struct fsop_pending p;

	if (!pp || pp->op != op)
		return 0;
	p = *pp;
	tk_pending_clear(tid, pp);
	fsop_done(ctx, op, p.de, op == FSOP_READ || op == FSOP_WRITE ? ret : 0,
		  p.offset, p.ts, bpf_ktime_get_ns() - p.ts);
	return 0;
}

/* ---- kf_: the file system's functions ---- */

static __always_inline int kf_iocb(u32 op, struct kiocb *iocb)
{
	if (!tk_task_wanted())
		return 0;
	return fsop_begin(op, BPF_CORE_READ(iocb, ki_filp, f_path.dentry),
			  BPF_CORE_READ(iocb, ki_pos));
}

static __always_inline int kf_file(u32 op, struct file *file)
{
	if (!tk_task_wanted())
		return 0;
	return fsop_begin(op, BPF_CORE_READ(file, f_path.dentry), 0);
}

static __always_inline int kf_path(const struct path *path)
{
	if (!tk_task_wanted())
		return 0;
	return fsop_begin(FSOP_GETATTR, BPF_CORE_READ(path, dentry), 0);
}

/* read_iter and write_iter: (struct kiocb *, struct iov_iter *) */
#define KF_RW(name, OP)                                                      \
SEC("fentry")                                                                \
int BPF_PROG(kf_##name##_in_fentry, struct kiocb *iocb)                      \
{                                                                            \
	return kf_iocb(OP, iocb);                                            \
}                                                                            \
SEC("kprobe")                                                                \
int BPF_KPROBE(kf_##name##_in_kprobe, struct kiocb *iocb)                    \
{                                                                            \
	return kf_iocb(OP, iocb);                                            \
}                                                                            \
SEC("fexit")                                                                 \
int BPF_PROG(kf_##name##_out_fexit, struct kiocb *iocb, struct iov_iter *it, \
	     ssize_t ret)                                                    \
{                                                                            \
	return fsop_end(ctx, OP, ret);                                       \
}                                                                            \
SEC("kretprobe")                                                             \
int BPF_KRETPROBE(kf_##name##_out_kretprobe, ssize_t ret)                    \
{                                                                            \
	return fsop_end(ctx, OP, ret);                                       \
}

KF_RW(read, FSOP_READ)
KF_RW(write, FSOP_WRITE)

/* open (struct inode *, struct file *) and fsync (struct file *, ...):
 * the result is not needed. */
#define KF_FILE(name, OP, ARGS, FILE)                                        \
SEC("fentry")                                                                \
int BPF_PROG(kf_##name##_in_fentry, ARGS)                                    \
{                                                                            \
	return kf_file(OP, FILE);                                            \
}                                                                            \
SEC("kprobe")                                                                \
int BPF_KPROBE(kf_##name##_in_kprobe, ARGS)                                  \
{                                                                            \
	return kf_file(OP, FILE);                                            \
}                                                                            \
SEC("fexit")                                                                 \
int BPF_PROG(kf_##name##_out_fexit)                                          \
{                                                                            \
	return fsop_end(ctx, OP, 0);                                         \
}                                                                            \
SEC("kretprobe")                                                             \
int BPF_KRETPROBE(kf_##name##_out_kretprobe)                                 \
{                                                                            \
	return fsop_end(ctx, OP, 0);                                         \
}

#define COMMA ,
KF_FILE(open, FSOP_OPEN, struct inode *inode COMMA struct file *file, file)
KF_FILE(open2, FSOP_OPEN, struct inode *inode COMMA struct file *file, file)
KF_FILE(fsync, FSOP_FSYNC, struct file *file, file)

/* atomic_open (struct inode *dir, struct dentry *, struct file *,
 * unsigned open_flags, umode_t): an open only when it returns 0 with the
 * file opened. Else it left the open to f_op->open (finish_no_open: a
 * directory, a dentry already in the cache), or failed. */
static __always_inline int kf_aopen_begin(struct dentry *de, struct file *file)
{
	struct fsop_pending p = { .op = FSOP_OPEN, .de = de, .file = file };

	if (!tk_task_wanted())
		return 0;
	p.ts = bpf_ktime_get_ns();
	tk_pending_put((u32)bpf_get_current_pid_tgid(), &p);
	return 0;
}

static __always_inline int kf_aopen_end(void *ctx, int ret)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct fsop_pending *pp = tk_pending_get(tid);
	struct fsop_pending p;
	struct file *f;

	if (!pp || pp->op != FSOP_OPEN || !pp->file)
		return 0;
	p = *pp;
	tk_pending_clear(tid, pp);
	f = p.file;   /* not in BPF_CORE_READ: p's struct is no kernel's */
	if (ret || !(BPF_CORE_READ(f, f_mode) & FSOP_FMODE_OPENED))
		return 0;
	fsop_done(ctx, FSOP_OPEN, p.de, 0, 0, p.ts, bpf_ktime_get_ns() - p.ts);
	return 0;
}

SEC("fentry")
int BPF_PROG(kf_aopen_in_fentry, struct inode *dir, struct dentry *de, struct file *file)
{
	return kf_aopen_begin(de, file);
}

SEC("kprobe")
int BPF_KPROBE(kf_aopen_in_kprobe, struct inode *dir, struct dentry *de, struct file *file)
{
	return kf_aopen_begin(de, file);
}

SEC("fexit")
int BPF_PROG(kf_aopen_out_fexit, struct inode *dir, struct dentry *de, struct file *file,
	     unsigned int open_flags, umode_t mode, int ret)
{
	return kf_aopen_end(ctx, ret);
}

SEC("kretprobe")
int BPF_KRETPROBE(kf_aopen_out_kretprobe, int ret)
{
	return kf_aopen_end(ctx, ret);
}

/* getattr: its path is argument getattr_path_arg. */
SEC("fentry")
int kf_getattr_in_fentry(u64 *ctx)
{
	/* Both read at constant offsets: clang would otherwise index ctx
	 * by getattr_path_arg, and the verifier refuses a load from a
	 * modified ctx pointer ("dereference of modified ctx ptr"), so
	 * getattr fell back to a kprobe under TRACEKIT_ATTACH=fentry. */
	u64 a0 = ctx[0], a1 = ctx[1];

	barrier_var(a0);
	barrier_var(a1);
	return kf_path((const struct path *)(getattr_path_arg ? a1 : a0));
}

SEC("kprobe")
int kf_getattr_in_kprobe(struct pt_regs *ctx)
{
	if (getattr_path_arg)
		return kf_path((const struct path *)PT_REGS_PARM2(ctx));
	return kf_path((const struct path *)PT_REGS_PARM1(ctx));
}

SEC("fexit")
int BPF_PROG(kf_getattr_out_fexit)
{
	return fsop_end(ctx, FSOP_GETATTR, 0);
}

SEC("kretprobe")
int BPF_KRETPROBE(kf_getattr_out_kretprobe)
{
	return fsop_end(ctx, FSOP_GETATTR, 0);
}

/* ---- tp_: syscall tracepoints ---- */

/* A call on descriptor fd at position pos (-1: the file's own). */
static __always_inline int tp_fd_enter(u32 op, long fd, s64 pos)
{
	struct file *f;

	if (!tk_task_wanted())
		return 0;
	f = tk_fd_file(fd);
	if (!fsop_file_wanted(f))
		return 0;
	if (pos < 0)
		pos = op == FSOP_READ || op == FSOP_WRITE ? BPF_CORE_READ(f, f_pos) : 0;
	return fsop_begin(op, BPF_CORE_READ(f, f_path.dentry), pos);
}

/* newfstatat and statx: only on a descriptor (AT_EMPTY_PATH and an
 * empty or NULL path). */
static __always_inline int tp_stat_enter(long fd, const char *path, long flags)
{
	char c = 0;

	if (!(flags & FSOP_AT_EMPTY_PATH))
		return 0;
	if (path && !bpf_probe_read_user(&c, 1, path) && c)
		return 0;
	return tp_fd_enter(FSOP_GETATTR, fd, 0);
}

#define TP_CALL(op, name, ENTER, OP)                                         \
SEC("tracepoint/syscalls/sys_enter_" #name)                                  \
int tp_##op##_##name##_enter_tp(struct trace_event_raw_sys_enter *ctx)       \
{                                                                            \
	return ENTER;                                                        \
}                                                                            \
SEC("tracepoint/syscalls/sys_exit_" #name)                                   \
int tp_##op##_##name##_exit_tp(struct trace_event_raw_sys_exit *ctx)         \
{                                                                            \
	return fsop_end(ctx, OP, ctx->ret);                                  \
}

TP_CALL(read, read, tp_fd_enter(FSOP_READ, ctx->args[0], -1), FSOP_READ)
TP_CALL(read, readv, tp_fd_enter(FSOP_READ, ctx->args[0], -1), FSOP_READ)
TP_CALL(read, pread64, tp_fd_enter(FSOP_READ, ctx->args[0], ctx->args[3]), FSOP_READ)
TP_CALL(read, preadv, tp_fd_enter(FSOP_READ, ctx->args[0], ctx->args[3]), FSOP_READ)
TP_CALL(read, preadv2, tp_fd_enter(FSOP_READ, ctx->args[0], ctx->args[3]), FSOP_READ)
TP_CALL(write, write, tp_fd_enter(FSOP_WRITE, ctx->args[0], -1), FSOP_WRITE)
TP_CALL(write, writev, tp_fd_enter(FSOP_WRITE, ctx->args[0], -1), FSOP_WRITE)
TP_CALL(write, pwrite64, tp_fd_enter(FSOP_WRITE, ctx->args[0], ctx->args[3]), FSOP_WRITE)
TP_CALL(write, pwritev, tp_fd_enter(FSOP_WRITE, ctx->args[0], ctx->args[3]), FSOP_WRITE)
TP_CALL(write, pwritev2, tp_fd_enter(FSOP_WRITE, ctx->args[0], ctx->args[3]), FSOP_WRITE)
TP_CALL(fsync, fsync, tp_fd_enter(FSOP_FSYNC, ctx->args[0], 0), FSOP_FSYNC)
TP_CALL(fsync, fdatasync, tp_fd_enter(FSOP_FSYNC, ctx->args[0], 0), FSOP_FSYNC)
TP_CALL(getattr, newfstat, tp_fd_enter(FSOP_GETATTR, ctx->args[0], 0), FSOP_GETATTR)
TP_CALL(getattr, newfstatat, tp_stat_enter(ctx->args[0], (const char *)ctx->args[1],
					   ctx->args[3]), FSOP_GETATTR)
TP_CALL(getattr, statx, tp_stat_enter(ctx->args[0], (const char *)ctx->args[1],
				      ctx->args[2]), FSOP_GETATTR)

/* open: the file is known only at the exit, by the descriptor returned. */
static __always_inline int tp_open_enter(void)
{
	if (tk_task_wanted())
		fsop_begin(FSOP_OPEN, NULL, 0);
	return 0;
}

static __always_inline int tp_open_exit(void *ctx, long ret)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct fsop_pending *pp = tk_pending_get(tid);
	struct file *f;
	u64 ts;

	if (!pp || pp->op != FSOP_OPEN)
		return 0;
	ts = pp->ts;
	tk_pending_clear(tid, pp);
	if (ret < 0)
		return 0;   /* no file, so no file system to judge by */
	f = tk_fd_file(ret);
	if (fsop_file_wanted(f))
		fsop_done(ctx, FSOP_OPEN, BPF_CORE_READ(f, f_path.dentry), 0, 0, ts,
			  bpf_ktime_get_ns() - ts);
	return 0;
}

#define TP_OPEN(name)                                                        \
SEC("tracepoint/syscalls/sys_enter_" #name)                                  \
int tp_open_##name##_enter_tp(struct trace_event_raw_sys_enter *ctx)         \
{                                                                            \
	return tp_open_enter();                                              \
}                                                                            \
SEC("tracepoint/syscalls/sys_exit_" #name)                                   \
int tp_open_##name##_exit_tp(struct trace_event_raw_sys_exit *ctx)           \
{                                                                            \
	return tp_open_exit(ctx, ctx->ret);                                  \
}

TP_OPEN(open)
TP_OPEN(openat)
TP_OPEN(openat2)

#endif
