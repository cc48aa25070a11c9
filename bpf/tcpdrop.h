/* tcpdrop: one event per IP packet the kernel dropped (skb:kfree_skb). */
#ifndef TCPDROP_H
#define TCPDROP_H

#include "tk_shared.h"

#define TCPDROP_STACK_DEPTH 127

/* tracekitd: (namespace, reason, protocol) counted at once. */
#define TCPDROP_MAX_COUNTS 4096

struct tcpdrop_count_key {
	unsigned int netns;            /* the device's network namespace
					* (inode), else its socket's; 0: none */
	int reason;                    /* as the event's */
	unsigned int proto;            /* IPPROTO_* from the IP header */
};

struct tcpdrop_event {
	unsigned long long ts;
	unsigned long long location;   /* the kernel code that freed it */
	unsigned char saddr[16];       /* from the packet's IP header */
	unsigned char daddr[16];
	int pid;                       /* the task on the CPU */
	int tid;
	unsigned int uid;
	int reason;                    /* enum skb_drop_reason; -1: the
					* kernel reports none (before 5.17) */
	unsigned short ip;             /* 4 or 6 */
	unsigned short proto;          /* IPPROTO_*: TCP, UDP, ICMP, ... */
	unsigned short sport;          /* TCP and UDP, else 0 */
	unsigned short dport;
	short state;                   /* TCP: its socket's state; -1: none */
	unsigned char tcpflags;
	unsigned char pad;
	int kstack_len;                /* bytes of kstack filled (-K) */
	char comm[TK_TASK_COMM_LEN];
	unsigned long long kstack[TCPDROP_STACK_DEPTH];
};

#endif
