// SPDX-License-Identifier: GPL-2.0
/* tcpconnect: active TCP connects, IPv4 and IPv6.
 *
 * The kernel-function way (programs kf_*): the entry of tcp_v4_connect /
 * tcp_v6_connect keeps the socket under the thread's id (when the task
 * filter passes); its return reports the socket when the function
 * returned 0: the SYN went out, addresses and ports are set. That includes a non-blocking connect still in progress
 * (connect(2) says EINPROGRESS; tcp_v4_connect said 0) and one the peer
 * later refuses, as bcc reports them; a connect that fails before its SYN
 * (no route, no free port) is not reported.
 *
 * Entry and return are separate probes, each fentry/fexit or else
 * kprobe/kretprobe, so any mix of methods works: they meet only in the
 * sockets map. An AF_INET6 socket connecting to a v4-mapped address
 * enters tcp_v6_connect, then tcp_v4_connect on the same thread: the
 * inner entry replaces the outer one, the inner return reports it (as
 * IPv4, like bcc) and the outer return finds nothing.
 *
 * The tracepoint way (programs tp_*, the first choice: it needs neither
 * kprobes nor fentry) sees the change to SYN_SENT, which tcp_v4_connect
 * and tcp_v6_connect make in the connecting task, after the route and
 * source address are chosen (a connect that fails before, as for no
 * route, makes none) and just before the local port is picked. The
 * event is made there, with the task's ids, and kept by socket until the
 * socket's next change (to ESTABLISHED, or CLOSE when refused, timed out
 * or closed), which adds the local port and sends it. An AF_INET6
 * socket connecting to a v4-mapped address is reported as IPv4, except
 * with -6 (tk_sock_ip 6): as the kernel-function way, which then sees
 * tcp_v6_connect only, it is IPv6 with v4-mapped addresses.
 *
 * -d: DNS replies (UDP from port 53) are sent whole to userspace, which
 * keeps the names they resolved to each address. bcc reads them in
 * udp_recvmsg with a kprobe; here the tracepoint net:netif_receive_skb
 * sees every received packet, so -d runs without kprobes. (The
 * skb:skb_copy_datagram_iovec tracepoint would fire in the reader's
 * context, but udp_recvmsg copies a linear datagram, the usual DNS reply,
 * with copy_linear_skb, which does not fire it.) */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "tcpconnect.h"
#include "tk_cgroup.bpf.h"
#include "tk_emit.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_sock.bpf.h"

const volatile bool count_mode = false;
const volatile bool count_sport = false;  /* -s: the key holds the local port */
const volatile int n_ports = 0;   /* -P: 0 for every port */
const volatile unsigned short ports[TCPCONNECT_MAX_PORTS] = {};  /* host order */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TCPCONNECT_MAX_THREADS);
	__type(key, u32);               /* tid */
	__type(value, struct sock *);
} sockets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TCPCONNECT_MAX_TUPLES);
	__type(key, struct tcpconnect_key);
	__type(value, u64);
} counts SEC(".maps");

/* The tracepoint way: connects between SYN_SENT and the next change. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TCPCONNECT_MAX_THREADS);
	__type(key, u64);               /* struct sock * */
	__type(value, struct tcpconnect_event);
} pending SEC(".maps");

