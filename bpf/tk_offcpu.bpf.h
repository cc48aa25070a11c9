/* The bookkeeping offcputime and offwaketime share at sched_switch: a
 * thread's start entry (in the tool's own map, by thread id) lives from
 * its switch out to its switch back in.
 *
 * A thread that has an entry as it leaves the CPU was switched in
 * unseen: some kernels trace no switch away from certain tasks (this
 * repository's Firecracker host: the sandbox agent's), so that block
 * cannot be timed. It is counted, and its entry replaced, or, at the
 * final switch of an exiting thread, removed. Needs tk_task.bpf.h and
 * tk_loss.bpf.h. */
#ifndef TK_OFFCPU_BPF_H
#define TK_OFFCPU_BPF_H

/* prev's final switch (it exits): its entry, if any, removed (counted:
 * a switch in unseen). True when prev is dead, with nothing to start. */
static __always_inline bool tk_offcpu_dead(void *start, u32 tid, long prev_state)
{
	if (!(prev_state & TK_TASK_DEAD))
		return false;
	if (!bpf_map_delete_elem(start, &tid))
		tk_count_loss(TK_LOSS_UNSEEN);
	return true;
}

/* tid leaves the CPU: its start entry s kept; one already there (its
 * switch in unseen) counted and replaced; a full map counted. */
static __always_inline void tk_offcpu_start(void *start, u32 tid, const void *s)
{
	long err = bpf_map_update_elem(start, &tid, s, BPF_NOEXIST);

	if (err == -17 /* EEXIST */) {
		tk_count_loss(TK_LOSS_UNSEEN);
		err = bpf_map_update_elem(start, &tid, s, BPF_EXIST);
	}
	if (err)
		tk_count_loss(TK_LOSS_MAP_FULL);
}

#endif
