// SPDX-License-Identifier: GPL-2.0
/* killsnoop: kill, tkill, tgkill, rt_sigqueueinfo and rt_tgsigqueueinfo
 * on syscall tracepoints (bcc: a kprobe on kill only). sys_enter_* keeps
 * the target and the signal by thread, filtered there (-s, -T); sys_exit_*
 * sends them with the result (-x: failed calls only). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "killsnoop.h"
#include "tk_cgroup.bpf.h"
#include "tk_emit.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_signal.bpf.h"

const volatile int target = 0;                   /* -T: 0 for any */
const volatile bool failed_only = false;         /* -x */

struct pending {
	int tpid;
	int tgid;
	int sig;
	u32 syscall;
};

#define TK_PENDING_VALUE struct pending
#include "tk_pending.bpf.h"

/* tgid: the target's process where the call names one (tgkill), else 0;
 * -T matches it or tpid. */
static __always_inline int enter(u32 syscall, int tpid, int tgid, int sig)
{
	struct pending p = { .tpid = tpid, .tgid = tgid, .sig = sig, .syscall = syscall };

	if (!tk_signal_wanted(sig))
		return 0;
	if (target && tpid != target && tgid != target)
		return 0;
	if (!tk_task_wanted())
		return 0;
	tk_pending_put((u32)bpf_get_current_pid_tgid(), &p);
	return 0;
}

static __always_inline int leave(void *ctx, long ret)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct pending *p = tk_pending_get(tid);
	struct kill_event e = {};

	if (!p)
		return 0;
	e.tpid = p->tpid;
	e.tgid = p->tgid;
	e.sig = p->sig;
	e.syscall = p->syscall;
	tk_pending_clear(tid, p);
	if (failed_only && ret >= 0)
		return 0;
	TK_EVENT_SET_CURRENT(&e);
	e.ret = ret;

	tk_emit(ctx, &e, sizeof(e));
	return 0;
}

#define KILL_EXIT(name)                                                    \
SEC("tracepoint/syscalls/sys_exit_" #name)                                 \
int name##_exit(struct trace_event_raw_sys_exit *ctx)                      \
{                                                                          \
	return leave(ctx, ctx->ret);                                       \
}

/* kill(pid, sig), tkill(tid, sig), rt_sigqueueinfo(pid, sig, info) */
SEC("tracepoint/syscalls/sys_enter_kill")
int kill_enter(struct trace_event_raw_sys_enter *ctx)
{
	return enter(KILL_SYS_KILL, (int)ctx->args[0], 0, (int)ctx->args[1]);
}
KILL_EXIT(kill)

SEC("tracepoint/syscalls/sys_enter_tkill")
int tkill_enter(struct trace_event_raw_sys_enter *ctx)
{
	return enter(KILL_SYS_TKILL, (int)ctx->args[0], 0, (int)ctx->args[1]);
}
KILL_EXIT(tkill)

/* tgkill(tgid, tid, sig), rt_tgsigqueueinfo(tgid, tid, sig, info) */
SEC("tracepoint/syscalls/sys_enter_tgkill")
int tgkill_enter(struct trace_event_raw_sys_enter *ctx)
{
	return enter(KILL_SYS_TGKILL, (int)ctx->args[1], (int)ctx->args[0],
		     (int)ctx->args[2]);
}
KILL_EXIT(tgkill)

SEC("tracepoint/syscalls/sys_enter_rt_sigqueueinfo")
int rt_sigqueueinfo_enter(struct trace_event_raw_sys_enter *ctx)
{
	return enter(KILL_SYS_RT_SIGQUEUEINFO, (int)ctx->args[0], 0, (int)ctx->args[1]);
}
KILL_EXIT(rt_sigqueueinfo)

SEC("tracepoint/syscalls/sys_enter_rt_tgsigqueueinfo")
int rt_tgsigqueueinfo_enter(struct trace_event_raw_sys_enter *ctx)
{
	return enter(KILL_SYS_RT_TGSIGQUEUEINFO, (int)ctx->args[1], (int)ctx->args[0],
		     (int)ctx->args[2]);
}
KILL_EXIT(rt_tgsigqueueinfo)

char LICENSE[] SEC("license") = "GPL";
