/* Loading a tool that can see its events two ways: at kernel functions
 * (fentry, else kprobe: the natural probes, which see every caller) or
 * at tracepoints (syscall tracepoints: they run where a kernel has no
 * kprobes and refuses fentry, and see less).
 *
 * The tool's BPF object names the programs of the first way "kf_..." and
 * those of the second "tp_..."; each load attempt autoloads one set.
 * The kernel-function way is tried first (tk_try_load); when the kernel
 * refuses it, -v says why and what the tracepoint way cannot see, and
 * the tracepoints are loaded (tk_load: exit 1 with one line when they
 * fail too). TRACEKIT_ATTACH naming only tracepoint methods (tp_btf,
 * raw_tp, tp) starts at the tracepoint way, naming only kernel-function
 * methods keeps to the kernel-function way: tests run each where the
 * kernel has it. */
#ifndef TK_KFUNC_OR_TP_H
#define TK_KFUNC_OR_TP_H

#include "bpf.h"

enum tk_way { TK_WAY_KFUNC, TK_WAY_TP };

/* Load as above. *way is set before each attempt (the tool's configure
 * reads it) and says on return which way was loaded. tp_blind: what the
 * tracepoint way cannot see, for -v. */
void *tk_load_kfunc_or_tp(const struct tk_skel_ops *ops, tk_configure_fn configure,
			  void *ctx, enum tk_way *way, const char *tp_blind);

/* The same for a tool whose tracepoint way is not syscall tracepoints:
 * tp_name names its tracepoints for -v ("tracepoints (capability:cap_capable)"). */
void *tk_load_kfunc_or_named_tp(const struct tk_skel_ops *ops, tk_configure_fn configure,
				void *ctx, enum tk_way *way, const char *tp_name,
				const char *tp_blind);

/* The same with the tracepoint way first, for a tool whose tracepoints
 * see what it reports (tcpconnect on sock:inet_sock_set_state): the
 * kernel-function way where the tracepoints are refused, or where
 * TRACEKIT_ATTACH names a kernel-function method. tp_blind: what the
 * tracepoint way cannot see, for -v. */
void *tk_load_tp_or_kfunc(const struct tk_skel_ops *ops, tk_configure_fn configure,
			  void *ctx, enum tk_way *way, const char *tp_blind);

/* The same for a program that runs several tracers (tracekitd): where
 * the last way fails, NULL with the one-line cause in err (tk_try_load). */
void *tk_try_load_kfunc_or_tp(const struct tk_skel_ops *ops, tk_configure_fn configure,
			      void *ctx, enum tk_way *way, const char *tp_blind,
			      char *err, size_t errlen);

/* The same, tracepoints first (tk_load_tp_or_kfunc): tracekitd's tcpconnect. */
void *tk_try_load_tp_or_kfunc(const struct tk_skel_ops *ops, tk_configure_fn configure,
			      void *ctx, enum tk_way *way, const char *tp_blind,
			      char *err, size_t errlen);

#endif
