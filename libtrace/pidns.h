/* The tool's own PID namespace, for the BPF side (bpf/tk_pidns.bpf.h):
 * a tool started in a container or under unshare --pid shows and filters
 * its namespace's PIDs. */
#ifndef TK_PIDNS_H
#define TK_PIDNS_H

#include "tk_shared.h"

/* Fill f's pidns_* fields; they stay 0 in the initial namespace. */
void tk_pidns_detect(struct tk_filter *f);

#endif
