/* tcpsynbl: SYN backlog histograms per listening port. */
#ifndef TCPSYNBL_H
#define TCPSYNBL_H

#include "tk_shared.h"

#define TCPSYNBL_SLOTS 20          /* log2 of sk_ack_backlog (a u32) */
#define TCPSYNBL_MAX_KEYS 10240

struct tcpsynbl_key {
	unsigned int netns;        /* the listener's network namespace (inode) */
	unsigned int backlog_max;  /* its sk_max_ack_backlog: listen()'s backlog */
	unsigned short port;       /* its local port */
	unsigned short ip;         /* 4 or 6: its family */
	unsigned int pad;
};

struct tcpsynbl_hist {
	unsigned long long slots[TCPSYNBL_SLOTS];
};

#endif
