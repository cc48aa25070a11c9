/* execsnoop: one event per exec, successful or failed. */
#ifndef EXECSNOOP_H
#define EXECSNOOP_H

#include "tk_shared.h"

/* Bytes of argv captured per exec (all arguments, NUL-separated). */
#define EXEC_ARGS_BYTES 8192
/* A failed exec's arguments are read one by one from the caller. */
#define EXEC_FAILED_MAX_ARGS 64
#define EXEC_FAILED_ARG_BYTES 1024

#define EXEC_F_TRUNCATED 1   /* argv did not fit in EXEC_ARGS_BYTES */
#define EXEC_F_ARGV_FAULT 2  /* a failed exec's argv could not be read */

struct exec_event {
	int pid;
	int ppid;
	int uid;
	int ret;            /* 0, or -errno of a failed exec */
	int argc;           /* arguments the exec had */
	int cpu;            /* the CPU the exec returned on (-C) */
	unsigned int flags; /* EXEC_F_* */
	unsigned int args_size;
	unsigned long long cgroup_id;  /* --print-cgroup; else 0 */
	char comm[TK_TASK_COMM_LEN];
	char pcomm[TK_TASK_COMM_LEN];  /* the parent's, at exec time (-M) */
	char args[EXEC_ARGS_BYTES];  /* args_size bytes used */
};

#endif
