// SPDX-License-Identifier: GPL-2.0
/* bindsnoop: bind() on IPv4 and IPv6 sockets, on the tracepoints
 * syscalls:sys_enter_bind and sys_exit_bind (bcc: kprobes on inet_bind
 * and inet6_bind). The entry keeps the descriptor and the address the
 * caller asked for (read from its memory); the exit reads the socket
 * behind the descriptor: its options (bcc's OPTS), its bound device and
 * protocol, and for a bind that succeeded the address and port it got
 * (a port 0 asked for is the one the kernel picked). A failed bind
 * reports the address and port asked for. A descriptor that is no IPv4
 * or IPv6 socket is not reported (bcc sees inet_bind only). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "bindsnoop.h"
#include "tk_emit.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_sock.bpf.h"
#include "tk_sockfd.bpf.h"

const volatile bool with_errors = false;   /* -E */

struct pending {
	int fd;
	int len;
	unsigned char addr[28];   /* struct sockaddr_in or sockaddr_in6 */
};

#define TK_PENDING_VALUE struct pending
#include "tk_pending.bpf.h"

/* Before 6.6 inet_sock's options were bitfields; since, bits of
 * inet_flags (include/net/inet_sock.h: INET_FLAGS_FREEBIND 11,
 * INET_FLAGS_TRANSPARENT 15, INET_FLAGS_BIND_ADDRESS_NO_PORT 18; an
 * anonymous enum, so CO-RE cannot relocate them: numbers unchanged since). */
struct inet_sock___bits {
	__u8 freebind: 1;
	__u8 transparent: 1;
	__u8 bind_address_no_port: 1;
} __attribute__((preserve_access_index));

static __always_inline u16 sock_opts(struct sock *sk)
{
	u16 o = 0;

	if (bpf_core_field_exists(struct inet_sock, inet_flags)) {
		unsigned long f = BPF_CORE_READ((struct inet_sock *)sk, inet_flags);

		o |= (f >> 11 & 1) ? BINDSNOOP_FREEBIND : 0;
		o |= (f >> 15 & 1) ? BINDSNOOP_TRANSPARENT : 0;
		o |= (f >> 18 & 1) ? BINDSNOOP_NO_PORT : 0;
	} else {
		struct inet_sock___bits *b = (void *)sk;

		o |= BPF_CORE_READ_BITFIELD_PROBED(b, freebind) ? BINDSNOOP_FREEBIND : 0;
		o |= BPF_CORE_READ_BITFIELD_PROBED(b, transparent) ? BINDSNOOP_TRANSPARENT : 0;
		o |= BPF_CORE_READ_BITFIELD_PROBED(b, bind_address_no_port) ? BINDSNOOP_NO_PORT : 0;
	}
	o |= BPF_CORE_READ_BITFIELD_PROBED(sk, __sk_common.skc_reuse) ? BINDSNOOP_REUSEADDR : 0;
	o |= BPF_CORE_READ_BITFIELD_PROBED(sk, __sk_common.skc_reuseport) ? BINDSNOOP_REUSEPORT : 0;
	return o;
}

SEC("tracepoint/syscalls/sys_enter_bind")
int bind_enter(struct trace_event_raw_sys_enter *ctx)
{
	struct pending p;

	if (!tk_task_wanted())
		return 0;
	__builtin_memset(&p, 0, sizeof(p));
	p.fd = (int)ctx->args[0];
	p.len = (int)ctx->args[2];
	/* A fault leaves zeros: family 0, reported as the socket's. */
	if (p.len > 0)
		bpf_probe_read_user(p.addr, p.len < (int)sizeof(p.addr) ? 16 : sizeof(p.addr),
				    (void *)ctx->args[1]);
	tk_pending_put((u32)bpf_get_current_pid_tgid(), &p);
	return 0;
}

/* The address and port asked for, as a struct tk_sock_id's source: of
 * the sockaddr's own family (an IPv6 socket may be passed an AF_INET
 * one, and fail), else the socket's (AF_UNSPEC). */
static __always_inline void asked(struct tk_sock_id *id, const struct pending *p,
				  u16 family)
{
	u16 fam = *(const u16 *)p->addr;

	if (fam == TK_AF_INET || fam == TK_AF_INET6)
		family = fam;
	id->ip = family == TK_AF_INET ? 4 : 6;
	id->sport = (u16)p->addr[2] << 8 | p->addr[3];
	if (id->ip == 4)
		__builtin_memcpy(id->saddr, p->addr + 4, 4);
	else
		__builtin_memcpy(id->saddr, p->addr + 8, 16);
}

SEC("tracepoint/syscalls/sys_exit_bind")
int bind_exit(struct trace_event_raw_sys_exit *ctx)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct pending *p = tk_pending_get(tid);
	struct bindsnoop_event e;
	struct socket *so;
	struct sock *sk;
	u16 family;

	if (!p)
		return 0;
	if (ctx->ret && !with_errors)
		goto done;
	so = tk_fd_socket(p->fd);
	sk = so ? BPF_CORE_READ(so, sk) : 0;
	if (!sk)
		goto done;
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	if (family != TK_AF_INET && family != TK_AF_INET6)
		goto done;
	__builtin_memset(&e, 0, sizeof(e));
	e.ret = ctx->ret;
	if (e.ret) {
		asked(&e.id, p, family);
	} else {
		tk_sock_read(sk, &e.id);
	}
	__builtin_memset(e.id.daddr, 0, sizeof(e.id.daddr));
	e.id.dport = 0;
	if (!tk_sock_wanted(&e.id))
		goto done;
	e.opts = sock_opts(sk);
	e.bound_dev_if = BPF_CORE_READ(sk, __sk_common.skc_bound_dev_if);
	e.protocol = BPF_CORE_READ_BITFIELD_PROBED(sk, sk_protocol);
	e.netns = tk_sock_netns(sk);
	e.ts = bpf_ktime_get_ns();
	tk_sock_owner_now(&e.who);
	tk_emit(ctx, &e, sizeof(e));
done:
	tk_pending_clear(tid, p);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