/* -d: a DNS event is too large for the stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct tcpconnect_dns);
} dns_scratch SEC(".maps");

static __always_inline int enter(struct sock *sk)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();

	if (!tk_task_wanted())
		return 0;
	if (bpf_map_update_elem(&sockets, &tid, &sk, BPF_ANY))
		tk_count_loss(TK_LOSS_MAP_FULL);
	return 0;
}

static __always_inline bool port_wanted(u16 dport)
{
	int i;

	if (!n_ports)
		return true;
	for (i = 0; i < TCPCONNECT_MAX_PORTS; i++) {
		if (i >= n_ports)
			break;
		if (ports[i] == dport)
			return true;
	}
	return false;
}

static __always_inline void read_addrs(struct sock *sk, int ip,
				       unsigned char *saddr,
				       unsigned char *daddr)
{
	if (ip == 4) {
		BPF_CORE_READ_INTO((u32 *)saddr, sk, __sk_common.skc_rcv_saddr);
		BPF_CORE_READ_INTO((u32 *)daddr, sk, __sk_common.skc_daddr);
	} else {
		BPF_CORE_READ_INTO((struct in6_addr *)saddr, sk,
				   __sk_common.skc_v6_rcv_saddr);
		BPF_CORE_READ_INTO((struct in6_addr *)daddr, sk,
				   __sk_common.skc_v6_daddr);
	}
}

static __always_inline void count_tuple(struct sock *sk, int ip, u16 dport)
{
	struct tcpconnect_key key;
	u64 zero = 0, *n;

	__builtin_memset(&key, 0, sizeof(key));
	read_addrs(sk, ip, key.saddr, key.daddr);
	key.ip = ip;
	key.dport = dport;
	if (count_sport)
		key.sport = BPF_CORE_READ(sk, __sk_common.skc_num);
	key.cgroup_id = tk_cgroup_id();
	n = tk_lookup_or_init(&counts, &key, &zero);
	if (n)
		__sync_fetch_and_add(n, 1);
}

static __always_inline void count_event(const struct tcpconnect_event *e)
{
	struct tcpconnect_key key;
	u64 zero = 0, *n;

	__builtin_memset(&key, 0, sizeof(key));
	__builtin_memcpy(key.saddr, e->saddr, sizeof(key.saddr));
	__builtin_memcpy(key.daddr, e->daddr, sizeof(key.daddr));
	key.ip = e->ip;
	key.dport = e->dport;
	if (count_sport)
		key.sport = e->sport;
	key.cgroup_id = e->cgroup_id;
	n = tk_lookup_or_init(&counts, &key, &zero);
	if (n)
		__sync_fetch_and_add(n, 1);
}

static __always_inline int leave(void *ctx, int ret, int ip)
{
	u64 pid_tgid = bpf_get_current_pid_tgid();
	u32 tid = (u32)pid_tgid;
	struct tcpconnect_event e;
	struct sock **skp, *sk;
	u16 dport;

	skp = bpf_map_lookup_elem(&sockets, &tid);
	if (!skp)
		return 0;  /* entry filtered out, or not seen */
	sk = *skp;
	bpf_map_delete_elem(&sockets, &tid);
	if (ret)
		return 0;  /* failed before the SYN: nothing to report */
	dport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	if (!port_wanted(dport))
		return 0;
	if (count_mode) {
		count_tuple(sk, ip, dport);
		return 0;
	}
	__builtin_memset(&e, 0, sizeof(e));
	e.kind = TCPCONNECT_CONNECT;
	e.ts = bpf_ktime_get_ns();
	e.cgroup_id = tk_cgroup_id();
	read_addrs(sk, ip, e.saddr, e.daddr);
	pid_tgid = tk_pid_tgid();   /* the ids shown: the tool's namespace's */
	e.pid = pid_tgid >> 32;
	e.tid = (u32)pid_tgid;
	e.uid = (u32)bpf_get_current_uid_gid();
	e.ip = ip;
	e.sport = BPF_CORE_READ(sk, __sk_common.skc_num);
	e.dport = dport;
	bpf_get_current_comm(e.comm, sizeof(e.comm));
	tk_emit(ctx, &e, sizeof(e));
	return 0;
}

SEC("fentry/tcp_v4_connect")
int BPF_PROG(kf_v4_connect_entry_fentry, struct sock *sk)
{
	return enter(sk);
}

SEC("kprobe/tcp_v4_connect")
int BPF_KPROBE(kf_v4_connect_entry_kprobe, struct sock *sk)
{
	return enter(sk);
}

