/* biolatency: block I/O latency histograms. */
#ifndef BIOLATENCY_H
#define BIOLATENCY_H

#include "tk_block.h"

/* log2 buckets (tk_log2_slot); the last also holds all above it. */
#define BIOLAT_SLOTS 32
#define BIOLAT_MAX_KEYS 1024

/* A histogram's key: the disk with -D, the operation and flags with -F
 * (TK_BIO_*), else 0. */
struct biolat_key {
	unsigned int dev;
	unsigned int flags;
};

struct biolat_hist {
	unsigned long long slots[BIOLAT_SLOTS];
	unsigned long long count;
	unsigned long long sum_ns; /* of the latencies, in ns */
	unsigned long long bytes; /* tracekitd's block collector only */
};

#endif
