/* bitesize: block I/O size histograms per process name. */
#ifndef BITESIZE_H
#define BITESIZE_H

#include "tk_block.h"

#define BITESIZE_SLOTS 20        /* log2 KiB: the last holds 512 MiB and up */
#define BITESIZE_MAX_KEYS 10240

/* A histogram's key: the submitter's comm ("?" when unknown), as bcc's. */
struct bitesize_key {
	char comm[TK_TASK_COMM_LEN];
};

struct bitesize_hist {
	unsigned long long slots[BITESIZE_SLOTS];
};

#endif
