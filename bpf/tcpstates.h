/* tcpstates: one event per TCP state change. */
#ifndef TCPSTATES_H
#define TCPSTATES_H

#include "tk_shared.h"
#include "tk_sock.h"

/* Sockets whose last change is remembered at once. */
#define TCPSTATES_MAX_SOCKS 65536

/* tracekitd: (namespace, old state, new state) counted at once. */
#define TCPSTATES_MAX_COUNTS 4096

struct tcpstates_count_key {
	unsigned int netns;          /* the socket's network namespace (inode) */
	unsigned short oldstate;
	unsigned short newstate;
};

struct tcpstates_event {
	unsigned long long ts;       /* ktime ns of the change */
	unsigned long long prev_ts;  /* of the socket's change before; 0:
				      * none seen (its first, or the tool
				      * started later) */
	unsigned long long skaddr;
	struct tk_sock_id id;
	int pid;                     /* the task on the CPU (C-PID) */
	int tid;
	unsigned int uid;
	int oldstate;
	int newstate;
	char comm[TK_TASK_COMM_LEN];
};

#endif
