/* tcpconnect: one event per active TCP connect, or counts per tuple. */
#ifndef TCPCONNECT_H
#define TCPCONNECT_H

#include "tk_shared.h"

/* Destination ports of -P. */
#define TCPCONNECT_MAX_PORTS 64
/* Threads inside tcp_v[46]_connect at once; on the tracepoint way,
 * connects between their SYN_SENT and their next state change. */
#define TCPCONNECT_MAX_THREADS 10240
/* Distinct (source, destination, port) tuples counted with -c. */
#define TCPCONNECT_MAX_TUPLES 10240

/* Bytes of a DNS reply's UDP payload kept for -d: EDNS's usual limit
 * (bcc keeps 512, which cuts many replies short). */
#define TCPCONNECT_DNS_MAX 1232

/* The events' first field, to tell them apart in the one buffer. */
enum tcpconnect_kind {
	TCPCONNECT_CONNECT = 1,
	TCPCONNECT_DNS = 2,
};

/* Addresses in network byte order: IPv4 in the first 4 bytes. */
struct tcpconnect_event {
	unsigned int kind;      /* TCPCONNECT_CONNECT */
	unsigned int pad;
	unsigned long long ts;  /* ktime ns */
	unsigned long long cgroup_id;  /* --print-cgroup; else 0 */
	unsigned char saddr[16];
	unsigned char daddr[16];
	int pid;
	int tid;
	unsigned int uid;
	unsigned short ip;      /* 4 or 6: tcp_v4_connect or tcp_v6_connect */
	unsigned short sport;   /* host byte order */
	unsigned short dport;   /* host byte order */
	char comm[TK_TASK_COMM_LEN];
};

/* -d: a UDP datagram from port 53 as it arrived (a DNS reply), parsed in
 * userspace. */
struct tcpconnect_dns {
	unsigned int kind;      /* TCPCONNECT_DNS */
	unsigned short len;     /* bytes in pkt */
	unsigned short wire_len;/* the UDP payload's length: more than len
				 * when it was cut (TCPCONNECT_DNS_MAX, or
				 * not in the packet's linear data) */
	unsigned long long ts;  /* ktime ns */
	unsigned char pkt[TCPCONNECT_DNS_MAX];
};

/* -c: the key of the counts map (zeroed, so padding compares too). */
struct tcpconnect_key {
	unsigned char saddr[16];
	unsigned char daddr[16];
	unsigned short ip;
	unsigned short dport;
	unsigned short sport;   /* -s: the local port; else 0 */
	unsigned short pad;
	unsigned long long cgroup_id;  /* --print-cgroup: counts per cgroup
					* too; else 0 */
};

#endif
