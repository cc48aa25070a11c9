/* tcptop: TCP bytes sent and received per process and connection. */
#ifndef TCPTOP_H
#define TCPTOP_H

#include "tk_shared.h"
#include "tk_sock.h"

#define TCPTOP_MAX_ENTRIES 10240

struct tcptop_key {
	struct tk_sock_id id;
	int pid;
	char comm[TK_TASK_COMM_LEN];
};

struct tcptop_bytes {
	unsigned long long sent;
	unsigned long long received;
};

#endif
