// SPDX-License-Identifier: GPL-2.0
/* solisten: listen() on IPv4 and IPv6 sockets, on the tracepoints
 * syscalls:sys_enter_listen and sys_exit_listen (bcc: kprobe on
 * inet_listen). The entry keeps the descriptor and backlog by thread;
 * the exit reads the socket behind the descriptor, as the call left it:
 * a socket that was not bound has its port now (the kernel picked one),
 * and the result is the call's. Every call is reported, a second
 * listen() on a listening socket (which only changes its backlog) too,
 * and a failed one with its error; a descriptor that is no IPv4 or IPv6
 * socket is not (bcc sees inet_listen only). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "solisten.h"
#include "tk_emit.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_sock.bpf.h"
#include "tk_sockfd.bpf.h"

const volatile unsigned int netns_only = 0;   /* -n */

struct pending {
	int fd;
	int backlog;
};

#define TK_PENDING_VALUE struct pending
#include "tk_pending.bpf.h"

SEC("tracepoint/syscalls/sys_enter_listen")
int listen_enter(struct trace_event_raw_sys_enter *ctx)
{
	struct pending p = { .fd = (int)ctx->args[0], .backlog = (int)ctx->args[1] };

	if (tk_task_wanted())
		tk_pending_put((u32)bpf_get_current_pid_tgid(), &p);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_listen")
int listen_exit(struct trace_event_raw_sys_exit *ctx)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct pending *p = tk_pending_get(tid);
	struct solisten_event e;
	struct socket *so;
	struct sock *sk;
	u16 family;

	if (!p)
		return 0;
	__builtin_memset(&e, 0, sizeof(e));
	e.backlog = p->backlog;
	so = tk_fd_socket(p->fd);
	tk_pending_clear(tid, p);
	if (!so)
		return 0;
	sk = BPF_CORE_READ(so, sk);
	if (!sk)
		return 0;
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	if (family != TK_AF_INET && family != TK_AF_INET6)
		return 0;
	tk_sock_read(sk, &e.id);
	if (!tk_sock_wanted(&e.id))
		return 0;
	e.netns = tk_sock_netns(sk);
	if (netns_only && e.netns != netns_only)
		return 0;
	e.type = BPF_CORE_READ(so, type);
	e.ret = ctx->ret;
	e.ts = bpf_ktime_get_ns();
	tk_sock_owner_now(&e.who);
	tk_emit(ctx, &e, sizeof(e));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
