/* One side of a wakeup (offwaketime, wakeuptime): a thread, its comm and
 * its stacks, as BPF takes them (tk_wake.bpf.h) and libtrace/wake.h
 * prints them. Plain C types only. */
#ifndef TK_WAKE_H
#define TK_WAKE_H

#include "tk_stack.h"

struct tk_wake_side {
	unsigned int tgid;       /* the tool's pid namespace's */
	unsigned int pid;        /* thread; 0 where the tool keys by comm */
	int user_stack_id;       /* tk_stacks index, or <0 as in struct
				  * tk_stack_key */
	int kern_stack_id;
	char comm[TK_TASK_COMM_LEN];
};

#endif
