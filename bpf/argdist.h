/* argdist: probe plans and the keys its counts are kept under, seen by
 * BPF and userspace. Plain C types only. */
#ifndef ARGDIST_H
#define ARGDIST_H

#include "tk_plan.h"
#include "tk_shared.h"

/* Specifiers in one run, each a slot as trace's probes are. */
#define ARGDIST_SLOTS 8
#define ARGDIST_VALUES 8        /* EXPRs of one -C */
#define ARGDIST_KEY_DATA 256    /* their bytes: 8 per integer, TK_PLAN_STR_LEN
				 * per string */
#define ARGDIST_HIST_SLOTS 65   /* -H: log2 buckets of a 64-bit value */

struct argdist_plan {
	struct tk_plan_code code;
	int nvalues;
	int value_src[ARGDIST_VALUES];     /* tk_plan_value()'s src */
	unsigned short value_off[ARGDIST_VALUES];  /* in argdist_key.data */
	unsigned char value_str[ARGDIST_VALUES];   /* a string */
	unsigned char hist;                /* -H: data holds value 0's log2
					    * bucket */
	unsigned char pad[3];
};

/* A count's key: the slot, then its values (or -H's bucket), every byte
 * set (strings zero-padded), so equal values are one key. */
struct argdist_key {
	unsigned int slot;
	unsigned int faults;               /* bit i: value i could not be read */
	unsigned long long cgroup_id;      /* --print-cgroup; else 0 */
	unsigned char data[ARGDIST_KEY_DATA];
};

#endif
