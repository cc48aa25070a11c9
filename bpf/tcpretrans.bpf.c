// SPDX-License-Identifier: GPL-2.0
/* tcpretrans: TCP retransmits at the tracepoint tcp:tcp_retransmit_skb
 * (4.16), which the kernel fires at the end of __tcp_retransmit_skb
 * (net/ipv4/tcp_output.c) for each skb it retransmitted: RTO, fast and
 * RACK retransmits, SYN retransmits, and the tail loss probes that
 * retransmit (tcp_send_loss_probe calls __tcp_retransmit_skb). Up to
 * 6.15 it fires only when the transmit succeeded; since, with err for
 * failures too (skipped here: nothing was sent). SYN-ACK retransmits of
 * a listener are tcp:tcp_retransmit_synack, not traced (as in bcc).
 *
 * -l: tail loss probe attempts, a probe on the kernel function
 * tcp_send_loss_probe (fentry, else kprobe), as bcc: no tracepoint sees
 * an attempt that sends new data. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "tcpretrans.h"
#include "tk_emit.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_sock.bpf.h"

const volatile bool count_mode = false;     /* -c */
const volatile bool tp_has_err = false;     /* tcp_retransmit_skb(sk, skb, err): 6.16+ */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TCPRETRANS_MAX_FLOWS);
	__type(key, struct tk_sock_id);
	__type(value, struct tcpretrans_count);
} counts SEC(".maps");

static __always_inline void count(struct tk_sock_id *id, int type, u32 segs)
{
	struct tcpretrans_count *c, zero = {};

	c = bpf_map_lookup_elem(&counts, id);
	if (!c) {
		if (bpf_map_update_elem(&counts, id, &zero, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&counts, id)) {
			tk_count_loss(TK_LOSS_MAP_FULL);
			return;
		}
		c = bpf_map_lookup_elem(&counts, id);
		if (!c)
			return;
	}
	if (type == TCPRETRANS_RETRANSMIT) {
		__sync_fetch_and_add(&c->retransmits, 1);
		__sync_fetch_and_add(&c->segments, segs);
	} else {
		__sync_fetch_and_add(&c->loss_probes, 1);
	}
}

static __always_inline int retrans(void *ctx, struct sock *sk, struct sk_buff *skb,
				   int type)
{
	struct tcpretrans_event e;
	struct tcp_skb_cb *tcb;

	__builtin_memset(&e, 0, sizeof(e));
	tk_sock_read(sk, &e.id);
	if (!tk_sock_wanted(&e.id))
		return 0;
	if (skb) {
		tcb = (struct tcp_skb_cb *)((void *)skb +
					   bpf_core_field_offset(struct sk_buff, cb));
		e.seq = BPF_CORE_READ(tcb, seq);
		e.segs = BPF_CORE_READ(tcb, tcp_gso_segs);
		if (!e.segs)
			e.segs = 1;
	}
	if (count_mode) {
		count(&e.id, type, e.segs);
		return 0;
	}
	e.ts = bpf_ktime_get_ns();
	e.pid = tk_pid_tgid() >> 32;
	e.state = BPF_CORE_READ(sk, __sk_common.skc_state);
	e.type = type;
	tk_emit(ctx, &e, sizeof(e));
	return 0;
}

static __always_inline int raw(u64 *ctx)
{
	if (tp_has_err && (int)ctx[2])
		return 0;
	return retrans(ctx, (struct sock *)ctx[0], (struct sk_buff *)ctx[1],
		       TCPRETRANS_RETRANSMIT);
}

SEC("tp_btf/tcp_retransmit_skb")
int retrans_tp_btf(u64 *ctx)
{
	return raw(ctx);
}

SEC("raw_tp/tcp_retransmit_skb")
int retrans_raw_tp(u64 *ctx)
{
	return raw(ctx);
}

/* Its record starts with skbaddr and skaddr on every kernel (the event
 * class tcp_event_sk_skb before 6.16, an event of its own since). */
struct tcpretrans_tp_args {
	struct trace_entry ent;
	const void *skbaddr;
	const void *skaddr;
};

/* Since 6.16 the event has an err field: a retransmission that failed.
 * Declared here, so the program builds against an older vmlinux.h. */
struct trace_event_raw_tcp_retransmit_skb___616 {
	int err;
} __attribute__((preserve_access_index));

SEC("tp/tcp/tcp_retransmit_skb")
int retrans_tp(struct tcpretrans_tp_args *args)
{
	struct trace_event_raw_tcp_retransmit_skb___616 *a = (void *)args;

	if (bpf_core_field_exists(a->err) && BPF_CORE_READ(a, err))
		return 0;
	return retrans(args, (struct sock *)args->skaddr, (struct sk_buff *)args->skbaddr,
		       TCPRETRANS_RETRANSMIT);
}

SEC("fentry/tcp_send_loss_probe")
int BPF_PROG(tlp_fentry, struct sock *sk)
{
	return retrans(ctx, sk, 0, TCPRETRANS_LOSS_PROBE);
}

SEC("kprobe/tcp_send_loss_probe")
int BPF_KPROBE(tlp_kprobe, struct sock *sk)
{
	return retrans(ctx, sk, 0, TCPRETRANS_LOSS_PROBE);
}

char LICENSE[] SEC("license") = "GPL";
