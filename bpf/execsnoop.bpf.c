// SPDX-License-Identifier: GPL-2.0
/* execsnoop: trace exec, successful and failed.
 *
 * A successful exec's argv is read at sched_process_exec from the new
 * image's argument block (mm->arg_start..arg_end): the kernel has just
 * written it, so its pages are present even when the caller's copies of
 * the strings were never touched (reading the caller's argv at
 * sys_enter_execve misses those, since BPF cannot fault pages in). A
 * failed exec has no new image; its argv is read from the caller at
 * sys_exit_execve, where the kernel has usually just touched it. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "execsnoop.h"
#include "tk_emit.bpf.h"
#include "tk_cgroup.bpf.h"
#include "tk_filter.bpf.h"

const volatile bool failed_only = false;

struct pending {
	const char *const *argv;  /* the caller's, for a failed exec */
};

#define TK_PENDING_VALUE struct pending
#include "tk_pending.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct exec_event);
} scratch SEC(".maps");

static __always_inline int enter(const char *const *argv)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct pending p = { .argv = argv };

	if (!tk_task_wanted())
		return 0;
	tk_pending_put(tid, &p);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_execve")
int execve_enter(struct trace_event_raw_sys_enter *ctx)
{
	return enter((const char *const *)ctx->args[1]);
}

SEC("tracepoint/syscalls/sys_enter_execveat")
int execveat_enter(struct trace_event_raw_sys_enter *ctx)
{
	return enter((const char *const *)ctx->args[2]);
}

static __always_inline struct exec_event *new_event(int ret)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	u32 zero = 0;
	struct exec_event *e = bpf_map_lookup_elem(&scratch, &zero);

	if (!e)
		return 0;
	e->pid = tk_pid_tgid() >> 32;
	e->ppid = tk_task_tgid(BPF_CORE_READ(task, real_parent));
	/* Read now: by the time userspace sees the event the parent may
	 * have exec'd or exited itself. */
	BPF_CORE_READ_STR_INTO(&e->pcomm, task, real_parent, comm);
	e->cpu = bpf_get_smp_processor_id();
	e->uid = (u32)bpf_get_current_uid_gid();
	e->cgroup_id = tk_cgroup_id();
	e->ret = ret;
	e->flags = 0;
	e->argc = 0;
	e->args_size = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	return e;
}

static __always_inline int emit(void *ctx, struct exec_event *e)
{
	u64 size = e->args_size;

	size += offsetof(struct exec_event, args);
	tk_bound(size, sizeof(*e));
	return tk_emit(ctx, e, size);
}

/* A successful exec: the process now runs the new image. */
SEC("raw_tp/sched_process_exec")
int BPF_PROG(exec_done, struct task_struct *p, pid_t old_pid,
	     struct linux_binprm *bprm)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	u32 tid = old_pid;  /* a non-leader thread's exec changed its tid */
	struct pending *pend = tk_pending_get(tid);
	unsigned long start, end, len;
	struct exec_event *e;

	if (!pend)
		return 0;
	tk_pending_clear(tid, pend);
	if (failed_only)
		return 0;
	e = new_event(0);
	if (!e)
		return 0;
	e->argc = BPF_CORE_READ(bprm, argc);
	start = BPF_CORE_READ(task, mm, arg_start);
	end = BPF_CORE_READ(task, mm, arg_end);
	len = end - start;
	if (len > EXEC_ARGS_BYTES) {
		len = EXEC_ARGS_BYTES;
		e->flags |= EXEC_F_TRUNCATED;
	}
	tk_bound(len, EXEC_ARGS_BYTES);
	if (bpf_probe_read_user(e->args, len, (void *)start))
		e->flags |= EXEC_F_ARGV_FAULT;
	else
		e->args_size = len;
	emit(ctx, e);
	return 0;
}

static __always_inline int leave(void *ctx, long ret)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct pending *p = tk_pending_get(tid);
	const char *const *argv;
	struct exec_event *e;
	u32 off = 0;
	int i;

	if (!p)
		return 0;  /* success was handled at sched_process_exec */
	argv = p->argv;
	tk_pending_clear(tid, p);
	if (ret >= 0)
		return 0;
	e = new_event(ret);
	if (!e)
		return 0;
	/* Every branch here ends the loop: a branch that rejoins it would
	 * double the verifier's paths on each of the iterations. */
	for (i = 0; i < EXEC_FAILED_MAX_ARGS; i++) {
		const char *arg = 0;
		long n;

		if (bpf_probe_read_user(&arg, sizeof(arg), &argv[i])) {
			e->flags |= EXEC_F_ARGV_FAULT;
			break;
		}
		if (!arg)
			break;
		if (off > EXEC_ARGS_BYTES - EXEC_FAILED_ARG_BYTES) {
			e->flags |= EXEC_F_TRUNCATED;
			break;
		}
		n = bpf_probe_read_user_str(&e->args[off], EXEC_FAILED_ARG_BYTES, arg);
		if (n < 0) {
			e->flags |= EXEC_F_ARGV_FAULT;
			break;
		}
		e->argc++;
		off += n;
	}
	if (i == EXEC_FAILED_MAX_ARGS)
		e->flags |= EXEC_F_TRUNCATED;
	e->args_size = off;
	emit(ctx, e);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_execve")
int execve_exit(struct trace_event_raw_sys_exit *ctx)
{
	return leave(ctx, ctx->ret);
}

SEC("tracepoint/syscalls/sys_exit_execveat")
int execveat_exit(struct trace_event_raw_sys_exit *ctx)
{
	return leave(ctx, ctx->ret);
}

char LICENSE[] SEC("license") = "GPL";
