/* tcptracer: TCP connects, accepts and closes. */
#ifndef TCPTRACER_H
#define TCPTRACER_H

#include "tk_shared.h"
#include "tk_sock.h"

/* Connects in flight (SYN sent, not yet established) followed at once. */
#define TCPTRACER_MAX_SOCKS 65536

enum tcptracer_type {
	TCPTRACER_CONNECT = 1,
	TCPTRACER_ACCEPT = 2,
	TCPTRACER_CLOSE = 3,
};

struct tcptracer_event {
	unsigned long long ts;        /* ktime ns */
	struct tk_sock_id id;
	struct tk_sock_owner who;
	unsigned int netns;           /* the socket's network namespace inode */
	unsigned int type;            /* enum tcptracer_type */
};

#endif
