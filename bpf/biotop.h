/* biotop: block I/O by process and disk, per interval. */
#ifndef BIOTOP_H
#define BIOTOP_H

#include "tk_block.h"

#define BIOTOP_MAX_KEYS 10240

/* A row: the submitter (pid 0, comm "?" when unknown), the disk, and
 * whether it wrote. */
struct biotop_key {
	unsigned int pid;
	unsigned int dev;        /* TK_KDEV */
	unsigned int write;      /* 1: write (REQ_OP_WRITE), 0: any other */
	char comm[TK_TASK_COMM_LEN];
};

struct biotop_val {
	unsigned long long bytes;
	unsigned long long ns;   /* latencies' sum, issue to completion */
	unsigned long long io;
};

#endif
