/* Opening, loading and attaching a tool's BPF object, with the attach
 * method of each probe chosen at run time by trying the best one the
 * object offers and falling back when the kernel refuses it.
 *
 * A probe with several attach methods is written once per method, the
 * program name ending in "_" METHOD; the programs sharing the rest of the
 * name are one probe (a "family"). The chains, best first:
 *
 *   tracepoints        foo_tp_btf  -> foo_raw_tp -> foo_tp
 *   kernel functions   foo_fentry  -> foo_kprobe      (entry)
 *                      foo_fexit   -> foo_kretprobe   (return)
 *   user functions     foo_uprobe, foo_uretprobe      (no fallback)
 *   several kernel functions (tk_set_target_multi)
 *                      foo_kprobe_multi -> foo_kprobe (one per function)
 *                      foo_kretprobe_multi -> foo_kretprobe
 *   several user functions
 *                      foo_uprobe_multi -> foo_uprobe (one per function)
 *                      foo_uretprobe_multi -> foo_uretprobe
 *
 * A refusal at load time (the verifier, a missing program type or BTF)
 * or at attach time (no kprobes, no trampoline) demotes only the probe
 * that failed. When a chain runs out, the tool exits 1 with one line
 * naming what the kernel lacks and what would fix it.
 *
 * TRACEKIT_ATTACH=METHOD[,METHOD] starts each named chain at that method
 * (raw_tp, tp, kprobe, ...), so tests can run every method the kernel
 * supports. -v reports the method chosen for each probe; --dry-run
 * prints them on stdout and exits once everything is attached. */
#ifndef TK_BPF_H
#define TK_BPF_H

#include <bpf/libbpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct tk_skel_ops {
	void *(*open)(const struct bpf_object_open_opts *opts);
	int (*load)(void *skel);
	void (*destroy)(void *skel);
	struct bpf_object *(*obj)(void *skel);
};

