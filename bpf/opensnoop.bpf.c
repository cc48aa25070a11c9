// SPDX-License-Identifier: GPL-2.0
/* opensnoop: trace open, openat and openat2, successful and failed.
 *
 * sys_enter_* stashes the caller's path pointer and flags by thread; the
 * path is read at sys_exit_*, after the kernel has copied it (getname),
 * so its pages are present: BPF cannot fault them in, and a path in a
 * page the caller never touched would be missed at sys_enter. openat2's
 * flags live in the caller's struct open_how, read at exit for the same
 * reason.
 *
 * -F: a relative path gets the path of the directory it is relative to
 * (the caller's cwd, or openat's dirfd), walked in BPF at sys_exit while
 * the caller still has that directory (tk_path_walk.bpf.h). */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "opensnoop.h"
#include "tk_cgroup.bpf.h"
#include "tk_emit.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_path_walk.bpf.h"
#include "tk_user_str.bpf.h"

const volatile bool failed_only = false;
const volatile bool full_path = false;
/* -f: only opens whose flags have any bit of flags_any, or (O_RDONLY,
 * which is 0) whose access mode is read-only when flags_rdonly. */
const volatile bool flag_filter = false;
const volatile __u64 flags_any = 0;
const volatile bool flags_rdonly = false;

struct pending {
	const char *path;
	const void *how;     /* openat2: the caller's struct open_how */
	u64 flags;           /* open, openat */
	int dfd;             /* openat, openat2; AT_FDCWD for open */
	u32 syscall;
};

#define TK_PENDING_VALUE struct pending
#include "tk_pending.bpf.h"

struct scratch {
	struct open_event e;
	/* -F: the caller's path is read after its directory's, at any offset
	 * in e.path up to OPEN_PATH_MAX; this is the rest of that read. */
	char spill[OPEN_PATH_MAX];
	struct tk_path_buf walk;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

static __always_inline bool flags_wanted(u64 flags)
{
	if (!flag_filter)
		return true;
	return (flags & flags_any) ||
	       (flags_rdonly && (flags & 3) == 0 /* O_ACCMODE, O_RDONLY */);
}

/* -f is judged here, so an open it leaves out costs no pending entry;
 * openat2's flags are open_how's first member, read now as at exit. */
static __always_inline int enter(int dfd, const char *path, u64 flags,
				 const void *how, u32 syscall)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct pending p = {
		.path = path, .how = how, .flags = flags, .dfd = dfd,
		.syscall = syscall,
	};

