/* TCP state changes at the tracepoint sock:inet_sock_set_state (4.16),
 * for the network tools: TK_SOCK_STATE_PROGS makes a tool's programs,
 * one per attach method (tp_btf, raw_tp, tp), each calling the tool's
 * fn(ctx, sk, oldstate, newstate) for TCP sockets only (the tracepoint
 * fires for SCTP too). The tracepoint runs where the kernel changes the
 * state: in the task's own system call (connect, listen, close,
 * shutdown) or in softirq on a packet's arrival, where the current task
 * is whoever was on the CPU. The -4/-6 (tk_sock_ip) and -L/-D port
 * filters of a tool are here too. */
#ifndef TK_SOCK_BPF_H
#define TK_SOCK_BPF_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_tracing.h>

#include "tk_sock.h"

#define TK_AF_INET 2
#define TK_AF_INET6 10
#define TK_IPPROTO_TCP 6

const volatile int tk_sock_ip = 0;         /* -4: 4, -6: 6, else 0 */
const volatile int tk_sock_n_lports = 0;   /* -L: 0 for every port */
const volatile unsigned short tk_sock_lports[TK_SOCK_MAX_PORTS] = {};
const volatile int tk_sock_n_dports = 0;   /* -D */
const volatile unsigned short tk_sock_dports[TK_SOCK_MAX_PORTS] = {};

static __always_inline int tk_sock_family_ip(struct sock *sk)
{
	return BPF_CORE_READ(sk, __sk_common.skc_family) == TK_AF_INET ? 4 : 6;
}

/* The socket's family, addresses and ports, as they are now. */
static __always_inline void tk_sock_read(struct sock *sk, struct tk_sock_id *id)
{
	id->ip = tk_sock_family_ip(sk);
	if (id->ip == 4) {
		BPF_CORE_READ_INTO((u32 *)id->saddr, sk, __sk_common.skc_rcv_saddr);
		BPF_CORE_READ_INTO((u32 *)id->daddr, sk, __sk_common.skc_daddr);
	} else {
		BPF_CORE_READ_INTO((struct in6_addr *)id->saddr, sk,
				   __sk_common.skc_v6_rcv_saddr);
		BPF_CORE_READ_INTO((struct in6_addr *)id->daddr, sk,
				   __sk_common.skc_v6_daddr);
	}
	/* inet_sport, as the tracepoint's own sport: skc_num is cleared
	 * when the port is released, before some changes to CLOSE. */
	id->sport = bpf_ntohs(BPF_CORE_READ((struct inet_sock *)sk, inet_sport));
	id->dport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
}

static __always_inline bool tk_sock_port_in(const volatile unsigned short *ports,
					    int n, unsigned short port)
{
	int i;

	for (i = 0; i < TK_SOCK_MAX_PORTS; i++) {
		if (i >= n)
			break;
		if (ports[i] == port)
			return true;
	}
	return false;
}

/* -4/-6 and -L/-D. */
static __always_inline bool tk_sock_wanted(const struct tk_sock_id *id)
{
	if (tk_sock_ip && id->ip != tk_sock_ip)
		return false;
	if (tk_sock_n_lports &&
	    !tk_sock_port_in(tk_sock_lports, tk_sock_n_lports, id->sport))
		return false;
	if (tk_sock_n_dports &&
	    !tk_sock_port_in(tk_sock_dports, tk_sock_n_dports, id->dport))
		return false;
	return true;
}

/* sk_protocol was a bitfield before 5.6. */
static __always_inline bool tk_sock_is_tcp(struct sock *sk)
{
	return BPF_CORE_READ_BITFIELD_PROBED(sk, sk_protocol) == TK_IPPROTO_TCP;
}

#define TK_SOCK_STATE_PROGS(name, fn)                                          \
SEC("tp_btf/inet_sock_set_state")                                              \
int BPF_PROG(name##_tp_btf, struct sock *sk, int oldstate, int newstate)       \
{                                                                              \
	if (tk_sock_is_tcp(sk))                                                \
		fn(ctx, sk, oldstate, newstate);                               \
	return 0;                                                              \
}                                                                              \
SEC("raw_tp/inet_sock_set_state")                                              \
int BPF_PROG(name##_raw_tp, struct sock *sk, int oldstate, int newstate)       \
{                                                                              \
	if (tk_sock_is_tcp(sk))                                                \
		fn(ctx, sk, oldstate, newstate);                               \
	return 0;                                                              \
}                                                                              \
SEC("tp/sock/inet_sock_set_state")                                             \
int name##_tp(struct trace_event_raw_inet_sock_set_state *args)                \
{                                                                              \
	if (args->protocol == TK_IPPROTO_TCP)                                  \
		fn(args, (struct sock *)args->skaddr, args->oldstate,          \
		   args->newstate);                                            \
	return 0;                                                              \
}

#endif
