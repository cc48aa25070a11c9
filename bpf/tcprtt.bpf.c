// SPDX-License-Identifier: GPL-2.0
/* tcprtt: TCP's smoothed RTT (tcp_sock srtt_us >> 3, microseconds) at
 * each segment an established socket receives: the tracepoint
 * tcp:tcp_probe (4.16), fired at the top of tcp_rcv_established, where
 * bcc puts its kprobe. Its record's srtt is the same value; the tp_btf
 * and raw_tp programs read it from the socket, the tp program from the
 * record (whose socket pointer older kernels lack). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "tcprtt.h"
#include "tk_bits.bpf.h"
#include "tk_loss.bpf.h"
#include "tk_sock.bpf.h"

const volatile bool millis = false;
const volatile int by = TCPRTT_ALL;
const volatile unsigned short lport = 0, rport = 0;   /* -p, -P: 0 any */
const volatile int laddr_ip = 0, raddr_ip = 0;        /* -a, -A: 0 any */
const volatile unsigned char laddr[16] = {}, raddr[16] = {};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TCPRTT_MAX_KEYS);
	__type(key, struct tcprtt_key);
	__type(value, struct tcprtt_hist);
} hists SEC(".maps");

static __always_inline bool addr_is(const volatile unsigned char *want, int want_ip,
				    const struct tk_sock_id *id, const unsigned char *a)
{
	int i, n = want_ip == 4 ? 4 : 16;

	if (id->ip != want_ip)
		return false;
	for (i = 0; i < 16; i++) {
		if (i >= n)
			break;
		if (a[i] != want[i])
			return false;
	}
	return true;
}

static __always_inline void sample(struct tk_sock_id *id, u64 srtt)
{
	static const struct tcprtt_hist zero;
	struct tcprtt_hist *h;
	struct tcprtt_key key = {};
	u64 slot;

	if (tk_sock_ip && id->ip != tk_sock_ip)
		return;
	if ((lport && id->sport != lport) || (rport && id->dport != rport))
		return;
	if (laddr_ip && !addr_is(laddr, laddr_ip, id, id->saddr))
		return;
	if (raddr_ip && !addr_is(raddr, raddr_ip, id, id->daddr))
		return;
	if (millis)
		srtt /= 1000;
	if (by != TCPRTT_ALL) {
		__builtin_memcpy(key.addr, by == TCPRTT_BY_LADDR ? id->saddr : id->daddr, 16);
		key.ip = id->ip;
	}
	h = bpf_map_lookup_elem(&hists, &key);
	if (!h) {
		if (bpf_map_update_elem(&hists, &key, &zero, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&hists, &key)) {
			tk_count_loss(TK_LOSS_MAP_FULL);
			return;
		}
		h = bpf_map_lookup_elem(&hists, &key);
		if (!h)
			return;
	}
	slot = tk_log2_slot(srtt);
	tk_bound(slot, TCPRTT_SLOTS - 1);
	__sync_fetch_and_add(&h->slots[slot], 1);
	__sync_fetch_and_add(&h->sum, srtt);
	__sync_fetch_and_add(&h->count, 1);
}

static __always_inline int from_sock(struct sock *sk)
{
	struct tk_sock_id id;

	tk_sock_read(sk, &id);
	sample(&id, BPF_CORE_READ((struct tcp_sock *)sk, srtt_us) >> 3);
	return 0;
}

SEC("tp_btf/tcp_probe")
int BPF_PROG(rtt_tp_btf, struct sock *sk)
{
	return from_sock(sk);
}

SEC("raw_tp/tcp_probe")
int BPF_PROG(rtt_raw_tp, struct sock *sk)
{
	return from_sock(sk);
}

/* The record's addresses are a sockaddr_in or sockaddr_in6 each, whose
 * own family tells which (the record's family field is 6.x's). */
SEC("tp/tcp/tcp_probe")
int rtt_tp(struct trace_event_raw_tcp_probe *args)
{
	struct tk_sock_id id = {};
	u16 family = 0;

	bpf_probe_read_kernel(&family, sizeof(family), (void *)args->saddr);

	if (family == TK_AF_INET) {
		id.ip = 4;
		bpf_probe_read_kernel(id.saddr, 4, (void *)args->saddr + 4);
		bpf_probe_read_kernel(id.daddr, 4, (void *)args->daddr + 4);
	} else if (family == TK_AF_INET6) {
		id.ip = 6;
		bpf_probe_read_kernel(id.saddr, 16, (void *)args->saddr + 8);
		bpf_probe_read_kernel(id.daddr, 16, (void *)args->daddr + 8);
	} else {
		return 0;
	}
	id.sport = BPF_CORE_READ(args, sport);
	id.dport = BPF_CORE_READ(args, dport);
	sample(&id, BPF_CORE_READ(args, srtt));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