SEC("fexit/tcp_v4_connect")
int BPF_PROG(kf_v4_connect_exit_fexit, struct sock *sk, struct sockaddr *uaddr,
	     int addr_len, int ret)
{
	return leave(ctx, ret, 4);
}

SEC("kretprobe/tcp_v4_connect")
int BPF_KRETPROBE(kf_v4_connect_exit_kretprobe, int ret)
{
	return leave(ctx, ret, 4);
}

SEC("fentry/tcp_v6_connect")
int BPF_PROG(kf_v6_connect_entry_fentry, struct sock *sk)
{
	return enter(sk);
}

SEC("kprobe/tcp_v6_connect")
int BPF_KPROBE(kf_v6_connect_entry_kprobe, struct sock *sk)
{
	return enter(sk);
}

SEC("fexit/tcp_v6_connect")
int BPF_PROG(kf_v6_connect_exit_fexit, struct sock *sk, struct sockaddr *uaddr,
	     int addr_len, int ret)
{
	return leave(ctx, ret, 6);
}

SEC("kretprobe/tcp_v6_connect")
int BPF_KRETPROBE(kf_v6_connect_exit_kretprobe, int ret)
{
	return leave(ctx, ret, 6);
}

/* The tracepoint way. */
static __always_inline void syn_sent(struct sock *sk, u64 key)
{
	struct tcpconnect_event e;
	u32 v4;
	u64 pid_tgid;
	bool mapped = false;
	u16 dport;
	int ip = 4;

	if (!tk_task_wanted())
		return;
	if (BPF_CORE_READ(sk, __sk_common.skc_family) == TK_AF_INET6) {
		struct in6_addr d;

		/* ::ffff:a.b.c.d: tcp_v6_connect hands it to tcp_v4_connect */
		BPF_CORE_READ_INTO(&d, sk, __sk_common.skc_v6_daddr);
		mapped = !d.in6_u.u6_addr32[0] && !d.in6_u.u6_addr32[1] &&
			 d.in6_u.u6_addr32[2] == bpf_htonl(0xffff);
		if (!mapped || tk_sock_ip == 6)
			ip = 6;
	}
	if (tk_sock_ip && ip != tk_sock_ip)
		return;
	dport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	if (!port_wanted(dport))
		return;
	__builtin_memset(&e, 0, sizeof(e));
	e.kind = TCPCONNECT_CONNECT;
	e.ts = bpf_ktime_get_ns();
	e.cgroup_id = tk_cgroup_id();
	read_addrs(sk, ip, e.saddr, e.daddr);
	if (ip == 6 && mapped) {
		/* -6 and a v4-mapped destination: tcp_v6_connect sets the
		 * mapped source only after tcp_v4_connect returns. */
		BPF_CORE_READ_INTO(&v4, sk, __sk_common.skc_rcv_saddr);
		__builtin_memset(e.saddr, 0, 10);
		e.saddr[10] = e.saddr[11] = 0xff;
		__builtin_memcpy(&e.saddr[12], &v4, 4);
	}
	pid_tgid = tk_pid_tgid();
	e.pid = pid_tgid >> 32;
	e.tid = (u32)pid_tgid;
	e.uid = (u32)bpf_get_current_uid_gid();
	e.ip = ip;
	e.dport = dport;
	bpf_get_current_comm(e.comm, sizeof(e.comm));
	if (bpf_map_update_elem(&pending, &key, &e, BPF_ANY))
		tk_count_loss(TK_LOSS_MAP_FULL);
}

static __always_inline void state_change(void *ctx, struct sock *sk, int oldstate,
					 int newstate)
{
	struct tcpconnect_event *e;
	u64 key = (u64)sk;

	if (newstate == TCP_SYN_SENT) {
		syn_sent(sk, key);
		return;
	}
	if (oldstate != TCP_SYN_SENT)
		return;
	e = bpf_map_lookup_elem(&pending, &key);
	if (!e)
		return;
	/* Picked after SYN_SENT; inet_sport stays when the port is freed. */
	e->sport = bpf_ntohs(BPF_CORE_READ((struct inet_sock *)sk, inet_sport));
	if (count_mode)
		count_event(e);
	else
		tk_emit(ctx, e, sizeof(*e));
	bpf_map_delete_elem(&pending, &key);
}

