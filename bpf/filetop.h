/* filetop: reads and writes per thread and file, summed in the kernel. */
#ifndef FILETOP_H
#define FILETOP_H

#include "tk_shared.h"

/* Bytes of a file's name kept per key: the kernel's DNAME_INLINE_LEN,
 * as bcc (a longer name is cut, and name_len says so). */
#define FILETOP_NAME_LEN 32
#define FILETOP_MAX_ENTRIES 10240

struct filetop_key {
	unsigned long long ino;
	unsigned int dev;
	unsigned int rdev;
	int pid;
	int tid;
	unsigned int name_len;        /* the whole name's length */
	char comm[TK_TASK_COMM_LEN];
	char name[FILETOP_NAME_LEN];  /* not NUL-terminated when full */
	char type;                    /* 'R' regular, 'S' socket, 'O' other */
	char pad[7];
};

struct filetop_counts {
	unsigned long long reads;
	unsigned long long writes;
	unsigned long long rbytes;
	unsigned long long wbytes;
};

#endif
