/* tcprtt: a histogram of TCP's smoothed RTT, sampled per segment
 * received, for all flows or per local or remote address. */
#ifndef TCPRTT_H
#define TCPRTT_H

#include "tk_shared.h"

#define TCPRTT_SLOTS 32
#define TCPRTT_MAX_KEYS 4096

enum tcprtt_by { TCPRTT_ALL = 0, TCPRTT_BY_LADDR = 1, TCPRTT_BY_RADDR = 2 };

/* All zero without -b/-B. */
struct tcprtt_key {
	unsigned char addr[16];     /* IPv4 in the first 4 bytes */
	unsigned short ip;          /* 4 or 6; 0 without -b/-B */
	unsigned short pad;
};

struct tcprtt_hist {
	unsigned long long slots[TCPRTT_SLOTS];
	unsigned long long sum;     /* of the samples, in the unit (-e) */
	unsigned long long count;
};

#endif
