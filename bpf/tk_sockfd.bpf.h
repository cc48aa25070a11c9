/* The network tools' socket system calls (bind, listen, accept, close):
 * the socket behind a descriptor of the current task, the task as a
 * socket's owner, and a socket's network namespace. */
#ifndef TK_SOCKFD_BPF_H
#define TK_SOCKFD_BPF_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "tk_fd.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_sock.h"

#define TK_S_IFMT 00170000
#define TK_S_IFSOCK 0140000
#define TK_SOCK_STREAM 1

/* Before 6.13 a file counted its references in f_count (1: one); since,
 * in f_ref (file_ref_t: 0 is one reference). */
struct file___f_count {
	atomic_long_t f_count;
} __attribute__((preserve_access_index));

/* Both kinds declared here, so the program builds against a vmlinux.h
 * of either (vmlinux/arm64's is 6.12's). */
struct file___f_ref {
	struct {
		atomic64_t refcnt;
	} f_ref;
} __attribute__((preserve_access_index));

/* The struct socket of descriptor fd, or NULL when fd is no socket. */
static __always_inline struct socket *tk_fd_socket(int fd)
{
	struct file *f = tk_fd_file(fd);

	if (!f || (BPF_CORE_READ(f, f_inode, i_mode) & TK_S_IFMT) != TK_S_IFSOCK)
		return NULL;
	return BPF_CORE_READ(f, private_data);
}

/* Is fd the last descriptor (the only reference) of its file: will
 * closing it release the socket? */
static __always_inline bool tk_fd_last_ref(int fd)
{
	struct file *f = tk_fd_file(fd);

	if (!f)
		return false;
	if (bpf_core_field_exists(struct file___f_count, f_count))
		return BPF_CORE_READ((struct file___f_count *)f, f_count.counter) == 1;
	return BPF_CORE_READ((struct file___f_ref *)f, f_ref.refcnt.counter) == 0;
}

/* The TCP socket (IPv4 or IPv6, SOCK_STREAM) of descriptor fd, else NULL. */
static __always_inline struct sock *tk_fd_tcp_sock(int fd)
{
	struct socket *so = tk_fd_socket(fd);
	struct sock *sk;
	u16 family;

	if (!so || BPF_CORE_READ(so, type) != TK_SOCK_STREAM)
		return NULL;
	sk = BPF_CORE_READ(so, sk);
	if (!sk)
		return NULL;
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	if (family != 2 && family != 10)   /* AF_INET, AF_INET6 */
		return NULL;
	if (BPF_CORE_READ_BITFIELD_PROBED(sk, sk_protocol) != 6)   /* IPPROTO_TCP */
		return NULL;
	return sk;
}

/* The inode number of the socket's network namespace (ip netns, lsns). */
static __always_inline u32 tk_sock_netns(struct sock *sk)
{
	return BPF_CORE_READ(sk, __sk_common.skc_net.net, ns.inum);
}

/* The current task as the one a socket event is charged to. */
static __always_inline void tk_sock_owner_now(struct tk_sock_owner *o)
{
	u64 id = tk_pid_tgid();

	o->pid = id >> 32;
	o->tid = (u32)id;
	o->uid = (u32)bpf_get_current_uid_gid();
	o->wanted = 1;
	bpf_get_current_comm(o->comm, sizeof(o->comm));
}

#endif
