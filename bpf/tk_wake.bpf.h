/* The current task as one side of a wakeup (tk_wake.h), with its stacks
 * in tk_stacks as tk_stack_mode asks (-U, -K). Needs tk_stack.bpf.h. */
#ifndef TK_WAKE_BPF_H
#define TK_WAKE_BPF_H

#include "tk_stack.bpf.h"
#include "tk_wake.h"

static __always_inline void tk_wake_side_fill(void *ctx, struct tk_wake_side *s)
{
	u64 id = tk_pid_tgid();

	s->tgid = id >> 32;
	s->pid = (u32)id;
	bpf_get_current_comm(s->comm, sizeof(s->comm));
	s->user_stack_id = tk_stack_mode & TK_STACK_USER ?
		tk_stack_id(ctx, BPF_F_USER_STACK) : TK_STACK_NOT_TAKEN;
	s->kern_stack_id = tk_stack_mode & TK_STACK_KERNEL ?
		tk_stack_id(ctx, 0) : TK_STACK_NOT_TAKEN;
}

/* Tell userspace about the current task's process when its user stack
 * was taken (its mappings are read while it runs). */
static __always_inline void tk_wake_side_note(void *ctx, const struct tk_wake_side *s)
{
	if (s->tgid && s->user_stack_id >= 0)
		tk_stack_note(ctx, s->tgid, (struct task_struct *)bpf_get_current_task());
}

/* Add us to key's count in counts (a hash of u64). A full map is a
 * counted loss. True when key is new (its first count). */
static __always_inline bool tk_wake_count(void *counts, const void *key, u64 us)
{
	u64 *n = bpf_map_lookup_elem(counts, key);
	long err;

	if (n) {
		__sync_fetch_and_add(n, us);
		return false;
	}
	err = bpf_map_update_elem(counts, key, &us, BPF_NOEXIST);
	if (err == -17 /* EEXIST: another CPU inserted it */) {
		n = bpf_map_lookup_elem(counts, key);
		if (n)
			__sync_fetch_and_add(n, us);
		return false;
	}
	if (err)
		tk_count_loss(TK_LOSS_MAP_FULL);
	return !err;
}

#define PF_KTHREAD 0x00200000   /* a kernel thread */

/* -u / -k (user_only, kernel_only) on task t. */
static __always_inline bool tk_wake_kind_wanted(struct task_struct *t, bool user_only,
						bool kernel_only)
{
	bool kthread;

	if (!user_only && !kernel_only)
		return true;
	kthread = BPF_CORE_READ(t, flags) & PF_KTHREAD;
	return user_only ? !kthread : kthread;
}

#endif
