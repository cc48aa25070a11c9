/* solisten: listen() calls. */
#ifndef SOLISTEN_H
#define SOLISTEN_H

#include "tk_shared.h"
#include "tk_sock.h"

struct solisten_event {
	unsigned long long ts;        /* ktime ns of the call's return */
	struct tk_sock_id id;         /* saddr, sport: the listening address */
	struct tk_sock_owner who;
	int backlog;                  /* as the caller passed it */
	int ret;                      /* 0 or -errno */
	unsigned int netns;
	unsigned short type;          /* SOCK_STREAM 1, SOCK_DGRAM 2, ... */
	unsigned short pad;
};

#endif
