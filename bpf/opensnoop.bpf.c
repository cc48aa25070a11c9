// SPDX-License-Identifier: GPL-2.0
/* opensnoop: trace open, openat and openat2, successful and failed.
 *
 * sys_enter_* stashes the caller's path pointer and flags by thread; the
 * path is read at sys_exit_*, after the kernel has copied it (getname),
 * so its pages are present: BPF cannot fault them in, and a path in a
 * page the caller never touched would be missed at sys_enter. openat2's
 * flags live in the caller's struct open_how, read at exit for the same
 * reason. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "opensnoop.h"
#include "tk_emit.bpf.h"
#include "tk_filter.bpf.h"

const volatile bool failed_only = false;

struct pending {
	const char *path;
	const void *how;     /* openat2: the caller's struct open_how */
	u64 flags;           /* open, openat */
	u32 syscall;
};

#define TK_PENDING_VALUE struct pending
#include "tk_pending.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct open_event);
} scratch SEC(".maps");

static __always_inline int enter(const char *path, u64 flags, const void *how,
				 u32 syscall)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct pending p = {
		.path = path, .how = how, .flags = flags, .syscall = syscall,
	};

	if (!tk_task_wanted())
		return 0;
	tk_pending_put(tid, &p);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_open")
int open_enter(struct trace_event_raw_sys_enter *ctx)
{
	return enter((const char *)ctx->args[0], ctx->args[1], 0, OPEN_SYS_OPEN);
}

SEC("tracepoint/syscalls/sys_enter_openat")
int openat_enter(struct trace_event_raw_sys_enter *ctx)
{
	return enter((const char *)ctx->args[1], ctx->args[2], 0,
		     OPEN_SYS_OPENAT);
}

SEC("tracepoint/syscalls/sys_enter_openat2")
int openat2_enter(struct trace_event_raw_sys_enter *ctx)
{
	return enter((const char *)ctx->args[1], 0, (const void *)ctx->args[2],
		     OPEN_SYS_OPENAT2);
}

static __always_inline int leave(void *ctx, long ret)
{
	u64 pid_tgid = bpf_get_current_pid_tgid();
	u32 tid = (u32)pid_tgid, zero = 0;
	struct pending *p = tk_pending_get(tid);
	struct open_event *e;
	const char *path;
	u64 size;
	long n;
	char c;

	if (!p)
		return 0;
	if (failed_only && ret >= 0) {
		tk_pending_clear(tid, p);
		return 0;
	}
	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e) {
		tk_pending_clear(tid, p);
		return 0;
	}
	path = p->path;
	e->flags = p->flags;
	e->syscall = p->syscall;
	if (p->how && bpf_probe_read_user(&e->flags, sizeof(e->flags), p->how))
		e->flags = 0;   /* open_how.flags is its first member */
	tk_pending_clear(tid, p);

	e->pid = pid_tgid >> 32;
	e->tid = tid;
	e->uid = (u32)bpf_get_current_uid_gid();
	e->ret = ret;
	e->ev_flags = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	n = bpf_probe_read_user_str(e->path, OPEN_PATH_MAX, path);
	if (n <= 0) {
		e->ev_flags |= OPEN_F_PATH_FAULT;
		n = 0;
	} else if (n == OPEN_PATH_MAX &&
		   !bpf_probe_read_user(&c, 1, path + OPEN_PATH_MAX - 1) && c) {
		e->ev_flags |= OPEN_F_TRUNCATED;  /* a byte past the buffer */
	}
	e->path_len = n ? n - 1 : 0;
	size = n;
	tk_bound(size, OPEN_PATH_MAX);
	size += offsetof(struct open_event, path);
	tk_emit(ctx, e, size);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_open")
int open_exit(struct trace_event_raw_sys_exit *ctx)
{
	return leave(ctx, ctx->ret);
}

SEC("tracepoint/syscalls/sys_exit_openat")
int openat_exit(struct trace_event_raw_sys_exit *ctx)
{
	return leave(ctx, ctx->ret);
}

SEC("tracepoint/syscalls/sys_exit_openat2")
int openat2_exit(struct trace_event_raw_sys_exit *ctx)
{
	return leave(ctx, ctx->ret);
}

char LICENSE[] SEC("license") = "GPL";
