/* biosnoop: one event per block I/O request, at its completion. */
#ifndef BIOSNOOP_H
#define BIOSNOOP_H

#include "tk_block.h"

/* tk_bio_start.pattern */
#define BIO_PATTERN_NONE 0
#define BIO_PATTERN_SEQ 1      /* -P: starts where the disk's last I/O ended */
#define BIO_PATTERN_RANDOM 2

struct bio_event {
	struct tk_bio_start s;     /* as issued */
	unsigned long long done_ns; /* bpf_ktime_get_ns() at completion */
	int error;                 /* blk_status_t; 0: success */
	unsigned int pad;
};

#endif
