/* What the network tools print alike: addresses, TCP states, port lists. */
#ifndef TK_NET_H
#define TK_NET_H

#include <bpf/libbpf.h>
#include <stdbool.h>
#include <stddef.h>

#include "tk_sock.h"

/* The address at addr (IPv4 in its first 4 bytes when ip is 4, else 16
 * bytes of IPv6), as inet_ntop writes it, into buf; "?" when it cannot. */
const char *tk_addr_str(int ip, const unsigned char *addr, char *buf, size_t len);

/* bcc's name of a TCP state (tcp.state2str): "ESTABLISHED", "SYN_SENT",
 * ...; the number for a state it does not know. buf: 12 bytes at least. */
const char *tk_tcp_state_name(int state, char *buf, size_t len);

/* A port list option such as -L 80,443 or -P 80: every item a port from
 * 1 to 65535, no empty item, at most max of them; else a usage error
 * naming option. Returns how many went into ports. */
int tk_ports_arg(const char *option, const char *arg, unsigned short *ports, int max);

/* -4/-6 and -L/-D of the tools on bpf/tk_sock.bpf.h's filters. */
struct tk_sock_opts {
	int ip;   /* 4, 6, or 0 for both */
	int n_lports, n_dports;
	unsigned short lports[TK_SOCK_MAX_PORTS], dports[TK_SOCK_MAX_PORTS];
};

/* -4 or -6 (key '4' or '6') into *ip; a usage error when the other was
 * given too. */
void tk_ip_arg(int *ip, int key);

/* Parse key of those options into o: true when it was one of them. */
bool tk_sock_opts_parse(struct tk_sock_opts *o, int key, const char *arg);

/* Set obj's tk_sock_* filter variables from o (before load). */
int tk_sock_opts_apply(const struct tk_sock_opts *o, struct bpf_object *obj);

#endif
