// SPDX-License-Identifier: GPL-2.0
/* tcpsynbl: the listener's accept backlog each time a handshake's last
 * ACK makes a child socket, in a log2 histogram per listener (its
 * network namespace, port and maximum backlog).
 *
 * bcc reads the listener's sk_ack_backlog at the entry of
 * tcp_v4_syn_recv_sock / tcp_v6_syn_recv_sock (kprobes). Here the
 * tracepoint sock:inet_sock_set_state sees the same moment without
 * them: those functions make the child with inet_csk_clone_lock, which
 * changes it from the listener's LISTEN to SYN_RECV. The child is a copy
 * of the listener (sk_clone_lock copies the struct sock whole), made
 * before the child joins the accept queue: its sk_ack_backlog and
 * sk_max_ack_backlog are the listener's at that moment, its local port
 * and namespace the listener's. A SYN that finds the accept queue full
 * (more than backlog_max children) makes no child: bcc counts it, with
 * the full backlog, here it is not seen. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "tcpsynbl.h"
#include "tk_bits.bpf.h"
#include "tk_loss.bpf.h"
#include "tk_sock.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TCPSYNBL_MAX_KEYS);
	__type(key, struct tcpsynbl_key);
	__type(value, struct tcpsynbl_hist);
} hists SEC(".maps");

static struct tcpsynbl_hist zero_hist;

static __always_inline void change(void *ctx, struct sock *sk, int oldstate,
				   int newstate)
{
	struct tcpsynbl_key key = {};
	struct tcpsynbl_hist *h;
	u64 slot;

	if (oldstate != TCP_LISTEN || newstate != TCP_SYN_RECV)
		return;
	key.ip = tk_sock_family_ip(sk);
	if (tk_sock_ip && key.ip != tk_sock_ip)
		return;
	key.netns = BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum);
	key.port = BPF_CORE_READ(sk, __sk_common.skc_num);
	key.backlog_max = BPF_CORE_READ(sk, sk_max_ack_backlog);
	h = tk_lookup_or_init(&hists, &key, &zero_hist);
	if (!h)
		return;
	slot = tk_log2_slot(BPF_CORE_READ(sk, sk_ack_backlog));
	tk_bound(slot, TCPSYNBL_SLOTS - 1);
	__sync_fetch_and_add(&h->slots[slot], 1);
}

TK_SOCK_STATE_PROGS(state, change)

char LICENSE[] SEC("license") = "GPL";
