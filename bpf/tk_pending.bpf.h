/* A thread's state from a syscall's entry to its exit (opensnoop's path
 * pointer, execsnoop's argv): in task storage where the kernel lets
 * tracing programs use it (5.11+), else in a hash keyed by thread id.
 * libtrace (tk_pending_prepare, run by tk_load) probes the kernel, sets
 * tk_pending_in_task and creates only the map used; the other branch is
 * dead code to the verifier.
 *
 * Why task storage: the hash costs an insert and a delete on every
 * syscall (about 7% of a million-open storm's time under opensnoop),
 * holds at most TK_PENDING_HASH_ENTRIES threads, and keeps the entry of
 * a thread that died inside the syscall. Task storage is a lookup in
 * the task's own cache, has no capacity, and dies with the task.
 *
 * Before including, define the value's type:
 *
 *   #define TK_PENDING_VALUE struct pending
 *   #include "tk_pending.bpf.h"
 *
 * tid is the thread's id; task storage ignores it (it follows the
 * current task, even through a non-leader thread's exec, which changes
 * the thread's id). */
#ifndef TK_PENDING_BPF_H
#define TK_PENDING_BPF_H

#include "tk_loss.bpf.h"

#ifndef TK_PENDING_VALUE
#error "define TK_PENDING_VALUE before including tk_pending.bpf.h"
#endif

#define TK_PENDING_HASH_ENTRIES 10240

const volatile bool tk_pending_in_task = false;
/* Tests: put every value in the hash, as when task storage is busy. */
const volatile bool tk_pending_spill_all = false;

/* Task storage cannot make a thread's slot while another task-storage
 * operation is under way on this CPU (another BPF user's program,
 * preempted inside one: seen on this repository's host). The value then
 * goes to the hash, which task mode keeps small for these; set once any
 * did, so that exits look there only then. */
unsigned int tk_pending_spilled = 0;

/* In task storage the value outlives the syscall: set says whether it
 * holds one. The hash's entries all do. */
struct tk_pending_slot {
	TK_PENDING_VALUE v;  /* first: tk_pending_clear's cast */
	bool set;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct tk_pending_slot);
} tk_pending_task SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TK_PENDING_HASH_ENTRIES);
	__type(key, u32);
	__type(value, struct tk_pending_slot);
} tk_pending_tid SEC(".maps");

/* Remember v for this thread; a failure is a counted loss. */
static __always_inline void tk_pending_put(u32 tid, const TK_PENDING_VALUE *v)
{
	struct tk_pending_slot *s;

	if (tk_pending_in_task && !tk_pending_spill_all) {
		s = bpf_task_storage_get(&tk_pending_task, bpf_get_current_task_btf(),
					 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (s) {
			s->v = *v;
			s->set = true;
			return;
		}
		/* no memory, or storage busy on this CPU: spill */
	}
	{
		struct tk_pending_slot n = { .v = *v, .set = true };

		if (bpf_map_update_elem(&tk_pending_tid, &tid, &n, BPF_ANY))
			tk_count_loss(TK_LOSS_MAP_FULL);
		else if (tk_pending_in_task && !tk_pending_spilled)
			tk_pending_spilled = 1;
	}
}

/* This thread's value, or NULL. Valid until tk_pending_clear. */
static __always_inline TK_PENDING_VALUE *tk_pending_get(u32 tid)
{
	struct tk_pending_slot *s;

	if (tk_pending_in_task) {
		s = bpf_task_storage_get(&tk_pending_task, bpf_get_current_task_btf(),
					 0, 0);
		if (s && s->set)
			return &s->v;
		if (!tk_pending_spilled)
			return 0;
	}
	s = bpf_map_lookup_elem(&tk_pending_tid, &tid);
	return s && s->set ? &s->v : 0;
}

/* Forget this thread's value; copy what is needed from it first. */
static __always_inline void tk_pending_clear(u32 tid, TK_PENDING_VALUE *v)
{
	/* v comes first in either map's slot */
	((struct tk_pending_slot *)v)->set = false;
	if (!tk_pending_in_task || tk_pending_spilled)
		bpf_map_delete_elem(&tk_pending_tid, &tid);
}

/* This thread's value into *out, and forgotten: false when it had none
 * (a return whose entry was not kept). */
static __always_inline bool tk_pending_take(u32 tid, TK_PENDING_VALUE *out)
{
	TK_PENDING_VALUE *v = tk_pending_get(tid);

	if (!v)
		return false;
	*out = *v;
	tk_pending_clear(tid, v);
	return true;
}

#endif
