// SPDX-License-Identifier: GPL-2.0
/* tcptracer: TCP connections' connect (C), accept (A) and close (X), on
 * tracepoints where bcc uses kprobes (tcp_v4/v6_connect, tcp_set_state,
 * inet_csk_accept, tcp_close):
 *
 * C  a connect that completed: the socket's change SYN_SENT ->
 *    ESTABLISHED (in softirq, on the SYN-ACK), charged to the task that
 *    made its change to SYN_SENT (in its connect() call), remembered per
 *    socket. A connect refused or timed out has no C, as in bcc.
 * A  an accept4() or accept() that returned a TCP socket: at the call's
 *    exit, in the accepting task, the new descriptor resolved to its
 *    socket.
 * X  a close() of the last descriptor of a TCP socket that had a peer
 *    (both ports and addresses known) and was not in SYN_SENT, SYN_RECV
 *    or LISTEN: at the call's entry, in the closing task, as bcc's
 *    tcp_close kprobe. Sockets released otherwise (the process's exit,
 *    close_range, the last reference held elsewhere) are not seen.
 *
 * -4/-6, -N and the task filters apply to every event. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "tcptracer.h"
#include "tk_emit.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_sock.bpf.h"
#include "tk_sockfd.bpf.h"

const volatile unsigned int netns_only = 0;   /* -N */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TCPTRACER_MAX_SOCKS);
	__type(key, u64);               /* struct sock * */
	__type(value, struct tk_sock_owner);
} connecting SEC(".maps");

static __always_inline void send(void *ctx, struct sock *sk, u32 type,
				 const struct tk_sock_owner *who)
{
	struct tcptracer_event e;

	__builtin_memset(&e, 0, sizeof(e));
	tk_sock_read(sk, &e.id);
	if (!tk_sock_wanted(&e.id))
		return;
	e.netns = tk_sock_netns(sk);
	if (netns_only && e.netns != netns_only)
		return;
	e.ts = bpf_ktime_get_ns();
	e.type = type;
	e.who = *who;
	tk_emit(ctx, &e, sizeof(e));
}

static __always_inline void change(void *ctx, struct sock *sk, int oldstate,
				   int newstate)
{
	struct tk_sock_owner o, *c;
	u64 key = (u64)sk;

	if (newstate == TCP_SYN_SENT) {
		/* connect(): its own task, in its own call. */
		if (tk_sock_ip && tk_sock_family_ip(sk) != tk_sock_ip)
			return;
		if (!tk_task_wanted())
			return;
		__builtin_memset(&o, 0, sizeof(o));
		tk_sock_owner_now(&o);
		if (bpf_map_update_elem(&connecting, &key, &o, BPF_ANY))
			tk_count_loss(TK_LOSS_MAP_FULL);
		return;
	}
	if (oldstate != TCP_SYN_SENT)
		return;
	c = bpf_map_lookup_elem(&connecting, &key);
	if (!c)
		return;
	if (newstate == TCP_ESTABLISHED) {
		o = *c;
		send(ctx, sk, TCPTRACER_CONNECT, &o);
	}
	bpf_map_delete_elem(&connecting, &key);
}

TK_SOCK_STATE_PROGS(state, change)

static __always_inline int accepted(void *ctx, long ret)
{
	struct tk_sock_owner o;
	struct sock *sk;

	if (ret < 0 || !tk_task_wanted())
		return 0;
	sk = tk_fd_tcp_sock(ret);
	if (!sk)
		return 0;
	__builtin_memset(&o, 0, sizeof(o));
	tk_sock_owner_now(&o);
	send(ctx, sk, TCPTRACER_ACCEPT, &o);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_accept4")
int accept4_exit(struct trace_event_raw_sys_exit *ctx)
{
	return accepted(ctx, ctx->ret);
}

SEC("tracepoint/syscalls/sys_exit_accept")
int accept_exit(struct trace_event_raw_sys_exit *ctx)
{
	return accepted(ctx, ctx->ret);
}

SEC("tracepoint/syscalls/sys_enter_close")
int close_enter(struct trace_event_raw_sys_enter *ctx)
{
	struct tk_sock_owner o;
	struct sock *sk;
	int fd = (int)ctx->args[0];
	u8 state;

	if (!tk_task_wanted())
		return 0;
	sk = tk_fd_tcp_sock(fd);
	if (!sk || !tk_fd_last_ref(fd))
		return 0;
	state = BPF_CORE_READ(sk, __sk_common.skc_state);
	if (state == TCP_SYN_SENT || state == TCP_SYN_RECV ||
	    state == TCP_NEW_SYN_RECV || state == TCP_LISTEN)
		return 0;
	/* Never connected (bcc: no tuple, no event). */
	if (!BPF_CORE_READ(sk, __sk_common.skc_dport))
		return 0;
	__builtin_memset(&o, 0, sizeof(o));
	tk_sock_owner_now(&o);
	send(ctx, sk, TCPTRACER_CLOSE, &o);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
