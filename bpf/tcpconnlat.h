/* tcpconnlat: one event per active TCP connect that got established. */
#ifndef TCPCONNLAT_H
#define TCPCONNLAT_H

#include "tk_shared.h"
#include "tk_sock.h"

/* Connects in flight followed at once. */
#define TCPCONNLAT_MAX_SOCKS 65536

/* What a connect's SYN_SENT left for its ESTABLISHED. */
struct tcpconnlat_start {
	unsigned long long ts;        /* ktime ns of the change to SYN_SENT */
	struct tk_sock_owner who;     /* the connecting task */
};

struct tcpconnlat_event {
	unsigned long long ts;        /* ktime ns of the change to ESTABLISHED */
	unsigned long long lat_ns;    /* from SYN_SENT to ESTABLISHED */
	struct tk_sock_id id;
	struct tk_sock_owner who;
};

#endif
