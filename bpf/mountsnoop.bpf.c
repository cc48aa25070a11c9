// SPDX-License-Identifier: GPL-2.0
/* mountsnoop: mount, umount2 and the new mount API (fsopen, fsconfig,
 * fsmount, move_mount, open_tree, fspick, mount_setattr), on syscall
 * tracepoints only: this runs where kprobes and fentry do not.
 *
 * sys_enter_* keeps the call's six arguments by thread; sys_exit_*
 * reads its strings (and mount_setattr's struct mount_attr) from the
 * caller, after the kernel has copied them, so their pages are present
 * (BPF cannot fault a page in), and sends one event with the result.
 * Userspace knows each call's arguments and how to print them. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "mountsnoop.h"
#include "tk_cgroup.bpf.h"
#include "tk_emit.bpf.h"
#include "tk_filter.bpf.h"

struct pending {
	u64 args[5];   /* no call here has a sixth */
	u32 op;
};

#define TK_PENDING_VALUE struct pending
#include "tk_pending.bpf.h"
#include "tk_user_str.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct mount_event);
} scratch SEC(".maps");

/* fsconfig's commands whose value is a string (FSCONFIG_SET_STRING,
 * FSCONFIG_SET_PATH, FSCONFIG_SET_PATH_EMPTY); the others pass a blob,
 * an fd in aux, or nothing. */
static __always_inline bool fsconfig_value_is_str(u64 cmd)
{
	return cmd == 1 || cmd == 3 || cmd == 4;
}

/* The argument that string slot i of op holds, or -1: slots follow the
 * arguments' order, as tools/mountsnoop.c numbers them. */
static __always_inline int str_arg(u32 op, int i, const u64 *args)
{
	switch (op) {
	case MOUNT_OP_MOUNT:         /* source, target, type, flags, data */
		return i < 3 ? i : i == 3 ? 4 : -1;
	case MOUNT_OP_UMOUNT:        /* target, flags */
	case MOUNT_OP_FSOPEN:        /* fs_name, flags */
		return i == 0 ? 0 : -1;
	case MOUNT_OP_FSCONFIG:      /* fd, cmd, key, value, aux */
		if (i == 0)
			return 2;
		return i == 1 && fsconfig_value_is_str(args[1]) ? 3 : -1;
	case MOUNT_OP_MOVE_MOUNT:    /* from_dfd, from_path, to_dfd, to_path */
		return i == 0 ? 1 : i == 1 ? 3 : -1;
	case MOUNT_OP_OPEN_TREE:     /* dfd, path, flags */
	case MOUNT_OP_FSPICK:
	case MOUNT_OP_MOUNT_SETATTR: /* dfd, path, flags, uattr, usize */
		return i == 0 ? 1 : -1;
	}
	return -1;
}

static __always_inline u32 str_count(u32 op)
{
	switch (op) {
	case MOUNT_OP_MOUNT: return 4;
	case MOUNT_OP_FSCONFIG:
	case MOUNT_OP_MOVE_MOUNT: return 2;
	case MOUNT_OP_FSMOUNT: return 0;
	}
	return 1;
}

/* Keep the call's first nargs arguments. nargs is a constant in each
 * program: a read past the tracepoint's own arguments (sys_enter_umount
 * has two) would make the kernel refuse to attach the program (EACCES),
 * and each is read at a constant offset, as the verifier requires. */
static __always_inline int enter(struct trace_event_raw_sys_enter *ctx,
				 u32 op, int nargs)
{
	struct pending p = { .op = op };

	if (!tk_task_wanted())
		return 0;
	p.args[0] = ctx->args[0];
	p.args[1] = ctx->args[1];
	if (nargs > 2)
		p.args[2] = ctx->args[2];
	if (nargs > 3)
		p.args[3] = ctx->args[3];
	if (nargs > 4)
		p.args[4] = ctx->args[4];
	tk_pending_put((u32)bpf_get_current_pid_tgid(), &p);
	return 0;
}

/* Read string slot i from the caller's pointer; NULL stays empty (the
 * pointer, 0, is in args for userspace). */
