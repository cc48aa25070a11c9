/* Tools on syscall tracepoints (opensnoop, mountsnoop, statsnoop,
 * syncsnoop) trace a syscall with SYSCALL_enter on
 * syscalls:sys_enter_SYSCALL and an exit program on sys_exit_SYSCALL:
 * SYSCALL_exit, or one program for a family of syscalls whose exit
 * program is large (tk_syscall_exits_target). A kernel older than the
 * syscall has neither tracepoint, and an attach would fail the whole
 * tool: such a syscall is left out instead. */
#ifndef TK_SYSCALLTP_H
#define TK_SYSCALLTP_H

#include <stdbool.h>
#include <stddef.h>

struct bpf_object;

/* From a configure callback: when the kernel has no sys_enter_SYSCALL
 * tracepoint, do not load SYSCALL_enter and SYSCALL_exit and say so
 * with -v ("SYSCALL(): no syscalls:sys_enter_SYSCALL tracepoint on this
 * kernel; not traced"). Returns whether the kernel has it. */
bool tk_syscall_tp_or_off(struct bpf_object *obj, const char *syscall);

/* Before tk_load: point the classic tracepoint family FAMILY (one
 * program, FAMILY_tp, SEC("tp")) at syscalls:sys_exit_NAME for each of
 * the n syscalls the kernel has (all of them when tracefs cannot be
 * read: the attach then fails and tk_load says why). Every sys_exit_*
 * record is alike, so one program serves them all, and the verifier
 * checks it once, where a program per syscall is checked once each.
 * label names them in -v and --dry-run. */
void tk_syscall_exits_target(const char *family, const char *const *syscalls, size_t n,
			     const char *label);

#endif
