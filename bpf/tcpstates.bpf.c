// SPDX-License-Identifier: GPL-2.0
/* tcpstates: every TCP state change, with the time the socket spent in
 * the state it leaves (from the change that entered it, when seen). The
 * task is the one on the CPU at the change, as bcc's C-PID: the socket's
 * own process in its system calls, whoever was running when a packet
 * made the change in softirq. The time is kept per socket for every
 * socket the -4/-6 and port filters keep, whatever the task filters
 * say, so that a change the task filters keep has its time right. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "tcpstates.h"
#include "tk_emit.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_sock.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TCPSTATES_MAX_SOCKS);
	__type(key, u64);               /* struct sock * */
	__type(value, u64);             /* ktime ns of its last change */
} last SEC(".maps");

/* tracekitd's count mode: changes by namespace, old and new state, and
 * nothing else (no times, no events, no filters). */
const volatile bool tcpstates_count = false;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TCPSTATES_MAX_COUNTS);
	__type(key, struct tcpstates_count_key);
	__type(value, u64);
} state_counts SEC(".maps");

static __always_inline void count_change(struct sock *sk, int oldstate, int newstate)
{
	struct tcpstates_count_key k = {};
	u64 zero = 0, *n;

	k.netns = BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum);
	k.oldstate = oldstate;
	k.newstate = newstate;
	n = tk_lookup_or_init(&state_counts, &k, &zero);
	if (n)
		__sync_fetch_and_add(n, 1);
}

static __always_inline void change(void *ctx, struct sock *sk, int oldstate,
				   int newstate)
{
	struct tcpstates_event e;
	u64 key = (u64)sk, *prev, id;

	if (tcpstates_count) {
		count_change(sk, oldstate, newstate);
		return;
	}
	__builtin_memset(&e, 0, sizeof(e));
	tk_sock_read(sk, &e.id);
	if (!tk_sock_wanted(&e.id))
		return;
	e.ts = bpf_ktime_get_ns();
	prev = bpf_map_lookup_elem(&last, &key);
	if (prev)
		e.prev_ts = *prev;
	if (newstate == TCP_CLOSE)
		bpf_map_delete_elem(&last, &key);
	else if (bpf_map_update_elem(&last, &key, &e.ts, BPF_ANY))
		tk_count_loss(TK_LOSS_MAP_FULL);
	if (!tk_task_wanted())
		return;
	e.skaddr = key;
	e.oldstate = oldstate;
	e.newstate = newstate;
	id = tk_pid_tgid();
	e.pid = id >> 32;
	e.tid = (u32)id;
	e.uid = (u32)bpf_get_current_uid_gid();
	bpf_get_current_comm(e.comm, sizeof(e.comm));
	tk_emit(ctx, &e, sizeof(e));
}

TK_SOCK_STATE_PROGS(state, change)

char LICENSE[] SEC("license") = "GPL";
