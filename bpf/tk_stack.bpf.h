/* Counting stacks in BPF: one stack trace map, one counts map keyed by
 * struct tk_stack_key, per-CPU error counters. libtrace/stacks.c sizes
 * the maps and sets tk_stack_mode before load, and reads them at exit.
 *
 *   struct tk_stack_key key = {};
 *   tk_stack_key_fill(ctx, &key, 0);
 *   tk_stack_add(ctx, &key, weight);
 */
#ifndef TK_STACK_BPF_H
#define TK_STACK_BPF_H

#include "tk_cgroup.bpf.h"
#include "tk_emit.bpf.h"
#include "tk_stack.h"

const volatile int tk_stack_mode = TK_STACK_USER | TK_STACK_KERNEL;

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(u32));
	__uint(value_size, TK_STACK_MAX_DEPTH * sizeof(u64));
	__uint(max_entries, 16384);
} tk_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct tk_stack_key);
	__type(value, u64);
	__uint(max_entries, 16384);
} tk_stack_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TK_STACK_ERR_MAX);
	__type(key, u32);
	__type(value, u64);
} tk_stack_errs SEC(".maps");

/* When each process's pid event was last sent (TK_STACK_RENOTE_NS), and
 * the address space it had then: exec gives a process a new mm (the new
 * one is allocated while the old lives, so the two never share an
 * address), which is how a new image is told from new code in the old. */
struct tk_stack_noted_val {
	u64 when;
	u64 mm;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, u32);
	__type(value, struct tk_stack_noted_val);
	__uint(max_entries, 4096);
} tk_stack_noted SEC(".maps");

static __always_inline void tk_stack_count_err(long id)
{
	u32 key = id == -17 /* EEXIST */ ? TK_STACK_ERR_COLLISION :
		  id == -12 /* ENOMEM */ ? TK_STACK_ERR_FULL :
		  TK_STACK_ERR_OTHER;
	u64 *n = bpf_map_lookup_elem(&tk_stack_errs, &key);

	if (n)
		(*n)++;
}

static __always_inline int tk_stack_id(void *ctx, u64 flags)
{
	long id = bpf_get_stackid(ctx, &tk_stacks, flags);

	/* -EFAULT: no stack of that kind here (a kernel thread's user
	 * stack), not a loss. */
	if (id < 0 && id != -14 /* EFAULT */)
		tk_stack_count_err(id);
	return id;
}

/* The current task's stacks, as tk_stack_mode asks, into key (tgid,
 * comm and, with --print-cgroup, its cgroup id too). flags: 0, or
 * BPF_F_FAST_STACK_CMP and the like. */
static __always_inline void tk_stack_key_fill(void *ctx,
					      struct tk_stack_key *key,
					      u64 flags)
{
	/* The tool's namespace's: userspace reads /proc/TGID/maps. */
	key->tgid = tk_pid_tgid() >> 32;
	bpf_get_current_comm(key->comm, sizeof(key->comm));
	key->cgroup_id = tk_cgroup_id();
	key->user_stack_id = tk_stack_mode & TK_STACK_USER ?
		tk_stack_id(ctx, flags | BPF_F_USER_STACK) : TK_STACK_NOT_TAKEN;
	key->kern_stack_id = tk_stack_mode & TK_STACK_KERNEL ?
		tk_stack_id(ctx, flags) : TK_STACK_NOT_TAKEN;
}

/* Tell userspace about tgid, whose task is task, unless told within
 * TK_STACK_RENOTE_NS while it ran the same image. Two CPUs may both
 * send: the reader copes with a duplicate. */
static __always_inline void tk_stack_note(void *ctx, u32 tgid,
					  struct task_struct *task)
{
	struct tk_stack_pid_event ev = { .tgid = tgid };
	struct tk_stack_noted_val now = {
		.when = bpf_ktime_get_ns(),
		.mm = (u64)BPF_CORE_READ(task, mm),
	}, *last;

	last = bpf_map_lookup_elem(&tk_stack_noted, &tgid);
	if (last && last->mm != now.mm)
		ev.flags = TK_STACK_PID_EXEC;
	else if (last && now.when - last->when < TK_STACK_RENOTE_NS)
		return;
	bpf_map_update_elem(&tk_stack_noted, &tgid, &now, BPF_ANY);
	tk_emit(ctx, &ev, sizeof(ev));
}

/* Add weight to key's count; task is the key's (the current task, or
 * sched_switch's next in offcputime). The first count of a key tells
 * userspace about its process (tk_stack_pid_event), so that its mappings
 * are read while it still runs. A full counts map is a counted loss. */
static __always_inline void tk_stack_add(void *ctx,
					 const struct tk_stack_key *key,
					 u64 weight, struct task_struct *task)
{
	u64 *n = bpf_map_lookup_elem(&tk_stack_counts, key);
	long err;

	if (n) {
		__sync_fetch_and_add(n, weight);
		return;
	}
	err = bpf_map_update_elem(&tk_stack_counts, key, &weight, BPF_NOEXIST);
	if (err == -17 /* EEXIST: another CPU inserted it */) {
		n = bpf_map_lookup_elem(&tk_stack_counts, key);
		if (n)
			__sync_fetch_and_add(n, weight);
		return;
	}
	if (err) {
		tk_count_loss(TK_LOSS_MAP_FULL);
		return;
	}
	if (key->tgid && key->user_stack_id >= 0)
		tk_stack_note(ctx, key->tgid, task);
}

#endif
