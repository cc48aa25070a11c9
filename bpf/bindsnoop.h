/* bindsnoop: bind() calls on IPv4 and IPv6 sockets. */
#ifndef BINDSNOOP_H
#define BINDSNOOP_H

#include "tk_shared.h"
#include "tk_sock.h"

/* bcc's OPTS letters, in this bit order: "FTNRr". */
#define BINDSNOOP_FREEBIND     (1 << 0)   /* IP_FREEBIND */
#define BINDSNOOP_TRANSPARENT  (1 << 1)   /* IP_TRANSPARENT */
#define BINDSNOOP_NO_PORT      (1 << 2)   /* IP_BIND_ADDRESS_NO_PORT */
#define BINDSNOOP_REUSEADDR    (1 << 3)   /* SO_REUSEADDR */
#define BINDSNOOP_REUSEPORT    (1 << 4)   /* SO_REUSEPORT */

struct bindsnoop_event {
	unsigned long long ts;        /* ktime ns of the call's return */
	struct tk_sock_id id;         /* saddr, sport: the address bound */
	struct tk_sock_owner who;
	int ret;                      /* 0 or -errno */
	int bound_dev_if;             /* SO_BINDTODEVICE's ifindex, or 0 */
	unsigned short protocol;      /* IPPROTO_* */
	unsigned short opts;          /* BINDSNOOP_* */
	unsigned int netns;
};

#endif
