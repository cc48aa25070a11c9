/* Reading struct task_struct across kernel versions (CO-RE). */
#ifndef TK_TASK_BPF_H
#define TK_TASK_BPF_H

#include <bpf/bpf_core_read.h>

/* The field was "state" before Linux 5.14. */
struct task_struct___o {
	long state;
} __attribute__((preserve_access_index));

#define TK_TASK_DEAD 0x80   /* state at the final switch of an exiting task */

/* A task's scheduling state (TASK_RUNNING, TASK_INTERRUPTIBLE, ...). */
static __always_inline long tk_task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___o *)t, state);
}

#endif
