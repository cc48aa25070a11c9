/* Attaching one program to many functions: the kernel's multi-links
 * (kprobe.multi since 5.18, uprobe.multi since 6.6) where it has them,
 * found by trying, and BPF cookies (5.15), by which a program tells the
 * functions apart. tk_load (load.c) uses these for a family pointed at
 * several functions (tk_set_target_multi); a tool reads
 * tk_attach_cookies() to know whether bpf_get_attach_cookie() works. */
#ifndef TK_MULTIATTACH_H
#define TK_MULTIATTACH_H

#include <bpf/libbpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Probed once each (a tiny program and a link that must fail in the way
 * only a kernel with the feature fails). */
bool tk_kprobe_multi_supported(void);
bool tk_uprobe_multi_supported(void);
bool tk_uprobe_session_supported(void);
bool tk_attach_cookies(void);

/* The expected attach type a uprobe.multi program must be loaded with
 * (BPF_TRACE_UPROBE_MULTI; libbpf 1.1 does not know it). */
#define TK_TRACE_UPROBE_MULTI 48

/* A uprobe.multi link of prog (loaded with TK_TRACE_UPROBE_MULTI) on
 * offsets of binary, cookie i for offsets[i]; pid -1 for every process.
 * Returns the link's fd, or -errno. */
int tk_uprobe_multi_link(struct bpf_program *prog, const char *binary,
			 const uint64_t *offsets, const uint64_t *cookies,
			 size_t n, pid_t pid, bool retprobe);

/* A uprobe session (6.13): one program run at a function's entry and,
 * unless that run returned nonzero, at its return
 * (bpf_session_is_return() tells which). Loaded with
 * TK_TRACE_UPROBE_SESSION (BPF_TRACE_UPROBE_SESSION). A call whose
 * entry declines its return costs one trap instead of two. As
 * tk_uprobe_multi_link otherwise. */
#define TK_TRACE_UPROBE_SESSION 57
int tk_uprobe_session_link(struct bpf_program *prog, const char *binary,
			   const uint64_t *offsets, const uint64_t *cookies,
			   size_t n, pid_t pid);

/* For an object that includes bpf/tk_probe_index.bpf.h and attaches one
 * program to the functions (or tracepoints) of l, from its configure
 * callback: its hits tell their index by BPF cookie when the kernel has
 * cookies, else by key (l's addr: kernel function addresses; l sorted
 * by them, see tk_func_list_sort_addr). User functions and tracepoints
 * have no key: without cookies they are told apart by nothing
 * (tk_probe_index_plan refuses that). 0 or -errno. */
struct tk_func_list;
int tk_probe_index_set(struct bpf_object *obj, const struct tk_func_list *l);

/* Before tk_set_target_multi / tk_set_target_tps, for a tool whose hits
 * must tell which of l's functions (tracepoints: tracepoints) they are:
 * without BPF cookies, kernel functions get their addresses, l sorted
 * by them; several user functions (a hit's address differs in each
 * process, ASLR) or tracepoints (BPF never sees the event id: the
 * kernel overwrites it with the pt_regs pointer) cannot be told apart:
 * exit 1 with one line saying so (what: the option or tool that needs
 * them, "-F").
 * Nothing to do with cookies or one function. */
void tk_probe_index_plan(struct tk_func_list *l, bool tracepoints,
			 const char *what);

/* One probe per function opens a perf event (a file) for each: raise
 * the soft RLIMIT_NOFILE to the hard one, once. */
void tk_raise_nofile(void);

#endif
