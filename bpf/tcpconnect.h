/* tcpconnect: one event per active TCP connect, or counts per tuple. */
#ifndef TCPCONNECT_H
#define TCPCONNECT_H

#include "tk_shared.h"

/* Destination ports of -P. */
#define TCPCONNECT_MAX_PORTS 64
/* Threads inside tcp_v[46]_connect at once. */
#define TCPCONNECT_MAX_THREADS 10240
/* Distinct (source, destination, port) tuples counted with -c. */
#define TCPCONNECT_MAX_TUPLES 10240

/* Addresses in network byte order: IPv4 in the first 4 bytes. */
struct tcpconnect_event {
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

/* -c: the key of the counts map (zeroed, so padding compares too). */
struct tcpconnect_key {
	unsigned char saddr[16];
	unsigned char daddr[16];
	unsigned short ip;
	unsigned short dport;
};

#endif