	if (!tk_task_wanted())
		return 0;
	if (flag_filter && how && bpf_probe_read_user(&flags, sizeof(flags), how))
		flags = 0;
	if (!flags_wanted(flags))
		return 0;
	tk_pending_put(tid, &p);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_open")
int open_enter(struct trace_event_raw_sys_enter *ctx)
{
	return enter(AT_FDCWD, (const char *)ctx->args[0], ctx->args[1], 0,
		     OPEN_SYS_OPEN);
}

SEC("tracepoint/syscalls/sys_enter_openat")
int openat_enter(struct trace_event_raw_sys_enter *ctx)
{
	return enter(ctx->args[0], (const char *)ctx->args[1], ctx->args[2], 0,
		     OPEN_SYS_OPENAT);
}

SEC("tracepoint/syscalls/sys_enter_openat2")
int openat2_enter(struct trace_event_raw_sys_enter *ctx)
{
	return enter(ctx->args[0], (const char *)ctx->args[1], 0,
		     (const void *)ctx->args[2], OPEN_SYS_OPENAT2);
}

/* n bytes of path were read into a buffer of OPEN_PATH_MAX: mark it cut
 * when there is a byte past the buffer. */
static __always_inline void mark_long(struct open_event *e, const char *path,
				      long n)
{
	char c;

	if (n == OPEN_PATH_MAX &&
	    !bpf_probe_read_user(&c, 1, path + OPEN_PATH_MAX - 1) && c)
		e->ev_flags |= OPEN_F_TRUNCATED;
}

/* Read the caller's path into e->path: bytes with the NUL, as
 * bpf_probe_read_user_str, or <= 0. */
static __always_inline long read_path(struct open_event *e, const char *path)
{
	long n = tk_read_user_str(e->path, OPEN_PATH_MAX, path);

	mark_long(e, path, n);
	return n;
}

/* -F: the path of the directory a relative path is relative to, "/", then
 * the path as the caller passed it, cut at OPEN_PATH_MAX - 1 bytes. As
 * read_path; 0 when the directory is unknown (a closed dirfd): the caller
 * then reads the path alone. */
static __always_inline long read_full_path(struct scratch *s, const char *path,
					   int dfd)
{
	struct open_event *e = &s->e;
	struct tk_dpath dir;
	u32 start, dir_len;
	bool cut;
	long n;
	char c;

	if (bpf_probe_read_user(&c, 1, path) || c == '/' || !c ||
	    !tk_path_at(dfd, &dir))
		return 0;
	start = tk_path_walk(&s->walk, &dir, &cut);
	dir_len = (TK_PATH_MAX - start) & (TK_PATH_MAX - 1);
	bpf_probe_read_kernel(e->path, dir_len,
			      s->walk.buf + (start & (TK_PATH_MAX - 1)));
	e->path[dir_len] = '/';
	n = bpf_probe_read_user_str(e->path + dir_len + 1, OPEN_PATH_MAX, path);
	if (n <= 0)
		return n;
	if (cut)
		e->ev_flags |= OPEN_F_PREFIX_CUT;
	mark_long(e, path, n);
	n += dir_len + 1;
	if (n > OPEN_PATH_MAX) {  /* cut at PATH_MAX like any path */
		n = OPEN_PATH_MAX;
		e->path[OPEN_PATH_MAX - 1] = 0;
		e->ev_flags |= OPEN_F_TRUNCATED;
	}
	return n;
}

static __always_inline int leave(void *ctx, long ret)
{
	u64 pid_tgid = bpf_get_current_pid_tgid();
	u32 tid = (u32)pid_tgid, zero = 0;
	struct pending *p = tk_pending_get(tid);
	struct open_event *e;
	struct scratch *s;
	const char *path;
	u64 size;
	long n = 0;
	int dfd;

	if (!p)
		return 0;
	if (failed_only && ret >= 0) {
		tk_pending_clear(tid, p);
		return 0;
	}
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s) {
		tk_pending_clear(tid, p);
		return 0;
	}
	e = &s->e;
	path = p->path;
	dfd = p->dfd;
	e->flags = p->flags;
	e->syscall = p->syscall;
	if (p->how && bpf_probe_read_user(&e->flags, sizeof(e->flags), p->how))
		e->flags = 0;   /* open_how.flags is its first member */
	tk_pending_clear(tid, p);

	pid_tgid = tk_pid_tgid();   /* the ids shown: the tool's namespace's */
	e->pid = pid_tgid >> 32;
	e->tid = (u32)pid_tgid;
	e->uid = (u32)bpf_get_current_uid_gid();
	e->cgroup_id = tk_cgroup_id();
	e->ret = ret;
	e->ev_flags = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	if (full_path)
		n = read_full_path(s, path, dfd);
	if (!n)
		n = read_path(e, path);
	if (n <= 0) {
		e->ev_flags |= OPEN_F_PATH_FAULT;
		n = 0;
	}
	e->path_len = n ? n - 1 : 0;
	size = n;
	tk_bound(size, OPEN_PATH_MAX);
	size += offsetof(struct open_event, path);
	tk_emit(ctx, e, size);
	return 0;
}

/* One program for the three exits, attached to each the kernel has
 * (tk_syscall_exits_target): with --full-path its dentry walk makes it
 * large for the verifier, which then checks it once, not three times. */
SEC("tp")
int open_exit_tp(struct trace_event_raw_sys_exit *ctx)
{
	return leave(ctx, ctx->ret);
}

char LICENSE[] SEC("license") = "GPL";
