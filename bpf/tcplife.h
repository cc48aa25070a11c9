/* tcplife: one event per TCP connection, at its close. */
#ifndef TCPLIFE_H
#define TCPLIFE_H

#include "tk_shared.h"
#include "tk_sock.h"

/* Connections followed at once. */
#define TCPLIFE_MAX_SOCKS 65536

/* The birth map's value: when the connection started, and whether
 * bytes_acked counts its SYN (tcplife.bpf.c). */
struct tcplife_birth {
	unsigned long long ns;
	unsigned long long syn_acked;
};

struct tcplife_event {
	unsigned long long ts;        /* ktime ns of the close */
	unsigned long long span_ns;   /* from the first change seen */
	unsigned long long tx_bytes;  /* data sent and acked */
	unsigned long long rx_bytes;  /* data received */
	struct tk_sock_id id;
	struct tk_sock_owner who;     /* pid 0: no task known */
};

#endif
