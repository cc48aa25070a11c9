/* Tools on syscall tracepoints (opensnoop, mountsnoop, statsnoop,
 * syncsnoop) trace a syscall with two programs, SYSCALL_enter on
 * syscalls:sys_enter_SYSCALL and SYSCALL_exit on sys_exit_SYSCALL. A
 * kernel older than the syscall has neither tracepoint, and an attach
 * would fail the whole tool: such a pair is left out instead. */
#ifndef TK_SYSCALLTP_H
#define TK_SYSCALLTP_H

#include <stdbool.h>

struct bpf_object;

/* From a configure callback: when the kernel has no sys_enter_SYSCALL
 * tracepoint, do not load SYSCALL_enter and SYSCALL_exit and say so
 * with -v ("SYSCALL(): no syscalls:sys_enter_SYSCALL tracepoint on this
 * kernel; not traced"). Returns whether the kernel has it. */
bool tk_syscall_tp_or_off(struct bpf_object *obj, const char *syscall);

#endif
