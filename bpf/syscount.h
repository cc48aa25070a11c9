/* syscount: per-syscall or per-process counters, read by userspace. */
#ifndef SYSCOUNT_H
#define SYSCOUNT_H

#include "tk_shared.h"

/* Slots of the per-syscall array: one per number below SYSCOUNT_NONE;
 * SYSCOUNT_NONE for id -1 (at sys_exit: rt_sigreturn, which resets the
 * number, or a syscall that seccomp or ptrace skipped); SYSCOUNT_OTHER
 * for every other id. */
#define SYSCOUNT_SLOTS 1024
#define SYSCOUNT_NONE (SYSCOUNT_SLOTS - 2)
#define SYSCOUNT_OTHER (SYSCOUNT_SLOTS - 1)
/* Keys of by_key counted at once: processes (-P), or (cgroup, syscall)
 * pairs (--print-cgroup). */
#define SYSCOUNT_MAX_KEYS 10240
/* Threads inside a syscall at once with -L (kernels without task storage). */
#define SYSCOUNT_MAX_THREADS 16384

struct syscount_val {
	unsigned long long count;
	unsigned long long errors;    /* returns of -4095..-1 */
	unsigned long long total_ns;  /* -L: time inside the syscalls */
};

/* The key of by_key, the map of -P and of --print-cgroup: a tgid (-P)
 * or a syscall slot, and the cgroup v2 id of the task (0 without
 * --print-cgroup, so that -P alone has one key per process). */
struct syscount_key {
	unsigned long long cgroup_id;
	unsigned int id;
	unsigned int pad;   /* 0: hashed with the rest */
};

/* A by_key value: comm (-P) as of the key's first syscall counted. */
struct syscount_proc_val {
	struct syscount_val v;
	char comm[TK_TASK_COMM_LEN];
};

#endif
