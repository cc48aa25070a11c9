/* mountsnoop: one event per mount-family syscall, at its exit, with its
 * arguments (strings read from the caller) and its result. */
#ifndef MOUNTSNOOP_H
#define MOUNTSNOOP_H

#include "tk_shared.h"

/* Bytes kept of each string argument, with its NUL: PAGE_SIZE, what the
 * kernel copies of mount(2)'s type and data (and PATH_MAX, of a path). */
#define MOUNT_STR_MAX 4096
/* String arguments of one call, at most (mount: source, target, type,
 * data). */
#define MOUNT_STRS 4

/* The calls, in the order of userspace's table (tools/mountsnoop.c). */
enum mount_op {
	MOUNT_OP_MOUNT, MOUNT_OP_UMOUNT, MOUNT_OP_FSOPEN, MOUNT_OP_FSCONFIG,
	MOUNT_OP_FSMOUNT, MOUNT_OP_MOVE_MOUNT, MOUNT_OP_OPEN_TREE,
	MOUNT_OP_FSPICK, MOUNT_OP_MOUNT_SETATTR, MOUNT_OP_MAX,
};

/* str_flags, per string slot i: */
#define MOUNT_STR_CUT(i) (1u << (2 * (i)))     /* longer than MOUNT_STR_MAX */
#define MOUNT_STR_FAULT(i) (2u << (2 * (i)))   /* pointer not readable */

struct mount_event {
	unsigned long long args[5];   /* the syscall's arguments as passed */
	unsigned long long attr[4];   /* mount_setattr: struct mount_attr
				       * (attr_set, attr_clr, propagation,
				       * userns_fd), read at exit */
	unsigned long long cgroup_id; /* --print-cgroup; else 0 */
	int pid;
	int tid;
	int uid;
	int ppid;
	int ret;                      /* the syscall's return, or -errno */
	unsigned int mnt_ns;          /* the caller's mount namespace inode */
	unsigned int op;              /* enum mount_op */
	unsigned int nstr;            /* string slots sent */
	unsigned int str_flags;       /* MOUNT_STR_* */
	unsigned int attr_read;       /* attr holds the caller's struct */
	unsigned int str_len[MOUNT_STRS];  /* bytes before the NUL */
	char comm[TK_TASK_COMM_LEN];
	char pcomm[TK_TASK_COMM_LEN]; /* the parent's (-P) */
	char str[MOUNT_STRS][MOUNT_STR_MAX];
};

#endif