/* Adapters from a bpftool skeleton named NAME (NAME__open_opts, ...). */
#define TK_SKEL_OPS(NAME)                                                    \
	static void *NAME##_tk_open(const struct bpf_object_open_opts *o)    \
	{ return NAME##__open_opts(o); }                                     \
	static int NAME##_tk_load(void *s)                                   \
	{ return NAME##__load((struct NAME *)s); }                           \
	static void NAME##_tk_destroy(void *s)                               \
	{ NAME##__destroy((struct NAME *)s); }                               \
	static struct bpf_object *NAME##_tk_obj(void *s)                     \
	{ return ((struct NAME *)s)->obj; }                                  \
	static const struct tk_skel_ops NAME##_ops = {                       \
		NAME##_tk_open, NAME##_tk_load, NAME##_tk_destroy,           \
		NAME##_tk_obj,                                               \
	}

/* The tool's settings for one load attempt: rodata, map sizes, which
 * programs to autoload. Called again for each attempt. Return 0, or
 * -errno to stop. */
typedef int (*tk_configure_fn)(void *skel, void *ctx);

/* Open, configure, load and attach the skeleton, falling back through
 * attach methods and the event transport. Returns the skeleton with
 * every program attached; exits 1 with one line naming the missing
 * kernel feature when nothing works. */
void *tk_load(const struct tk_skel_ops *ops, tk_configure_fn configure,
	      void *ctx);

/* Point the probe FAMILY (the program name without its method suffix) at
 * a function given at run time: a kernel function when binary is NULL
 * (fentry/fexit or kprobe/kretprobe), else FUNC in the ELF file binary
 * (uprobe/uretprobe; pid -1 for every process). Call before tk_load; the
 * strings must outlive it. */
void tk_set_target(const char *family, const char *binary, const char *func,
		   pid_t pid);

/* Point the probe FAMILY at several functions (funcmatch.h: kernel
 * functions when funcs->binary is "", else offsets in that file; pid -1
 * for every process). It attaches one multi-link (FAMILY_kprobe_multi /
 * FAMILY_kretprobe_multi, FAMILY_uprobe_multi / FAMILY_uretprobe_multi)
 * where the kernel has it, else one probe per function (FAMILY_kprobe,
 * FAMILY_uprobe, ...); fentry is not used. Function i's hits carry BPF
 * cookie i when the kernel has cookies (tk_attach_cookies). label names
 * the target in -v and --dry-run. funcs and label must outlive tk_load. */
struct tk_func_list;
void tk_set_target_multi(const char *family, const struct tk_func_list *funcs,
			 const char *label, pid_t pid);

/* Point the probe FAMILY (its program FAMILY_usdt) at the USDT probe
 * PROVIDER:NAME of ELF file binary (libbpf's USDT support: the argument
 * specs and semaphores are its), in process pid (-1: every process). */
void tk_set_target_usdt(const char *family, const char *binary, const char *provider,
			const char *name, pid_t pid);

/* Point the tracepoint probe FAMILY (programs FAMILY_tp_btf, _raw_tp,
 * _tp with no target of their own) at CATEGORY:NAME, as stackcount does
 * with a tracepoint given at run time. */
void tk_set_target_tp(const char *family, const char *category,
		      const char *name);

/* Point the tracepoint probe FAMILY at several tracepoints (tps: names
 * "category:name", as tk_tracepoints_match makes them): one classic
 * tracepoint link each (FAMILY_tp), tracepoint i's hits carrying BPF
 * cookie i when the kernel has cookies. label names them in -v and
 * --dry-run; tps and label must outlive tk_load. */
void tk_set_target_tps(const char *family, const struct tk_func_list *tps,
		       const char *label);

/* tk_load for a program that runs several tracers (tracekitd): where
 * tk_load would exit, this detaches and destroys what it had made, puts
 * the one-line cause in err and returns NULL. */
void *tk_try_load(const struct tk_skel_ops *ops, tk_configure_fn configure,
		  void *ctx, char *err, size_t errlen);

/* Detach and destroy every link tk_load made (a daemon that reloads or
 * exits cleanly; tools just exit). */
void tk_detach(void);

/* Detach the links of one object (a daemon stopping one tracer); the
 * caller then destroys its skeleton. */
void tk_detach_object(struct bpf_object *obj);

/* Do not load the programs whose names start with prefix (a family in
 * all its attach methods), from a configure callback. */
void tk_programs_off(struct bpf_object *obj, const char *prefix);

/* Do not load the kernel-function programs (fentry, fexit, kprobe,
 * kretprobe) whose names start with prefix and whose function this
 * kernel lacks (by its BTF): for functions that only some kernels have. */
void tk_programs_off_absent(struct bpf_object *obj, const char *prefix);

/* Set a global variable of the object's .rodata (before load) by name. */
int tk_set_rodata(struct bpf_object *obj, const char *var, const void *val,
		  size_t size);

/* Whether tracing programs (tracepoint, raw_tp) may keep data in task
 * storage: bpf_task_storage_get and bpf_get_current_task_btf. Probed
 * once. */
bool tk_task_storage_usable(void);

/* For an object that includes bpf/tk_pending.bpf.h: keep the pending
 * state in task storage when usable, else in the hash; create only the
 * map used. Run by tk_load before every load; 0 or -errno. */
int tk_pending_prepare(struct bpf_object *obj);

/* The attach method of a loaded program: "tp_btf", "raw_tp", "tp",
 * "fentry", "fexit", "kprobe", "kretprobe", "uprobe", "uretprobe",
 * "kprobe_multi", "kretprobe_multi", "uprobe_multi", "uretprobe_multi". */
const char *tk_prog_method(const struct bpf_program *prog);

/* Sum of a per-CPU u64 array element. */
int tk_percpu_sum(struct bpf_map *map, unsigned key, unsigned long long *sum);

/* Runs of obj's loaded programs the kernel skipped because the program
 * was already running on that CPU (bpf_prog_info.recursion_misses, since
 * Linux 5.12; kprobes count theirs there since 6.7). */
unsigned long long tk_runs_missed(struct bpf_object *obj);

/* For setup.c's libbpf print callback: notes which program a libbpf
 * warning is about, so a failed load demotes that probe only. */
void tk_bpf_note_libbpf_warning(const char *msg);

#endif
