/* biopattern: sequential and random block I/O per disk. */
#ifndef BIOPATTERN_H
#define BIOPATTERN_H

#include "tk_block.h"

#define BIOPATTERN_MAX_DISKS 1024

/* Per disk (key: TK_KDEV), per interval. */
struct biopattern_counts {
	unsigned long long sequential;
	unsigned long long random;
	unsigned long long bytes;
};

#endif
