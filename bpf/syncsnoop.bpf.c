// SPDX-License-Identifier: GPL-2.0
/* syncsnoop: sync, fsync, fdatasync, msync, sync_file_range and syncfs,
 * on syscall tracepoints. sys_enter_* keeps the arguments and the time
 * by thread; sys_exit_* sends them with the result and the latency
 * (a sync can block for long: the time shown is the entry's, as bcc's). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "syncsnoop.h"
#include "tk_cgroup.bpf.h"
#include "tk_emit.bpf.h"
#include "tk_filter.bpf.h"

struct pending {
	u64 args[4];
	u64 ts;
	u32 syscall;
};

#define TK_PENDING_VALUE struct pending
#include "tk_pending.bpf.h"

/* Keep the first nargs arguments; nargs is a constant in each program
 * (a read past the tracepoint's arguments would make the kernel refuse
 * the attach), each read at a constant offset. */
static __always_inline int enter(struct trace_event_raw_sys_enter *ctx,
				 u32 syscall, int nargs)
{
	struct pending p = { .syscall = syscall };

	if (!tk_task_wanted())
		return 0;
	if (nargs > 0)
		p.args[0] = ctx->args[0];
	if (nargs > 1)
		p.args[1] = ctx->args[1];
	if (nargs > 2)
		p.args[2] = ctx->args[2];
	if (nargs > 3)
		p.args[3] = ctx->args[3];
	p.ts = bpf_ktime_get_ns();
	tk_pending_put((u32)bpf_get_current_pid_tgid(), &p);
	return 0;
}

static __always_inline int leave(void *ctx, long ret)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct pending *p = tk_pending_get(tid);
	struct sync_event e = {};
	u64 pid_tgid;

	if (!p)
		return 0;
	__builtin_memcpy(e.args, p->args, sizeof(e.args));
	e.ts_ns = p->ts;
	e.syscall = p->syscall;
	tk_pending_clear(tid, p);
	e.lat_ns = bpf_ktime_get_ns() - e.ts_ns;
	pid_tgid = tk_pid_tgid();
	e.pid = pid_tgid >> 32;
	e.tid = (u32)pid_tgid;
	e.uid = (u32)bpf_get_current_uid_gid();
	e.cgroup_id = tk_cgroup_id();
	e.ret = ret;
	bpf_get_current_comm(e.comm, sizeof(e.comm));
	tk_emit(ctx, &e, sizeof(e));
	return 0;
}

#define SYNC_CALL(name, sys, nargs)                                        \
SEC("tracepoint/syscalls/sys_enter_" #name)                                \
int name##_enter(struct trace_event_raw_sys_enter *ctx)                    \
{                                                                          \
	return enter(ctx, sys, nargs);                                     \
}                                                                          \
SEC("tracepoint/syscalls/sys_exit_" #name)                                 \
int name##_exit(struct trace_event_raw_sys_exit *ctx)                      \
{                                                                          \
	return leave(ctx, ctx->ret);                                       \
}

SYNC_CALL(sync, SYNC_SYS_SYNC, 0)
SYNC_CALL(fsync, SYNC_SYS_FSYNC, 1)
SYNC_CALL(fdatasync, SYNC_SYS_FDATASYNC, 1)
SYNC_CALL(msync, SYNC_SYS_MSYNC, 3)
SYNC_CALL(sync_file_range, SYNC_SYS_SYNC_FILE_RANGE, 4)
SYNC_CALL(syncfs, SYNC_SYS_SYNCFS, 1)

char LICENSE[] SEC("license") = "GPL";
