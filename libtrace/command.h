/* TOOL [OPTIONS] -- COMMAND [ARG...]: run COMMAND once every probe is
 * attached, trace it and all its descendants (a transient cgroup v2
 * child that the task filter follows), end with it and exit with its
 * status. The options that go with it (-a, --run-as) are parsed in
 * opts.c. */
#ifndef TK_COMMAND_H
#define TK_COMMAND_H

#include <stdbool.h>

/* After parsing, before load: find COMMAND's executable (one line and
 * exit 127 or 126, as a shell, when there is none), and unless --all put
 * a transient cgroup in the task filter (tk_opts.cgroup_path). COMMAND
 * starts in that cgroup once everything is attached (tk_ready); its
 * first traced act is its execve. */
void tk_command_prepare(void);

/* True when a COMMAND was started and has ended. */
bool tk_command_ended(void);

/* The end of a tool's main: COMMAND's exit status (128+N when a signal N
 * killed it), or 0 when there was no COMMAND or it still runs. When a
 * signal ended the tool, COMMAND got it too: wait for COMMAND first (a
 * second signal ends the tool at once). Removes
 * the transient cgroup; descendants that outlive COMMAND (daemons) go
 * back to the tool's own cgroup and keep running, untraced. */
int tk_exit_status(void);

#endif
