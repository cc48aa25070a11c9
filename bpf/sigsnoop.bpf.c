// SPDX-License-Identifier: GPL-2.0
/* sigsnoop: every signal generated, on the tracepoint
 * signal:signal_generate (tp_btf, raw_tp or the classic one), which
 * fires where the kernel queues a signal for a task (or finds it
 * ignored, or already pending), in the context of the task that sent
 * it: kill() and friends, the kernel's own (SIGCHLD at an exit,
 * SIGSEGV, SIGPIPE, timers) too. -k keeps those sent inside a
 * kill()-family call, which syscall tracepoints mark by thread. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "sigsnoop.h"
#include "tk_cgroup.bpf.h"
#include "tk_emit.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_signal.bpf.h"

const volatile bool failed_only = false;         /* -x: not delivered */
const volatile bool kill_only = false;           /* -k */

#define SI_USER_CODE 0
#define SI_KERNEL_CODE 0x80

/* -k: the threads inside a kill()-family call now (tk_pending.bpf.h:
 * task storage where the kernel has it, so a thread that dies in the
 * call, a kill of itself, leaves nothing behind for its id's next
 * owner). */
#define TK_PENDING_VALUE u8
#include "tk_pending.bpf.h"

static __always_inline bool wanted(int sig, int result)
{
	if (!tk_signal_wanted(sig))
		return false;
	if (failed_only && result == 0)
		return false;
	if (kill_only) {
		if (!tk_pending_get((u32)bpf_get_current_pid_tgid()))
			return false;
	}
	return tk_task_wanted();
}

static __always_inline void send(void *ctx, struct sig_event *e)
{
	TK_EVENT_SET_CURRENT(e);
	tk_emit(ctx, e, sizeof(*e));
}

/* The typed arguments: (sig, info, task, group, result). info is a
 * pointer, or SEND_SIG_NOINFO (0: from user space, SI_USER) or
 * SEND_SIG_PRIV (1: the kernel's, SI_KERNEL), as the tracepoint's own
 * TP_STORE_SIGINFO reads it. */
static __always_inline int generated(void *ctx, int sig, struct kernel_siginfo *info,
				     struct task_struct *task, int group, int result)
{
	struct sig_event e = {};

	if (!wanted(sig, result))
		return 0;
	e.sig = sig;
	e.group = group;
	e.result = result;
	if ((unsigned long)info > 1)
		e.code = BPF_CORE_READ(info, si_code);
	else
		e.code = info ? SI_KERNEL_CODE : SI_USER_CODE;
	e.ttid = tk_task_tid(task);
	e.tgid = tk_task_tgid(task);
	BPF_CORE_READ_STR_INTO(&e.tcomm, task, comm);
	send(ctx, &e);
	return 0;
}

SEC("tp_btf/signal_generate")
int BPF_PROG(generate_tp_btf, int sig, struct kernel_siginfo *info,
	     struct task_struct *task, int group, int result)
{
	return generated(ctx, sig, info, task, group, result);
}

SEC("raw_tp/signal_generate")
int BPF_PROG(generate_raw_tp, int sig, struct kernel_siginfo *info,
	     struct task_struct *task, int group, int result)
{
	return generated(ctx, sig, info, task, group, result);
}

/* The classic tracepoint's record: the target's pid and comm, no task
 * (so no tgid). */
SEC("tracepoint/signal/signal_generate")
int generate_tp(struct trace_event_raw_signal_generate *ctx)
{
	struct sig_event e = {};

	if (!wanted(ctx->sig, ctx->result))
		return 0;
	e.sig = ctx->sig;
	e.code = ctx->code;
	e.group = ctx->group;
	e.result = ctx->result;
	e.ttid = ctx->pid;
	e.tgid = -1;
	__builtin_memcpy(e.tcomm, ctx->comm, sizeof(e.tcomm));
	send(ctx, &e);
	return 0;
}

/* -k: mark the thread from entry to exit of each kill()-family call
 * (off without -k). */
static __always_inline int mark_in_kill(void)
{
	u8 one = 1;

	tk_pending_put((u32)bpf_get_current_pid_tgid(), &one);
	return 0;
}

static __always_inline int unmark_in_kill(void)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	u8 *p = tk_pending_get(tid);

	if (p)
		tk_pending_clear(tid, p);
	return 0;
}

#define KILL_CALL(name)                                                    \
SEC("tracepoint/syscalls/sys_enter_" #name)                                \
int name##_enter(void *ctx)                                         \
{                                                                          \
	return mark_in_kill();                                               \
}                                                                          \
SEC("tracepoint/syscalls/sys_exit_" #name)                                 \
int name##_exit(void *ctx)                                          \
{                                                                          \
	return unmark_in_kill();                                                \
}

KILL_CALL(kill)
KILL_CALL(tkill)
KILL_CALL(tgkill)
KILL_CALL(rt_sigqueueinfo)
KILL_CALL(rt_tgsigqueueinfo)

char LICENSE[] SEC("license") = "GPL";
