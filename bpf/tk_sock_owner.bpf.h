/* The current task as a socket's owner (struct tk_sock_owner), for the
 * network tools that charge a socket to the task that made a change
 * in its own system call (a connect's SYN_SENT). */
#ifndef TK_SOCK_OWNER_BPF_H
#define TK_SOCK_OWNER_BPF_H

#include "tk_filter.bpf.h"
#include "tk_sock.h"

static __always_inline void tk_sock_owner_now(struct tk_sock_owner *o)
{
	u64 id = tk_pid_tgid();

	__builtin_memset(o, 0, sizeof(*o));
	o->pid = id >> 32;
	o->tid = (u32)id;
	o->uid = (u32)bpf_get_current_uid_gid();
	o->wanted = tk_task_wanted();
	bpf_get_current_comm(o->comm, sizeof(o->comm));
}

#endif