TK_SOCK_STATE_PROGS(tp_connect_state, state_change)

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define IPPROTO_UDP_ 17
#define DNS_PORT 53

/* The offset of the UDP header in a packet at its network header, or 0
 * when it is not UDP (IPv6 extension headers and IPv4 fragments are not
 * followed: DNS replies have neither). */
static __always_inline u32 udp_offset(u16 proto, const unsigned char *l3)
{
	u8 b[10];

	if (bpf_probe_read_kernel(b, sizeof(b), l3))
		return 0;
	if (proto == bpf_htons(ETH_P_IP)) {
		/* b[6..7]: flags and fragment offset; b[9]: protocol */
		if (b[9] != IPPROTO_UDP_ || ((b[6] << 8 | b[7]) & 0x3fff))
			return 0;
		return (b[0] & 0xf) * 4;
	}
	if (proto == bpf_htons(ETH_P_IPV6))
		return b[6] == IPPROTO_UDP_ ? 40 : 0;  /* b[6]: next header */
	return 0;
}

/* A received packet at its network header: send it on when it is a UDP
 * datagram from port 53, its payload as far as it is in the linear data. */
static __always_inline int dns_reply(void *ctx, struct sk_buff *skb)
{
	unsigned char *l3 = BPF_CORE_READ(skb, data);
	u32 headlen = BPF_CORE_READ(skb, len) - BPF_CORE_READ(skb, data_len);
	struct tcpconnect_dns *e;
	u16 udp[4];   /* source, dest, length, checksum */
	u32 off, zero = 0;
	u64 n, wire;

	off = udp_offset(BPF_CORE_READ(skb, protocol), l3);
	if (!off || off + sizeof(udp) > headlen)
		return 0;
	if (bpf_probe_read_kernel(udp, sizeof(udp), l3 + off))
		return 0;
	if (udp[0] != bpf_htons(DNS_PORT) || bpf_ntohs(udp[2]) < sizeof(udp))
		return 0;
	e = bpf_map_lookup_elem(&dns_scratch, &zero);
	if (!e)
		return 0;
	off += sizeof(udp);
	wire = bpf_ntohs(udp[2]) - sizeof(udp);
	n = headlen - off;   /* off <= headlen: checked above */
	if (n > wire)
		n = wire;
	/* Opaque to clang, so that the bound is checked on the register
	 * the read takes. */
	barrier_var(n);
	if (n > TCPCONNECT_DNS_MAX)
		n = TCPCONNECT_DNS_MAX;
	barrier_var(n);
	if (n > TCPCONNECT_DNS_MAX)
		return 0;
	e->kind = TCPCONNECT_DNS;
	e->ts = bpf_ktime_get_ns();
	e->wire_len = wire;
	if (bpf_probe_read_kernel(e->pkt, n, l3 + off))
		n = 0;
	e->len = n;
	tk_emit(ctx, e, sizeof(*e));
	return 0;
}

SEC("tp_btf/netif_receive_skb")
int BPF_PROG(dns_reply_tp_btf, struct sk_buff *skb)
{
	return dns_reply(ctx, skb);
}

SEC("raw_tp/netif_receive_skb")
int BPF_PROG(dns_reply_raw_tp, struct sk_buff *skb)
{
	return dns_reply(ctx, skb);
}

SEC("tp/net/netif_receive_skb")
int dns_reply_tp(struct trace_event_raw_net_dev_template *args)
{
	return dns_reply(args, args->skbaddr);
}

char LICENSE[] SEC("license") = "GPL";
