/* Opening, loading and attaching a tool's BPF object, with the attach
 * method chosen at run time by trying the best one the object offers.
 *
 * A probe with several attach methods is written once per method, the
 * program name ending in the method: foo_tp_btf, foo_raw_tp, foo_tp.
 * libtrace loads the best method first and falls back when the kernel
 * refuses it. TRACEKIT_ATTACH=raw_tp (or tp_btf, tp) starts the chain at
 * that method, so tests can run every method the kernel supports. */
#ifndef TK_BPF_H
#define TK_BPF_H

#include <bpf/libbpf.h>
#include <stdbool.h>
#include <stddef.h>

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
 * programs to autoload. Return 0, or -errno to stop. */
typedef int (*tk_configure_fn)(void *skel, void *ctx);

/* Open, configure and load the skeleton, falling back through attach
 * methods and the event transport; exits 1 with one line naming the
 * missing kernel feature when nothing loads. */
void *tk_load(const struct tk_skel_ops *ops, tk_configure_fn configure,
	      void *ctx);

/* Attach every loaded program; exits 1 naming the probe that failed. */
void tk_attach(struct bpf_object *obj);

/* Set a global variable of the object's .rodata (before load) by name. */
int tk_set_rodata(struct bpf_object *obj, const char *var, const void *val,
		  size_t size);

/* The attach method chosen for the probe family of prog ("raw_tp", ...). */
const char *tk_prog_method(const struct bpf_program *prog);

/* Sum of a per-CPU u64 array element. */
int tk_percpu_sum(struct bpf_map *map, unsigned key, unsigned long long *sum);

#endif
