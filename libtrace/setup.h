/* Process setup every tool shares: its name in messages, libbpf log
 * routing, signals, output buffering, run time limit, tracefs. */
#ifndef TK_SETUP_H
#define TK_SETUP_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

void tk_set_tool_name(const char *name);
const char *tk_tool_name(void);

/* After tk_parse_args: route libbpf messages to stderr only with -v,
 * end on SIGINT/SIGTERM (tk_exiting), line-buffer stdout when it is a
 * pipe or socket, and start the clock that tk_ready starts again. */
void tk_init(void);

/* True once a tool should print its final output and exit: a signal came
 * or --duration passed. */
bool tk_exiting(void);
/* True when SIGINT or SIGTERM ended the tool. */
bool tk_signalled(void);
/* Make tk_exiting() true from a signal handler (a traced COMMAND ended). */
void tk_request_stop(void);
/* SIGINT and SIGTERM sent to the tool by a process (kill, not the
 * terminal) go to pid too: the traced COMMAND. */
void tk_forward_signals_to(pid_t pid);
/* fn runs at the end of tk_ready (starting a traced COMMAND). */
void tk_on_ready(void (*fn)(void));

/* A daemon's SIGHUP: after tk_init, tk_catch_reload makes SIGHUP set a
 * flag (and cut a blocking poll short) instead of ending the process;
 * tk_reload_requested returns it once and clears it. */
void tk_catch_reload(void);
bool tk_reload_requested(void);

/* The integer in a /proc/sys file (kernel.perf_event_max_stack, ...), or
 * dflt when it cannot be read. */
long tk_read_sysctl(const char *path, long dflt);

/* Milliseconds until --duration ends (or max_ms, whichever is less). */
int tk_wait_ms(int max_ms);

/* Seconds since tracing began (tk_ready; before it, since tk_init), on
 * the monotonic clock: --duration and intervals count from there. */
double tk_elapsed(void);

/* Runtime failure: "tool: MESSAGE" on stderr, exit 1. */
void tk_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* While trap is set, tk_fail writes its message (without the tool name)
 * into msg and longjmps to trap instead of exiting; it clears the trap
 * first. A daemon runs several tracers, and one that cannot start must
 * not end the others (see tk_try_load). NULL clears it. */
void tk_fail_trap(jmp_buf *trap, char *msg, size_t size);

/* Non-fatal message: "tool: MESSAGE" on stderr. Into the journal (stderr
 * is JOURNAL_STREAM) "<N>MESSAGE" instead, N its syslog priority: 3 for
 * tk_fail, 4 tk_warn, 5 tk_notice, 6 tk_info. */
void tk_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A notable event of normal operation (a daemon started, reloaded,
 * stopped): printed as tk_warn prints, at notice priority. */
void tk_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Verbose message (-v only): "tool: MESSAGE" on stderr. */
void tk_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Make sure tracefs is mounted (classic tracepoints need its event ids);
 * mounts it at /sys/kernel/tracing when missing. 0 or -errno. */
int tk_ensure_tracefs(void);

/* The path of tracefs's file NAME (available_filter_functions, ...) in
 * buf, mounting tracefs when missing; NULL when it cannot be read. */
const char *tk_tracefs_file(const char *name, char *buf, size_t size);

/* True when tracefs lists the tracepoint CATEGORY:NAME (tracefs must be
 * mounted: see tk_ensure_tracefs). Also true when tracefs cannot be
 * found, so that tk_load reports the real cause. */
bool tk_tracepoint_exists(const char *category, const char *name);

/* Is CATEGORY:NAME a tracepoint of this kernel, for a tool that takes
 * one at run time? tracefs (mounted when missing) lists every tracepoint
 * with a trace event; a bare one is known by its BTF (btf_trace_NAME),
 * within a category tracefs has. Without tracefs, BTF alone decides and
 * a miss is TK_TP_NO_CATEGORY. */
enum tk_tp_lookup { TK_TP_FOUND, TK_TP_NO_CATEGORY, TK_TP_NO_NAME };
enum tk_tp_lookup tk_tracepoint_lookup(const char *category, const char *name);

/* Call once everything is attached. Tells a person on a terminal that
 * tracing runs (stderr), and when TRACEKIT_READY_FD=N is set, writes
 * "ready\n" to fd N and closes it: tests and scripts wait on that instead
 * of sleeping. */
void tk_ready(void);

/* Sleep up to ms, returning early when tk_exiting(). */
void tk_sleep_ms(int ms);

/* Sleep until tk_elapsed() reaches t (the next interval's end), or with
 * t < 0 until tk_exiting(): periodic tools' main loop. */
void tk_sleep_until(double t);

/* The summary tools' main loop: print(arg, seq) every -i/--interval
 * seconds, seq counting from 1 (without an interval, once at exit), until
 * Ctrl-C, -d/--duration or the -n/--count'th interval. */
void tk_print_intervals(void (*print)(void *arg, int seq), void *arg);

#endif
