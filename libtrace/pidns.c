#include "pidns.h"

#include <sys/stat.h>

#include "setup.h"

/* The initial PID namespace's inode number (PROC_PID_INIT_INO). */
#define TK_PID_INIT_INO 0xEFFFFFFCU

void tk_pidns_detect(struct tk_filter *f)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st) || st.st_ino == TK_PID_INIT_INO)
		return;
	f->pidns_dev = st.st_dev;
	f->pidns_ino = st.st_ino;
	tk_info("in PID namespace %llu: its PIDs are shown; tasks outside it as 0",
		(unsigned long long)st.st_ino);
}
