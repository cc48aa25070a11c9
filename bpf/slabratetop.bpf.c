// SPDX-License-Identifier: GPL-2.0
/* slabratetop: slab allocations counted per cache in a per-CPU hash that
 * userspace reads at each interval. The key is the struct kmem_cache's
 * address; a CPU reads the cache's name and size (s->size, bcc's bytes
 * per object) on its first allocation from it, then only counts.
 *
 * Two ways (libtrace/kfunc_or_tp.h picks one, the tracepoint first):
 *
 * tp_*: kmem:kmem_cache_alloc, whose arguments hold the cache from 6.1
 * (tp_btf, else raw_tp; the classic tracepoint's record has no cache).
 * It fires in kmem_cache_alloc, kmem_cache_alloc_lru and
 * kmem_cache_alloc_node (their *_noprof forms from 6.10), after the
 * allocation.
 *
 * kf_*: those functions at entry (fentry, else kprobe; userspace points
 * each at the name this kernel has, and turns off the ones it lacks):
 * kernels before 6.1, whose tracepoint passes sizes only. bcc traces
 * kmem_cache_alloc alone.
 *
 * Neither way sees kmalloc() (its own caches, kmalloc-*), which goes
 * through other functions (kmem_cache_alloc_trace before 6.1) and other
 * tracepoints, nor kmem_cache_alloc_bulk(). */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "slabratetop.h"
#include "tk_filter.bpf.h"
#include "tk_loss.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, SLABRATETOP_MAX_ENTRIES);
	__type(key, u64);
	__type(value, struct slabratetop_val);
} counts SEC(".maps");

static struct slabratetop_val zero;

static __always_inline int count(struct kmem_cache *s)
{
	struct slabratetop_val *v;
	u64 key = (u64)s;

	if (!s || !tk_task_wanted())
		return 0;
	v = tk_lookup_or_init(&counts, &key, &zero);
	if (!v)
		return 0;
	if (!v->name[0]) {   /* this CPU's first allocation from s */
		v->size = BPF_CORE_READ(s, size);
		bpf_probe_read_kernel_str(v->name, sizeof(v->name), BPF_CORE_READ(s, name));
	}
	v->allocs++;   /* per-CPU: no atomics */
	return 0;
}

/* ---- tp_: kmem:kmem_cache_alloc (call_site, ptr, s, gfp_flags, node) ---- */

SEC("tp_btf/kmem_cache_alloc")
int BPF_PROG(tp_alloc_tp_btf, unsigned long call_site, const void *ptr,
	     struct kmem_cache *s)
{
	return count(s);
}

SEC("raw_tp/kmem_cache_alloc")
int BPF_PROG(tp_alloc_raw_tp, unsigned long call_site, const void *ptr,
	     struct kmem_cache *s)
{
	return count(s);
}

/* ---- kf_: the allocation functions, each taking the cache first ---- */

#define KF_ALLOC(family)                                                     \
SEC("fentry")                                                                \
int BPF_PROG(family##_fentry, struct kmem_cache *s)                          \
{                                                                            \
	return count(s);                                                     \
}                                                                            \
SEC("kprobe")                                                                \
int BPF_KPROBE(family##_kprobe, struct kmem_cache *s)                        \
{                                                                            \
	return count(s);                                                     \
}

KF_ALLOC(kf_alloc)        /* kmem_cache_alloc[_noprof] */
KF_ALLOC(kf_lru)          /* kmem_cache_alloc_lru[_noprof] (5.18) */
KF_ALLOC(kf_node)         /* kmem_cache_alloc_node[_noprof] (NUMA kernels) */

char LICENSE[] SEC("license") = "GPL";