static __always_inline void read_str(struct mount_event *e, int i)
{
	int a = str_arg(e->op, i, e->args);
	const char *s;
	long n;
	char c;

	if (a < 0 || a > 4)
		return;
	s = (const char *)e->args[a];
	if (!s)
		return;
	n = tk_read_user_str(e->str[i], MOUNT_STR_MAX, s);
	if (n <= 0) {
		e->str_flags |= MOUNT_STR_FAULT(i);
		return;
	}
	e->str_len[i] = n - 1;
	if (n == MOUNT_STR_MAX &&
	    !bpf_probe_read_user(&c, 1, s + MOUNT_STR_MAX - 1) && c)
		e->str_flags |= MOUNT_STR_CUT(i);
}

static __always_inline int leave(void *ctx, long ret)
{
	u64 pid_tgid = bpf_get_current_pid_tgid();
	u32 tid = (u32)pid_tgid, zero = 0;
	struct pending *p = tk_pending_get(tid);
	struct task_struct *task, *parent;
	struct mount_event *e;
	u64 size;
	int i;

	if (!p)
		return 0;
	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e) {
		tk_pending_clear(tid, p);
		return 0;
	}
	__builtin_memcpy(e->args, p->args, sizeof(e->args));
	e->op = p->op;
	tk_pending_clear(tid, p);

	pid_tgid = tk_pid_tgid();
	task = (struct task_struct *)bpf_get_current_task();
	parent = BPF_CORE_READ(task, real_parent);
	e->pid = pid_tgid >> 32;
	e->tid = (u32)pid_tgid;
	e->uid = (u32)bpf_get_current_uid_gid();
	e->ppid = tk_task_tgid(parent);
	e->cgroup_id = tk_cgroup_id();
	e->mnt_ns = BPF_CORE_READ(task, nsproxy, mnt_ns, ns.inum);
	e->ret = ret;
	e->str_flags = 0;
	e->attr_read = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_probe_read_kernel_str(e->pcomm, sizeof(e->pcomm), parent->comm);
	e->nstr = str_count(e->op);
	for (i = 0; i < MOUNT_STRS; i++) {
		e->str_len[i] = 0;
		e->str[i][0] = 0;
		read_str(e, i);
	}
	if (e->op == MOUNT_OP_MOUNT_SETATTR && e->args[3])
		e->attr_read = !bpf_probe_read_user(e->attr, sizeof(e->attr),
						    (const void *)e->args[3]);
	/* Only the slots the call has; bounded after the product, which the
	 * verifier's bit tracking takes past the struct's end. */
	size = offsetof(struct mount_event, str) + (u64)e->nstr * MOUNT_STR_MAX;
	tk_bound(size, sizeof(struct mount_event));
	tk_emit(ctx, e, size);
	return 0;
}

#define MOUNT_CALL(name, op, nargs)                                        \
SEC("tracepoint/syscalls/sys_enter_" #name)                                \
int name##_enter(struct trace_event_raw_sys_enter *ctx)                    \
{                                                                          \
	return enter(ctx, op, nargs);                                      \
}                                                                          \
SEC("tracepoint/syscalls/sys_exit_" #name)                                 \
int name##_exit(struct trace_event_raw_sys_exit *ctx)                      \
{                                                                          \
	return leave(ctx, ctx->ret);                                       \
}

MOUNT_CALL(mount, MOUNT_OP_MOUNT, 5)
/* umount2(2): its tracepoint is named after the kernel's sys_umount. */
MOUNT_CALL(umount, MOUNT_OP_UMOUNT, 2)
MOUNT_CALL(fsopen, MOUNT_OP_FSOPEN, 2)
MOUNT_CALL(fsconfig, MOUNT_OP_FSCONFIG, 5)
MOUNT_CALL(fsmount, MOUNT_OP_FSMOUNT, 3)
MOUNT_CALL(move_mount, MOUNT_OP_MOVE_MOUNT, 5)
MOUNT_CALL(open_tree, MOUNT_OP_OPEN_TREE, 3)
MOUNT_CALL(fspick, MOUNT_OP_FSPICK, 3)
MOUNT_CALL(mount_setattr, MOUNT_OP_MOUNT_SETATTR, 5)

char LICENSE[] SEC("license") = "GPL";
