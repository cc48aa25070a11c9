/* oomkill: one event per task the OOM killer picks. */
#ifndef OOMKILL_H
#define OOMKILL_H

#include "tk_shared.h"

struct oom_event {
	unsigned long long rss_pages;   /* the victim's file + anon + shmem;
					 * ~0ULL where unknown (before 6.8) */
	unsigned long long memcg_id;    /* the victim's memory cgroup (kernfs
					 * id); 0 where unknown */
	int memcg_v2;                   /* that cgroup is on cgroup v2 */
	int pid;                        /* the trigger: the task that ran the
					 * OOM killer (it allocated) */
	int tid;
	int uid;
	int victim_pid;                 /* its process (thread group) */
	int victim_tid;
	char comm[TK_TASK_COMM_LEN];
	char victim_comm[TK_TASK_COMM_LEN];   /* "" where unknown */
};

#endif
