/* PIDs as the tool's PID namespace names them. A tool started in a PID
 * namespace (a container, unshare --pid) shows and filters its own
 * namespace's PIDs; a task outside that namespace has none there and is
 * shown as 0. In the initial namespace (tk_filter.pidns_ino 0) these are
 * the kernel's global ids, and the verifier drops the rest. Keys that
 * only pair events (the pending maps, by thread) stay global. */
#ifndef TK_PIDNS_BPF_H
#define TK_PIDNS_BPF_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

/* Included by tk_filter.bpf.h, after tk_filter (its rodata) is defined. */

/* How deep a PID namespace can be (MAX_PID_NS_LEVEL). */
#define TK_PIDNS_MAX_LEVEL 32

/* The number of struct pid p in the tool's namespace, or 0. Its level in
 * p->numbers is the tool's namespace's depth, which the tool cannot read
 * from inside (NSpid starts at its /proc's namespace): found by the
 * namespace's inode, from the top; a task deeper than the tool has a
 * number at each level down to its own. */
static __always_inline u32 tk_pid_nr(struct pid *p)
{
	unsigned int level = BPF_CORE_READ(p, level), i;
	struct upid up;

	for (i = 0; i < TK_PIDNS_MAX_LEVEL && i <= level; i++) {
		if (bpf_core_read(&up, sizeof(up), &p->numbers[i]))
			return 0;
		if (BPF_CORE_READ(up.ns, ns.inum) == tk_filter.pidns_ino)
			return up.nr;
	}
	return 0;
}

/* bpf_get_current_pid_tgid, in the tool's namespace (the kernel's own
 * helper for it, 5.7 and later). */
static __always_inline u64 tk_pid_tgid(void)
{
	struct bpf_pidns_info ns = {};

	if (!tk_filter.pidns_ino)
		return bpf_get_current_pid_tgid();
	if (bpf_get_ns_current_pid_tgid(tk_filter.pidns_dev, tk_filter.pidns_ino,
					&ns, sizeof(ns)))
		return 0;
	return (u64)ns.tgid << 32 | ns.pid;
}

/* Another task's process and thread ids (a parent, sched_switch's next). */
static __always_inline u32 tk_task_tgid(struct task_struct *t)
{
	if (!tk_filter.pidns_ino)
		return BPF_CORE_READ(t, tgid);
	return tk_pid_nr(BPF_CORE_READ(t, group_leader, thread_pid));
}

static __always_inline u32 tk_task_tid(struct task_struct *t)
{
	if (!tk_filter.pidns_ino)
		return BPF_CORE_READ(t, pid);
	return tk_pid_nr(BPF_CORE_READ(t, thread_pid));
}

#endif
