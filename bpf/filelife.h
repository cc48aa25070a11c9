/* filelife: one event per file deleted that was created while tracing. */
#ifndef FILELIFE_H
#define FILELIFE_H

#include "tk_shared.h"

/* Bytes of name per event, with its NUL: PATH_MAX (the tracepoint way
 * sends the path as unlink's caller passed it; userspace shows its last
 * component, bcc's FILE). */
#define FILELIFE_NAME_MAX 4096
/* Files created and not yet deleted that are remembered; the least
 * recently created are forgotten first (an LRU map). */
#define FILELIFE_BIRTHS 16384

#define FILELIFE_F_FAULT 1       /* the name could not be read */
#define FILELIFE_F_TRUNCATED 2   /* the name did not fit */

struct filelife_event {
	unsigned long long age_ns;     /* from creation to deletion */
	unsigned long long cgroup_id;  /* --print-cgroup; else 0 */
	int pid;                       /* the deleting task */
	int tid;
	int uid;
	unsigned int flags;            /* FILELIFE_F_* */
	unsigned int name_len;         /* bytes of name before its NUL */
	char comm[TK_TASK_COMM_LEN];
	char name[FILELIFE_NAME_MAX];
};

#endif
