// SPDX-License-Identifier: GPL-2.0
/* tcpdrop: the IP packets the kernel drops, at skb:kfree_skb, with the
 * drop reason where the tracepoint has one (5.17), the addresses and
 * ports from the packet's headers, its socket's TCP state and -K the
 * kernel stack. Which frees are drops is tcpdrop_skip_*'s (set by
 * userspace from the kernel's enum skb_drop_reason). */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "tcpdrop.h"
#include "tk_emit.bpf.h"
#include "tk_filter.bpf.h"

const volatile int tcpdrop_has_reason = 0;   /* kfree_skb has reason (arg 3) */
const volatile int tcpdrop_has_rx_sk = 0;    /* and rx_sk (arg 4, 6.11) */
const volatile int tcpdrop_skip1 = -1;       /* reasons that are no drop: */
const volatile int tcpdrop_skip2 = -1;       /* SKB_CONSUMED, NOT_SPECIFIED */
const volatile int tcpdrop_ip = 0;           /* -4: 4, -6: 6 */
const volatile int tcpdrop_kstack = 0;       /* -K */
const volatile bool tcpdrop_count = false;   /* tracekitd: drop_counts only */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct tcpdrop_event);
} scratch SEC(".maps");

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD

/* tracekitd's count mode: drops by namespace, reason and protocol. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TCPDROP_MAX_COUNTS);
	__type(key, struct tcpdrop_count_key);
	__type(value, u64);
} drop_counts SEC(".maps");

/* The namespace: the device's the packet came in or went out on, else
 * its socket's; 0 when it has neither. */
static __always_inline void count_drop(struct sk_buff *skb, struct sock *rx_sk,
				       int reason, u8 l4proto)
{
	struct tcpdrop_count_key k = {};
	struct net_device *dev = BPF_CORE_READ(skb, dev);
	struct sock *sk = BPF_CORE_READ(skb, sk);
	u64 zero = 0, *n;

	if (!sk)
		sk = rx_sk;
	if (dev)
		k.netns = BPF_CORE_READ(dev, nd_net.net, ns.inum);
	else if (sk)
		k.netns = BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum);
	k.reason = reason;
	k.proto = l4proto;
	n = tk_lookup_or_init(&drop_counts, &k, &zero);
	if (n)
		__sync_fetch_and_add(n, 1);
}

static __always_inline int drop(void *ctx, struct sk_buff *skb, void *location,
				 int reason, struct sock *rx_sk)
{
	struct tcpdrop_event *e;
	unsigned char *head, *l4;
	u16 proto, nh;
	struct sock *sk;
	u32 zero = 0;
	u8 b0;
	u64 id;

	if (reason >= 0 && (reason == tcpdrop_skip1 || reason == tcpdrop_skip2))
		return 0;
	proto = bpf_ntohs(BPF_CORE_READ(skb, protocol));
	if (proto != ETH_P_IP && proto != ETH_P_IPV6)
		return 0;
	if (tcpdrop_ip && tcpdrop_ip != (proto == ETH_P_IP ? 4 : 6))
		return 0;
	if (!tk_task_wanted())
		return 0;
	head = BPF_CORE_READ(skb, head);
	nh = BPF_CORE_READ(skb, network_header);
	if (bpf_probe_read_kernel(&b0, 1, head + nh))
		return 0;
	if (tcpdrop_count) {
		u8 l4proto = 0;

		if (b0 >> 4 != (proto == ETH_P_IP ? 4 : 6))
			return 0;
		bpf_probe_read_kernel(&l4proto, 1, head + nh + (proto == ETH_P_IP ? 9 : 6));
		count_drop(skb, rx_sk, reason, l4proto);
		return 0;
	}
	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return 0;
	if (proto == ETH_P_IP) {
		if (b0 >> 4 != 4)
			return 0;
		e->ip = 4;
		__builtin_memset(e->saddr, 0, sizeof(e->saddr));
		__builtin_memset(e->daddr, 0, sizeof(e->daddr));
		bpf_probe_read_kernel(e->saddr, 4, head + nh + 12);
		bpf_probe_read_kernel(e->daddr, 4, head + nh + 16);
		e->proto = 0;
		bpf_probe_read_kernel(&e->proto, 1, head + nh + 9);
		l4 = head + nh + (b0 & 15) * 4;
	} else {
		if (b0 >> 4 != 6)
			return 0;
		e->ip = 6;
		bpf_probe_read_kernel(e->saddr, 16, head + nh + 8);
		bpf_probe_read_kernel(e->daddr, 16, head + nh + 24);
		e->proto = 0;
		bpf_probe_read_kernel(&e->proto, 1, head + nh + 6);   /* no extension headers */
		l4 = head + nh + 40;
	}
	e->sport = e->dport = 0;
	e->tcpflags = 0;
	e->state = -1;
	if (e->proto == 6 || e->proto == 17) {
		bpf_probe_read_kernel(&e->sport, 2, l4);
		bpf_probe_read_kernel(&e->dport, 2, l4 + 2);
		e->sport = bpf_ntohs(e->sport);
		e->dport = bpf_ntohs(e->dport);
	}
	if (e->proto == 6) {
		bpf_probe_read_kernel(&e->tcpflags, 1, l4 + 13);
		sk = BPF_CORE_READ(skb, sk);
		if (!sk)
			sk = rx_sk;
		if (sk)
			e->state = BPF_CORE_READ(sk, __sk_common.skc_state);
	}
	e->ts = bpf_ktime_get_ns();
	e->location = (u64)location;
	e->reason = reason;
	id = tk_pid_tgid();
	e->pid = id >> 32;
	e->tid = (u32)id;
	e->uid = (u32)bpf_get_current_uid_gid();
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	if (tcpdrop_kstack) {
		long n = bpf_get_stack(ctx, e->kstack, sizeof(e->kstack), 0);

		e->kstack_len = n > 0 ? n : 0;
		tk_emit(ctx, e, sizeof(*e));
	} else {
		e->kstack_len = 0;
		tk_emit(ctx, e, offsetof(struct tcpdrop_event, kstack));
	}
	return 0;
}

/* kfree_skb(skb, location) before 5.17, (skb, location, reason) since,
 * (skb, location, reason, rx_sk) since 6.11: the arguments a kernel lacks
 * are behind rodata, so the verifier never sees their reads. */
static __always_inline int raw(u64 *ctx)
{
	int reason = tcpdrop_has_reason ? (int)ctx[2] : -1;
	struct sock *rx_sk = tcpdrop_has_rx_sk ? (struct sock *)ctx[3] : 0;

	return drop(ctx, (struct sk_buff *)ctx[0], (void *)ctx[1], reason, rx_sk);
}

SEC("tp_btf/kfree_skb")
int drop_tp_btf(u64 *ctx)
{
	return raw(ctx);
}

SEC("raw_tp/kfree_skb")
int drop_raw_tp(u64 *ctx)
{
	return raw(ctx);
}

SEC("tp/skb/kfree_skb")
int drop_tp(struct trace_event_raw_kfree_skb *args)
{
	int reason = -1;
	struct sock *rx_sk = 0;

	if (bpf_core_field_exists(args->reason))
		reason = BPF_CORE_READ(args, reason);
	if (bpf_core_field_exists(args->rx_sk))
		rx_sk = BPF_CORE_READ(args, rx_sk);
	return drop(args, args->skbaddr, args->location, reason, rx_sk);
}

char LICENSE[] SEC("license") = "GPL";
