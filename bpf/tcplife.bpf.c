// SPDX-License-Identifier: GPL-2.0
/* tcplife: one event per TCP connection when it closes, with its bytes
 * each way and how long it lived. The bytes are the data the application
 * sent and had acknowledged, and the data it received: tcp_sock's
 * bytes_acked and bytes_received, read at the change to CLOSE as bcc does
 * (no send or receive is traced), less the SYN and FIN they count. They
 * count sequence space, where a SYN and a FIN are a byte each, so bcc's
 * TX is one or two more than was sent and its RX one more than was
 * received. Here:
 *  - TX less 1 for our SYN when it was acknowledged on this socket (a
 *    connect's SYN, acked by the SYN-ACK; an accepted socket's SYN-ACK
 *    was acked in its request socket, before it existed, except for a
 *    Fast Open child, which exists from the SYN), and 1 for our FIN when
 *    it was sent (a close from FIN_WAIT1, FIN_WAIT2, CLOSING or LAST_ACK)
 *    and acknowledged (snd_una reached write_seq, which counts the FIN);
 *  - RX less 1 when the peer's FIN arrived (tcp_fin sets SOCK_DONE in
 *    the same step that moves rcv_nxt, and so bytes_received, past it).
 *
 * Its life starts at its first change to a state before FIN_WAIT1
 * (SYN_SENT for a connect, SYN_RECV for an accepted connection); bcc
 * takes the last such change (ESTABLISHED). A connection whose start was
 * not seen is not reported, as in bcc, nor a socket that closes straight
 * from SYN_RECV (below).
 *
 * Whose connection: the state tracepoint runs in softirq as often as in
 * the socket's process, so the process is taken where the change can
 * only be made by a system call of the socket's own process: SYN_SENT
 * (connect), FIN_WAIT1 (close or shutdown first) and LAST_ACK (close or
 * shutdown after the peer's). The first of them counts: the connecting
 * process for a connect, the closing one for an accepted connection.
 * bcc and libbpf-tools take SYN_SENT and LAST_ACK, the later one
 * winning, and else the task on the CPU at the close; here a connection
 * with none of the three (reset before its process closed it) has no
 * task (pid 0), and is reported only when no task filter is given. The
 * task filters keep the connections of the tasks they name. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "tcplife.h"
#include "tk_emit.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_sock.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TCPLIFE_MAX_SOCKS);
	__type(key, u64);               /* struct sock * */
	__type(value, struct tcplife_birth);
} birth SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TCPLIFE_MAX_SOCKS);
	__type(key, u64);
	__type(value, struct tk_sock_owner);
} owners SEC(".maps");

static __always_inline void note_owner(u64 key)
{
	struct tk_sock_owner o;
	u64 id;

	/* The first one counts; a socket's changes are made under its
	 * lock, one at a time. */
	if (bpf_map_lookup_elem(&owners, &key))
		return;
	id = tk_pid_tgid();
	__builtin_memset(&o, 0, sizeof(o));
	o.pid = id >> 32;
	o.tid = (u32)id;
	o.uid = (u32)bpf_get_current_uid_gid();
	o.wanted = tk_task_wanted();
	bpf_get_current_comm(o.comm, sizeof(o.comm));
	if (bpf_map_update_elem(&owners, &key, &o, BPF_ANY))
		tk_count_loss(TK_LOSS_MAP_FULL);
}

/* Did this socket's bytes_acked count its own SYN? (above) */
static __always_inline bool syn_acked_here(struct sock *sk, int newstate)
{
	if (newstate == TCP_SYN_SENT)
		return true;
	return newstate == TCP_SYN_RECV &&
	       BPF_CORE_READ((struct tcp_sock *)sk, fastopen_rsk);
}

static __always_inline bool fin_acked(struct sock *sk, int oldstate)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;

	if (oldstate != TCP_FIN_WAIT1 && oldstate != TCP_FIN_WAIT2 &&
	    oldstate != TCP_CLOSING && oldstate != TCP_LAST_ACK)
		return false;   /* no FIN of ours: a reset or an abort */
	return BPF_CORE_READ(tp, snd_una) == BPF_CORE_READ(tp, write_seq);
}

static __always_inline bool peer_fin_received(struct sock *sk)
{
	unsigned long flags = BPF_CORE_READ(sk, __sk_common.skc_flags);

	return flags & (1UL << bpf_core_enum_value(enum sock_flags, SOCK_DONE));
}

static __always_inline void change(void *ctx, struct sock *sk, int oldstate,
				   int newstate)
{
	struct tcplife_event e;
	struct tcplife_birth *start;
	struct tk_sock_owner *o;
	u64 key = (u64)sk;

	if (tk_sock_ip && tk_sock_family_ip(sk) != tk_sock_ip)
		return;
	if (newstate < TCP_FIN_WAIT1 && !bpf_map_lookup_elem(&birth, &key)) {
		struct tcplife_birth b = {
			.ns = bpf_ktime_get_ns(),
			.syn_acked = syn_acked_here(sk, newstate),
		};

		if (bpf_map_update_elem(&birth, &key, &b, BPF_ANY))
			tk_count_loss(TK_LOSS_MAP_FULL);
	}
	if (newstate == TCP_SYN_SENT || newstate == TCP_FIN_WAIT1 ||
	    newstate == TCP_LAST_ACK)
		note_owner(key);
	if (newstate != TCP_CLOSE)
		return;
	/* A child socket closed straight from SYN_RECV never carried a
	 * connection: the kernel made it for a handshake's last ACK and
	 * dropped it at once (a second child of the same connection, when
	 * two of its ACKs raced on two CPUs: seen on 6.1 under TCG, with
	 * the connection's own addresses, no owner and 0 bytes). A real
	 * accepted connection is ESTABLISHED before any close; a Fast Open
	 * child reset before its handshake ends is the exception, and is
	 * left out too. */
	if (oldstate == TCP_SYN_RECV)
		goto done;
	start = bpf_map_lookup_elem(&birth, &key);
	o = bpf_map_lookup_elem(&owners, &key);
	if (!start)
		goto done;
	__builtin_memset(&e, 0, sizeof(e));
	e.ts = bpf_ktime_get_ns();
	e.span_ns = e.ts - start->ns;
	if (o) {
		if (!o->wanted)
			goto done;
		e.who = *o;
	} else if (tk_task_filtered()) {
		goto done;
	}
	/* The ports are final now (a connect's local port is picked after
	 * its SYN_SENT): -L and -D are checked here. */
	tk_sock_read(sk, &e.id);
	if (!tk_sock_wanted(&e.id))
		goto done;
	e.tx_bytes = BPF_CORE_READ((struct tcp_sock *)sk, bytes_acked) -
		     start->syn_acked - fin_acked(sk, oldstate);
	e.rx_bytes = BPF_CORE_READ((struct tcp_sock *)sk, bytes_received) -
		     peer_fin_received(sk);
	tk_emit(ctx, &e, sizeof(e));
done:
	bpf_map_delete_elem(&birth, &key);
	bpf_map_delete_elem(&owners, &key);
}

TK_SOCK_STATE_PROGS(state, change)

char LICENSE[] SEC("license") = "GPL";
