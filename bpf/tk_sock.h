/* TCP sockets as the network tools report them (bpf/tk_sock.bpf.h). */
#ifndef TK_SOCK_H
#define TK_SOCK_H

/* Ports of -L and -D (tcpstates, tcplife). */
#define TK_SOCK_MAX_PORTS 64

/* A socket's addresses and ports. Addresses in network byte order, IPv4
 * in the first 4 bytes; ports in host order. */
struct tk_sock_id {
	unsigned char saddr[16];
	unsigned char daddr[16];
	unsigned short ip;      /* 4 or 6: the socket's family */
	unsigned short sport;   /* local port; 0 before one is picked */
	unsigned short dport;   /* remote port */
	unsigned short pad;
};

/* The task a socket is charged to (tcplife: the one that connected or
 * closed it). */
struct tk_sock_owner {
	int pid;
	int tid;
	unsigned int uid;
	unsigned int wanted;    /* it passed the task filter */
	char comm[16];
};

#endif
