/* biostacks: block I/O latency histograms per submitting kernel stack. */
#ifndef BIOSTACKS_H
#define BIOSTACKS_H

#include "tk_block.h"

#define BIOSTACKS_SLOTS 32
#define BIOSTACKS_MAX_KEYS 4096

/* A histogram's key: the submitter (pid 0, comm "?" and stack -1 when
 * unknown), its kernel stack and the disk. */
struct biostacks_key {
	unsigned int pid;
	int kstack;
	unsigned int dev;
	unsigned int pad;
	char comm[TK_TASK_COMM_LEN];
};

struct biostacks_hist {
	unsigned long long slots[BIOSTACKS_SLOTS];
};

#endif
