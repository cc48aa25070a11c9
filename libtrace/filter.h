/* The task filter of every tool (bpf/tk_filter.bpf.h): the parts that live
 * in maps rather than rodata, set up around load. */
#ifndef TK_FILTER_H
#define TK_FILTER_H

#include <bpf/libbpf.h>
#include <stdbool.h>

/* Does a task filter apply (-p, --tid, -u, -c, -n, --ppid, -- COMMAND)?
 * The block tools then keep only the requests of wanted submitters; the
 * tools of events no task makes (netqtop, tcprtt, ...) refuse them. */
bool tk_filter_any(void);

/* Parse a -p / --tid value: one id, or a comma-separated list as bcc's
 * profile and offcputime take it ("1,2,3"). which: 'p' process, 't'
 * thread. Usage error (exit 2) on a bad value. */
void tk_filter_set_ids(int which, const char *option, const char *arg);

/* The one process uprobes should be attached to: the -p process, or the
 * --tid thread's; -1 (every process) when there is none or a list. */
int tk_filter_attach_pid(void);

/* -- COMMAND followed by fork (tk_opts.filter.follow): put pid in the
 * followed set, before it runs. 0 or -errno. */
int tk_filter_follow_pid(int pid);

/* Before load: size the id maps for the lists given; the fork follower's
 * programs and map only when following. */
int tk_filter_prepare(struct bpf_object *obj);

/* After load: the --cgroup directory into tk_cgroup, the lists into
 * tk_filter_tgids / tk_filter_tids. */
int tk_filter_after_load(struct bpf_object *obj);

#endif
