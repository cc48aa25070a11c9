// SPDX-License-Identifier: GPL-2.0
/* tcptop: bytes each process sent and received per TCP connection,
 * summed in a hash map that userspace takes out each interval.
 *
 * Two ways (libtrace/kfunc_or_tp.h, the tracepoints first):
 *
 * tp_*: the tracepoints sock:sock_send_length and sock:sock_recv_length
 * (6.3), which sock_sendmsg and sock_recvmsg fire in the calling task
 * with the call's return: the bytes that one call sent or received (a
 * negative error counts nothing). A MSG_PEEK receive is not counted: the
 * bytes stay to be read again. Every send(2), write(2), sendmsg(2),
 * sendfile(2) and splice to a socket (which send through sock_sendmsg
 * since 6.5) and every receive by a system call or io_uring are seen;
 * splice from a socket (tcp_read_sock) is not.
 *
 * kf_*: the kernel functions, as bcc: tcp_sendmsg's return, the bytes
 * it queued, and tcp_recvmsg's, the bytes a read took from the socket
 * (MSG_PEEK reads included: the flags' place among its arguments differs
 * between kernels). Entry and return are each fentry/fexit, else
 * kprobe/kretprobe, in any mix: the socket is kept by thread in between;
 * the fexit reads the return with bpf_get_func_ret (5.17), so older
 * kernels take the kretprobe. bcc and libbpf-tools count tcp_sendmsg's
 * size asked for and tcp_cleanup_rbuf's copied, which a MSG_WAITALL read
 * passes more than once. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "tcptop.h"
#include "tk_filter.bpf.h"
#include "tk_loss.bpf.h"
#include "tk_sock.bpf.h"

#define MSG_PEEK_ 2

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TCPTOP_MAX_ENTRIES);
	__type(key, struct tcptop_key);
	__type(value, struct tcptop_bytes);
} bytes SEC(".maps");

static __always_inline void count(struct sock *sk, long n, bool sent)
{
	struct tcptop_bytes *b, zero = {};
	struct tcptop_key k;

	if (n <= 0 || !tk_task_wanted())
		return;
	__builtin_memset(&k, 0, sizeof(k));
	tk_sock_read(sk, &k.id);
	if (!tk_sock_wanted(&k.id))
		return;
	k.pid = tk_pid_tgid() >> 32;
	bpf_get_current_comm(k.comm, sizeof(k.comm));
	b = tk_lookup_or_init(&bytes, &k, &zero);
	if (!b)
		return;
	if (sent)
		__sync_fetch_and_add(&b->sent, n);
	else
		__sync_fetch_and_add(&b->received, n);
}

/* ---- tp_: sock:sock_send_length, sock:sock_recv_length ---- */

static __always_inline void msg_length(struct sock *sk, int ret, int flags, bool sent)
{
	if (tk_sock_is_tcp(sk) && (sent || !(flags & MSG_PEEK_)))
		count(sk, ret, sent);
}

#define TP_LENGTH(dir, is_sent)                                               \
SEC("tp_btf/sock_" #dir "_length")                                            \
int BPF_PROG(tp_##dir##_tp_btf, struct sock *sk, int ret, int flags)          \
{                                                                             \
	msg_length(sk, ret, flags, is_sent);                                  \
	return 0;                                                             \
}                                                                             \
SEC("raw_tp/sock_" #dir "_length")                                            \
int BPF_PROG(tp_##dir##_raw_tp, struct sock *sk, int ret, int flags)          \
{                                                                             \
	msg_length(sk, ret, flags, is_sent);                                  \
	return 0;                                                             \
}                                                                             \
SEC("tp/sock/sock_" #dir "_length")                                           \
int tp_##dir##_tp(struct trace_event_raw_sock_msg_length *args)               \
{                                                                             \
	if (args->protocol == TK_IPPROTO_TCP &&                               \
	    (is_sent || !(args->flags & MSG_PEEK_)))                          \
		count((struct sock *)args->sk, args->ret, is_sent);           \
	return 0;                                                             \
}

TP_LENGTH(send, true)
TP_LENGTH(recv, false)

/* ---- kf_: tcp_sendmsg, tcp_recvmsg ---- */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, u32);               /* tid: in tcp_sendmsg or tcp_recvmsg */
	__type(value, struct sock *);
} calls SEC(".maps");

static __always_inline int entry(struct sock *sk)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();

	if (tk_task_wanted() && bpf_map_update_elem(&calls, &tid, &sk, BPF_ANY))
		tk_count_loss(TK_LOSS_MAP_FULL);
	return 0;
}

static __always_inline int leave(int ret, bool sent)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct sock **skp = bpf_map_lookup_elem(&calls, &tid);

	if (!skp)
		return 0;
	count(*skp, ret, sent);
	bpf_map_delete_elem(&calls, &tid);
	return 0;
}

/* The return's arguments differ between kernels (tcp_recvmsg lost its
 * nonblock in 5.19): the exits read only the return value. */
#define KF_CALL(dir, func, is_sent)                                           \
SEC("fentry/" #func)                                                          \
int BPF_PROG(kf_##dir##_entry_fentry, struct sock *sk)                        \
{                                                                             \
	return entry(sk);                                                     \
}                                                                             \
SEC("kprobe/" #func)                                                          \
int BPF_KPROBE(kf_##dir##_entry_kprobe, struct sock *sk)                      \
{                                                                             \
	return entry(sk);                                                     \
}                                                                             \
SEC("fexit/" #func)                                                           \
int kf_##dir##_exit_fexit(u64 *ctx)                                           \
{                                                                             \
	u64 ret = 0;                                                          \
                                                                              \
	bpf_get_func_ret(ctx, &ret);                                          \
	return leave((int)ret, is_sent);                                      \
}                                                                             \
SEC("kretprobe/" #func)                                                       \
int BPF_KRETPROBE(kf_##dir##_exit_kretprobe, int ret)                         \
{                                                                             \
	return leave(ret, is_sent);                                           \
}

KF_CALL(send, tcp_sendmsg, true)
KF_CALL(recv, tcp_recvmsg, false)

char LICENSE[] SEC("license") = "GPL";
