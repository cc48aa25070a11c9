// SPDX-License-Identifier: GPL-2.0
/* filetop: reads and writes by thread and file, counted in a per-CPU
 * hash that userspace reads at each interval.
 *
 * Two ways (libtrace/kfunc_or_tp.h picks one):
 *
 * kf_*: vfs_read and vfs_write at entry (fentry, else kprobe), as bcc:
 * every read(2), write(2), pread64(2), pwrite64(2) and the kernel's own
 * calls of them, with the bytes asked for. readv(2), writev(2) and
 * splice do not go through them.
 *
 * tp_*: the syscall tracepoints of read, write, pread64, pwrite64, readv,
 * writev, preadv, pwritev, preadv2 and pwritev2: the descriptor at entry,
 * its struct file at exit (found through the task's fd table), with the
 * bytes done (the return value; 0 for a failed call). Not seen: I/O by
 * the kernel itself, sendfile, splice, io_uring, mmap. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "filetop.h"
#include "tk_fd.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_loss.bpf.h"

const volatile bool all_files = false;   /* -a: not only regular files */

#define S_IFMT 0170000
#define S_IFREG 0100000
#define S_IFSOCK 0140000

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, FILETOP_MAX_ENTRIES);
	__type(key, struct filetop_key);
	__type(value, struct filetop_counts);
} counts SEC(".maps");

struct pending {
	int fd;
	bool read;
};

#define TK_PENDING_VALUE struct pending
#include "tk_pending.bpf.h"

static __always_inline void count(struct file *file, u64 bytes, bool read)
{
	struct filetop_key k;
	struct filetop_counts *c, zero = {};
	struct dentry *de;
	u64 pid_tgid;
	u32 mode;

	if (!file)
		return;
	mode = BPF_CORE_READ(file, f_inode, i_mode);
	if (!all_files && (mode & S_IFMT) != S_IFREG)
		return;
	de = BPF_CORE_READ(file, f_path.dentry);
	__builtin_memset(&k, 0, sizeof(k));
	k.name_len = BPF_CORE_READ(de, d_name.len);
	if (!k.name_len)
		return;   /* no name (anonymous inodes), as bcc */
	/* _str: the bytes after the NUL stay 0, so one file is one key */
	bpf_probe_read_kernel_str(k.name, sizeof(k.name), BPF_CORE_READ(de, d_name.name));
	k.ino = BPF_CORE_READ(file, f_inode, i_ino);
	k.dev = BPF_CORE_READ(file, f_inode, i_sb, s_dev);
	k.rdev = BPF_CORE_READ(file, f_inode, i_rdev);
	pid_tgid = tk_pid_tgid();
	k.pid = pid_tgid >> 32;
	k.tid = (u32)pid_tgid;
	k.type = (mode & S_IFMT) == S_IFREG ? 'R' : (mode & S_IFMT) == S_IFSOCK ? 'S' : 'O';
	bpf_get_current_comm(k.comm, sizeof(k.comm));
	c = tk_lookup_or_init(&counts, &k, &zero);
	if (!c)
		return;
	if (read) {   /* per-CPU: no atomics */
		c->reads++;
		c->rbytes += bytes;
	} else {
		c->writes++;
		c->wbytes += bytes;
	}
}

/* ---- kf_: vfs_read, vfs_write ---- */

SEC("fentry/vfs_read")
int BPF_PROG(kf_r_read_fentry, struct file *file, char *buf, size_t n)
{
	if (tk_task_wanted())
		count(file, n, true);
	return 0;
}

SEC("kprobe/vfs_read")
int BPF_KPROBE(kf_r_read_kprobe, struct file *file, char *buf, size_t n)
{
	if (tk_task_wanted())
		count(file, n, true);
	return 0;
}

SEC("fentry/vfs_write")
int BPF_PROG(kf_w_write_fentry, struct file *file, char *buf, size_t n)
{
	if (tk_task_wanted())
		count(file, n, false);
	return 0;
}

SEC("kprobe/vfs_write")
int BPF_KPROBE(kf_w_write_kprobe, struct file *file, char *buf, size_t n)
{
	if (tk_task_wanted())
		count(file, n, false);
	return 0;
}

/* ---- tp_: syscall tracepoints ---- */

static __always_inline int enter(long fd, bool read)
{
	struct pending p = { .fd = fd, .read = read };

	if (tk_task_wanted())
		tk_pending_put((u32)bpf_get_current_pid_tgid(), &p);
	return 0;
}

static __always_inline int leave(long ret)
{
	struct pending p;

	if (!tk_pending_take((u32)bpf_get_current_pid_tgid(), &p))
		return 0;
	count(tk_fd_file(p.fd), ret > 0 ? ret : 0, p.read);
	return 0;
}

#define TP_IO(rw, name, is_read)                                             \
SEC("tracepoint/syscalls/sys_enter_" #name)                                  \
int tp_##rw##_##name##_enter_tp(struct trace_event_raw_sys_enter *ctx)       \
{                                                                            \
	return enter(ctx->args[0], is_read);                                 \
}                                                                            \
SEC("tracepoint/syscalls/sys_exit_" #name)                                   \
int tp_##rw##_##name##_exit_tp(struct trace_event_raw_sys_exit *ctx)         \
{                                                                            \
	return leave(ctx->ret);                                              \
}

TP_IO(r, read, true)
TP_IO(r, pread64, true)
TP_IO(r, readv, true)
TP_IO(r, preadv, true)
TP_IO(r, preadv2, true)
TP_IO(w, write, false)
TP_IO(w, pwrite64, false)
TP_IO(w, writev, false)
TP_IO(w, pwritev, false)
TP_IO(w, pwritev2, false)

char LICENSE[] SEC("license") = "GPL";
