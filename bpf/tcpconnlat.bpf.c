// SPDX-License-Identifier: GPL-2.0
/* tcpconnlat: the latency of active TCP connects, from the socket's
 * change to SYN_SENT (made by connect(), in the connecting task: its
 * time and task are kept per socket) to its change to ESTABLISHED (on
 * the SYN-ACK, often in softirq). A connect that never gets there
 * (refused, timed out, closed first) leaves SYN_SENT for CLOSE and is
 * dropped. bcc times the same span with kprobes on tcp_v4_connect /
 * tcp_v6_connect and tcp_rcv_state_process; the state tracepoint
 * sock:inet_sock_set_state sees both ends of it. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "tcpconnlat.h"
#include "tk_emit.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_sock.bpf.h"
#include "tk_sock_owner.bpf.h"

const volatile unsigned long long min_ns = 0;   /* the threshold */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TCPCONNLAT_MAX_SOCKS);
	__type(key, u64);               /* struct sock * */
	__type(value, struct tcpconnlat_start);
} starts SEC(".maps");

static __always_inline void change(void *ctx, struct sock *sk, int oldstate,
				   int newstate)
{
	struct tcpconnlat_start *s, st;
	struct tcpconnlat_event e;
	u64 key = (u64)sk;

	if (newstate == TCP_SYN_SENT) {
		if (!tk_task_wanted())
			return;
		if (tk_sock_ip && tk_sock_family_ip(sk) != tk_sock_ip)
			return;
		tk_sock_owner_now(&st.who);
		st.ts = bpf_ktime_get_ns();
		if (bpf_map_update_elem(&starts, &key, &st, BPF_ANY))
			tk_count_loss(TK_LOSS_MAP_FULL);
		return;
	}
	if (oldstate != TCP_SYN_SENT)
		return;
	s = bpf_map_lookup_elem(&starts, &key);
	if (!s)
		return;
	if (newstate == TCP_ESTABLISHED) {
		__builtin_memset(&e, 0, sizeof(e));
		e.ts = bpf_ktime_get_ns();
		e.lat_ns = e.ts - s->ts;
		if (e.lat_ns >= min_ns) {
			e.who = s->who;
			tk_sock_read(sk, &e.id);   /* the local port is set now */
			tk_emit(ctx, &e, sizeof(e));
		}
	}
	bpf_map_delete_elem(&starts, &key);
}

TK_SOCK_STATE_PROGS(state, change)

char LICENSE[] SEC("license") = "GPL";
