/* gethostlatency: host name lookups and their latency. */
#ifndef GETHOSTLATENCY_H
#define GETHOSTLATENCY_H

#include "tk_shared.h"

#define GETHOSTLATENCY_HOST_LEN 256   /* a DNS name is at most 253 bytes */

struct gethostlatency_event {
	unsigned long long ts;        /* ktime ns of the return */
	unsigned long long lat_ns;
	int pid;
	int tid;
	unsigned int uid;
	int func;                     /* GETHOSTLATENCY_* */
	int host_len;                 /* with its NUL; <= 0: unreadable */
	char comm[TK_TASK_COMM_LEN];
	char host[GETHOSTLATENCY_HOST_LEN];
};

enum {
	GETHOSTLATENCY_GETADDRINFO,
	GETHOSTLATENCY_GETHOSTBYNAME,
	GETHOSTLATENCY_GETHOSTBYNAME2,
};

#endif
