// SPDX-License-Identifier: GPL-2.0
/* tcpconnect: active TCP connects, IPv4 and IPv6.
 *
 * The entry of tcp_v4_connect / tcp_v6_connect keeps the socket under
 * the thread's id (when the task filter passes); its return reports the
 * socket when the function returned 0: the SYN went out, addresses and
 * ports are set. That includes a non-blocking connect still in progress
 * (connect(2) says EINPROGRESS; tcp_v4_connect said 0) and one the peer
 * later refuses, as bcc reports them; a connect that fails before its SYN
 * (no route, no free port) is not reported.
 *
 * Entry and return are separate probes, each fentry/fexit or else
 * kprobe/kretprobe, so any mix of methods works: they meet only in the
 * sockets map. An AF_INET6 socket connecting to a v4-mapped address
 * enters tcp_v6_connect, then tcp_v4_connect on the same thread: the
 * inner entry replaces the outer one, the inner return reports it (as
 * IPv4, like bcc) and the outer return finds nothing. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "tcpconnect.h"
#include "tk_emit.bpf.h"
#include "tk_filter.bpf.h"

const volatile bool count_mode = false;
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
	read_addrs(sk, ip, e.saddr, e.daddr);
	e.pid = pid_tgid >> 32;
	e.tid = tid;
	e.uid = (u32)bpf_get_current_uid_gid();
	e.ip = ip;
	e.sport = BPF_CORE_READ(sk, __sk_common.skc_num);
	e.dport = dport;
	bpf_get_current_comm(e.comm, sizeof(e.comm));
	tk_emit(ctx, &e, sizeof(e));
	return 0;
}

SEC("fentry/tcp_v4_connect")
int BPF_PROG(v4_connect_entry_fentry, struct sock *sk)
{
	return enter(sk);
}

SEC("kprobe/tcp_v4_connect")
int BPF_KPROBE(v4_connect_entry_kprobe, struct sock *sk)
{
	return enter(sk);
}

SEC("fexit/tcp_v4_connect")
int BPF_PROG(v4_connect_exit_fexit, struct sock *sk, struct sockaddr *uaddr,
	     int addr_len, int ret)
{
	return leave(ctx, ret, 4);
}

SEC("kretprobe/tcp_v4_connect")
int BPF_KRETPROBE(v4_connect_exit_kretprobe, int ret)
{
	return leave(ctx, ret, 4);
}

SEC("fentry/tcp_v6_connect")
int BPF_PROG(v6_connect_entry_fentry, struct sock *sk)
{
	return enter(sk);
}

SEC("kprobe/tcp_v6_connect")
int BPF_KPROBE(v6_connect_entry_kprobe, struct sock *sk)
{
	return enter(sk);
}

SEC("fexit/tcp_v6_connect")
int BPF_PROG(v6_connect_exit_fexit, struct sock *sk, struct sockaddr *uaddr,
	     int addr_len, int ret)
{
	return leave(ctx, ret, 6);
}

SEC("kretprobe/tcp_v6_connect")
int BPF_KRETPROBE(v6_connect_exit_kretprobe, int ret)
{
	return leave(ctx, ret, 6);
}

char LICENSE[] SEC("license") = "GPL";
