// SPDX-License-Identifier: GPL-2.0
/* statsnoop: statfs, stat, lstat, fstat, newfstatat and statx (the set of
 * libbpf-tools' statsnoop), on syscall tracepoints.
 *
 * As opensnoop: sys_enter_* keeps the path pointer by thread, sys_exit_*
 * reads it once the kernel has copied it (its pages are then present)
 * and sends the event with the result. fstat has no path: its fd's path
 * is walked in BPF at exit, while the caller still holds the fd
 * (tk_path_walk.bpf.h), where libbpf-tools reads /proc later. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "statsnoop.h"
#include "tk_cgroup.bpf.h"
#include "tk_emit.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_path_walk.bpf.h"

const volatile bool failed_only = false;

struct pending {
	const char *path;   /* NULL: newfstat */
	int fd;
	u32 syscall;
};

#define TK_PENDING_VALUE struct pending
#include "tk_pending.bpf.h"
#include "tk_user_str.bpf.h"

struct scratch {
	struct stat_event e;
	struct tk_path_buf walk;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

static __always_inline int enter(const char *path, int fd, u32 syscall)
{
	struct pending p = { .path = path, .fd = fd, .syscall = syscall };

	if (tk_task_wanted())
		tk_pending_put((u32)bpf_get_current_pid_tgid(), &p);
	return 0;
}

/* The caller's path into e->path, as opensnoop reads it: bytes with the
 * NUL, or <= 0. */
static __always_inline long read_path(struct stat_event *e, const char *path)
{
	long n = tk_read_user_str(e->path, STAT_PATH_MAX, path);
	char c;

	if (n == STAT_PATH_MAX &&
	    !bpf_probe_read_user(&c, 1, path + STAT_PATH_MAX - 1) && c)
		e->ev_flags |= STAT_F_TRUNCATED;
	return n;
}

/* newfstat: the path of what fd refers to, or 0 for a closed fd. */
static __always_inline long read_fd_path(struct scratch *s, int fd)
{
	struct tk_dpath p;
	u32 start, len;
	bool cut;

	if (!tk_path_fd(fd, &p))
		return 0;
	start = tk_path_walk(&s->walk, &p, &cut);
	len = (TK_PATH_MAX - start) & (TK_PATH_MAX - 1);
	bpf_probe_read_kernel(s->e.path, len,
			      s->walk.buf + (start & (TK_PATH_MAX - 1)));
	s->e.path[len & (STAT_PATH_MAX - 1)] = 0;
	s->e.ev_flags |= STAT_F_FD_PATH | (cut ? STAT_F_PREFIX_CUT : 0);
	return len + 1;
}

static __always_inline int leave(void *ctx, long ret)
{
	u32 tid = (u32)bpf_get_current_pid_tgid(), zero = 0;
	struct pending *p = tk_pending_get(tid);
	struct stat_event *e;
	struct scratch *s;
	const char *path;
	u64 pid_tgid, size;
	long n;

	if (!p)
		return 0;
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s || (failed_only && ret >= 0)) {
		tk_pending_clear(tid, p);
		return 0;
	}
	e = &s->e;
	path = p->path;
	e->fd = p->fd;
	e->syscall = p->syscall;
	tk_pending_clear(tid, p);

	pid_tgid = tk_pid_tgid();
	e->ts_ns = bpf_ktime_get_ns();
	e->pid = pid_tgid >> 32;
	e->tid = (u32)pid_tgid;
	e->uid = (u32)bpf_get_current_uid_gid();
	e->cgroup_id = tk_cgroup_id();
	e->ret = ret;
	e->ev_flags = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	n = path ? read_path(e, path) : 0;
	/* fstat, or an empty path with AT_EMPTY_PATH (glibc's fstat is
	 * newfstatat(fd, "", buf, AT_EMPTY_PATH)): the fd's path. */
	if ((!path || n == 1) && e->fd >= 0)
		n = read_fd_path(s, e->fd) ?: n;
	if (n <= 0) {
		if (path)
			e->ev_flags |= STAT_F_PATH_FAULT;
		n = 0;
	}
	e->path_len = n ? n - 1 : 0;
	size = n;
	tk_bound(size, STAT_PATH_MAX);
	size += offsetof(struct stat_event, path);
	tk_emit(ctx, e, size);
	return 0;
}

/* Each reads only its own arguments: a read past them would make the
 * kernel refuse to attach the program (sys_enter_newfstat has two). */
SEC("tracepoint/syscalls/sys_enter_statfs")
int statfs_enter(struct trace_event_raw_sys_enter *ctx)
{
	return enter((const char *)ctx->args[0], -1, STAT_SYS_STATFS);
}

SEC("tracepoint/syscalls/sys_enter_newstat")
int newstat_enter(struct trace_event_raw_sys_enter *ctx)
{
	return enter((const char *)ctx->args[0], -1, STAT_SYS_NEWSTAT);
}

SEC("tracepoint/syscalls/sys_enter_statx")
int statx_enter(struct trace_event_raw_sys_enter *ctx)
{
	return enter((const char *)ctx->args[1], ctx->args[0], STAT_SYS_STATX);
}

SEC("tracepoint/syscalls/sys_enter_newfstat")
int newfstat_enter(struct trace_event_raw_sys_enter *ctx)
{
	return enter(0, ctx->args[0], STAT_SYS_NEWFSTAT);
}

SEC("tracepoint/syscalls/sys_enter_newfstatat")
int newfstatat_enter(struct trace_event_raw_sys_enter *ctx)
{
	return enter((const char *)ctx->args[1], ctx->args[0],
		     STAT_SYS_NEWFSTATAT);
}

SEC("tracepoint/syscalls/sys_enter_newlstat")
int newlstat_enter(struct trace_event_raw_sys_enter *ctx)
{
	return enter((const char *)ctx->args[0], -1, STAT_SYS_NEWLSTAT);
}

/* One program for every stat syscall's exit, attached to each
 * syscalls:sys_exit_* the kernel has (tk_set_target_tps; the record is
 * the same for all, and the enter side kept which syscall it was).
 * fstat's dentry walk makes it large (some 117000 instructions for the
 * verifier, 0.15 to 0.35 s of load each): checked once, where a program
 * per syscall was checked six times. */
SEC("tp")
int stat_exit_tp(struct trace_event_raw_sys_exit *ctx)
{
	return leave(ctx, ctx->ret);
}

char LICENSE[] SEC("license") = "GPL";
