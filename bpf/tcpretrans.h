/* tcpretrans: TCP retransmits (and tail loss probes), one event each,
 * or counts per flow (-c). */
#ifndef TCPRETRANS_H
#define TCPRETRANS_H

#include "tk_shared.h"
#include "tk_sock.h"

/* Flows counted at once (-c). */
#define TCPRETRANS_MAX_FLOWS 16384

enum tcpretrans_type {
	TCPRETRANS_RETRANSMIT = 1,   /* "R" */
	TCPRETRANS_LOSS_PROBE = 2,   /* "L": a tail loss probe attempt (-l) */
};

struct tcpretrans_event {
	unsigned long long ts;       /* ktime ns */
	struct tk_sock_id id;
	int pid;                     /* the task on the CPU (mostly 0: timers, softirq) */
	int state;                   /* the socket's TCP state */
	unsigned int seq;            /* the segment's first sequence number (-s) */
	unsigned int segs;           /* segments it carried (tcp_skb_pcount); 0 for "L" */
	int type;                    /* enum tcpretrans_type */
	int pad;
};

/* -c: per flow (key struct tk_sock_id). */
struct tcpretrans_count {
	unsigned long long retransmits;  /* retransmitted skbs */
	unsigned long long segments;     /* their segments, as TcpRetransSegs counts */
	unsigned long long loss_probes;  /* -l: tail loss probe attempts */
};

#endif
