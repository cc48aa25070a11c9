// SPDX-License-Identifier: GPL-2.0
/* memleak: outstanding allocations by stack.
 *
 * User mode: uprobes on the C library's allocator. Each call is seen at
 * its entry (the size asked for, realloc's old block, posix_memalign's
 * result pointer) and at its return (the block), where the block is
 * kept in `allocs` with its size, time and user stack; free() and
 * munmap() remove it at their entry, before the memory can be handed
 * out again.
 *
 * The allocator calls itself (realloc(NULL, n) is malloc, realloc(p, 0)
 * is free, reallocarray is realloc, a large malloc is mmap): such a
 * nested call is told from the call it is in by the stack pointer, and
 * only the outer call counts. A call's entry keeps the stack pointer;
 * another entry below it on the stack (lower sp) is nested in it, and a
 * return below it is a nested call's. A tail call (jmp) enters at the
 * same sp and returns with its caller: it replaces the caller's entry,
 * and the caller's own return finds nothing pending. The mmap and
 * munmap calls the allocator's own library makes (its heaps, its large
 * blocks, thread stacks) are its business, not the program's: they are
 * told by their return address and not counted.
 *
 * Where the kernel has uprobe sessions (6.13), malloc's and calloc's
 * entry and return are one program, and a call not kept (sampled out,
 * outside -z/-Z) declines its return: one trap instead of two. Those
 * two call no other probed function but mmap, which tells its caller
 * itself, so a call that keeps nothing needs no record of itself.
 *
 * Kernel mode: the kmem and percpu tracepoints, by kernel stack. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "memleak.h"
#include "tk_filter.bpf.h"
#include "tk_stack.bpf.h"

const volatile unsigned long long min_size = 0;
const volatile unsigned long long max_size = ~0ULL;
const volatile unsigned int sample_every = 1;   /* -s */
const volatile unsigned long long page_size = 4096;
/* The allocator's library's code around the mmap (munmap) probe, in
 * bytes below and above it (tk_uprobe_code_span); 0 when unknown. */
const volatile unsigned long long mmap_code_below = 0, mmap_code_above = 0;
const volatile unsigned long long munmap_code_below = 0, munmap_code_above = 0;

/* In a uprobe session's program (6.13): whether this run is the
 * return's. Weak: the session programs load only where it exists. */
extern bool bpf_session_is_return(void) __ksym __weak;

/* Sized by userspace (--max-allocs); not preallocated: it takes memory
 * for what is outstanding, not for its capacity. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, struct alloc_key);
	__type(value, struct alloc_info);
} allocs SEC(".maps");

/* When each traced process last exec'd: what it allocated before is
 * gone with its old image (userspace drops those blocks at a report). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 10240);
	__type(key, u32);
	__type(value, u64);
} exec_ns SEC(".maps");

/* -s: calls seen on this CPU, every sample_every'th kept. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u32);
} sample_count SEC(".maps");

enum call_kind {
	CALL_PLAIN = 0,     /* the block is the return value */
	CALL_REALLOC,       /* and `old` was given back unless it failed */
	CALL_POSIX,         /* the block is at *memptr when 0 is returned */
};

struct pending {
	u64 sp;             /* at entry: what tells a nested call */
	u64 size;
	u64 memptr;         /* posix_memalign's */
	u64 old;            /* realloc's block, its tracking taken out */
	struct alloc_info old_info;
	u32 kind;
	bool have_old;      /* old_info holds old's tracking */
	bool skip;          /* not kept: sampled out, or out of -z/-Z */
};

#define TK_PENDING_VALUE struct pending
#include "tk_pending.bpf.h"

static __always_inline u32 current_tgid(void)
{
	return tk_pid_tgid() >> 32;
}

static __always_inline bool sampled_out(void)
{
	u32 zero = 0, *n;

	if (sample_every <= 1)
		return false;
	n = bpf_map_lookup_elem(&sample_count, &zero);
	if (!n)
		return false;
	return (*n)++ % sample_every != 0;
}

/* Forget the block at addr (a free, or realloc's old block); with
 * keep, its tracking into *info first. True when it was tracked. */
static __always_inline bool untrack(u32 tgid, u32 space, u64 addr,
				    struct alloc_info *keep)
{
	struct alloc_key k = { .tgid = tgid, .space = space, .addr = addr };
	struct alloc_info *v;

	if (!addr)
		return false;
	if (keep) {
		v = bpf_map_lookup_elem(&allocs, &k);
		if (!v)
			return false;
		*keep = *v;
	}
	return bpf_map_delete_elem(&allocs, &k) == 0;
}

static __always_inline void track(u32 tgid, u32 space, u64 addr,
				  const struct alloc_info *info)
{
	struct alloc_key k = { .tgid = tgid, .space = space, .addr = addr };

	/* BPF_ANY: a block still tracked at this address was freed
	 * unseen (before tracing began); the new one replaces it. */
	if (bpf_map_update_elem(&allocs, &k, info, BPF_ANY))
		tk_count_loss(TK_LOSS_MAP_FULL);
}

/* --- User mode ------------------------------------------------------ */

/* An allocator call's entry. True when its return has work to do; in a
 * session (malloc and calloc), a call kept by nothing leaves no record
 * and declines its return. */
static __always_inline bool enter(struct pt_regs *ctx, u64 size, u64 old,
				  u64 memptr, u32 kind, bool session)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	u64 sp = PT_REGS_SP(ctx);
	struct pending *p, n = {};

	if (!tk_task_wanted())
		return false;
	p = tk_pending_get(tid);
	if (p && sp < p->sp)
		return false;  /* nested in a call that counts */
	n.sp = sp;
	n.size = size;
	n.memptr = memptr;
	n.kind = kind;
	n.skip = size < min_size || size > max_size || sampled_out();
	if (n.skip && session)
		return false;
	if (kind == CALL_REALLOC) {
		/* Untracked now, before the block can be given to another
		 * thread; tracked again if the call fails. */
		n.old = old;
		n.have_old = untrack(current_tgid(), ALLOC_HEAP, old, &n.old_info);
	}
	tk_pending_put(tid, &n);
	return true;
}

/* Whether the probed call came from the allocator's own library: its
 * return address (at entry: the link register on arm64, the top of the
 * stack on x86; the kernel hijacks it for a return probe only after
 * every entry program ran) within [below, above) of the probe's
 * address. */
static __always_inline bool called_by_library(struct pt_regs *ctx, u64 below, u64 above)
{
	u64 ip = PT_REGS_IP(ctx), ret;

	if (!below && !above)
		return false;
#if defined(__TARGET_ARCH_arm64)
	ret = PT_REGS_RET(ctx);
#else
	if (bpf_probe_read_user(&ret, sizeof(ret), (void *)PT_REGS_SP(ctx)))
		return false;
#endif
	return ret >= ip - below && ret < ip + above;
}

/* Every allocating call's return. */
static __always_inline void leave(struct pt_regs *ctx)
{
	u32 tid = (u32)bpf_get_current_pid_tgid(), tgid;
	u64 sp = PT_REGS_SP(ctx), ret = PT_REGS_RC(ctx), addr = ret;
	struct alloc_info info = {};
	struct pending *p = tk_pending_get(tid);
	struct pending c;

	if (!p || sp < p->sp)
		return;  /* a nested call's return, or not ours */
	c = *p;
	tk_pending_clear(tid, p);
	tgid = current_tgid();
	if (c.kind == CALL_POSIX) {
		addr = 0;
		if ((int)ret == 0 && bpf_probe_read_user(&addr, sizeof(addr), (void *)c.memptr))
			addr = 0;
	} else if (c.kind == CALL_REALLOC && !ret) {
		/* Failed, the old block kept; or realloc(p, 0), which frees
		 * p and returns NULL (glibc): nothing either way to track
		 * but a kept old block. */
		if (c.have_old && c.size)
			track(tgid, ALLOC_HEAP, c.old, &c.old_info);
		return;
	}
	if (!addr || addr == (u64)-1 /* mmap's MAP_FAILED */ || c.skip)
		return;
	info.size = c.size;
	info.ts_ns = bpf_ktime_get_ns();
	info.stack_id = tk_stack_id(ctx, BPF_F_USER_STACK);
	track(tgid, ALLOC_HEAP, addr, &info);
	if (info.stack_id >= 0)
		tk_stack_note(ctx, tgid, (struct task_struct *)bpf_get_current_task());
}

/* The returns are attached first (programs attach in this order): a
 * call that enters between two attachments has no return to miss. */
SEC("uretprobe")
int BPF_KRETPROBE(alloc_exit_uretprobe)
{
	leave(ctx);
	return 0;
}

/* A session's run: the entry's, which returns nonzero to decline the
 * return, or the return's. */
static __always_inline int session(struct pt_regs *ctx, u64 size)
{
	if (bpf_session_is_return()) {
		leave(ctx);
		return 0;
	}
	return enter(ctx, size, 0, 0, CALL_PLAIN, true) ? 0 : 1;
}

/* malloc, valloc, pvalloc (size first) */
SEC("uprobe")
int BPF_KPROBE(size0_entry_uprobe, u64 size)
{
	enter(ctx, size, 0, 0, CALL_PLAIN, false);
	return 0;
}

/* The same, entry and return (loaded as a uprobe session) */
SEC("uprobe")
int BPF_KPROBE(size0_entry_uprobe_session, u64 size)
{
	return session(ctx, size);
}

/* aligned_alloc, memalign (alignment, size) */
SEC("uprobe")
int BPF_KPROBE(size1_entry_uprobe, u64 first, u64 size)
{
	enter(ctx, size, 0, 0, CALL_PLAIN, false);
	return 0;
}

/* mmap (addr, length, ...), but the allocator library's own */
SEC("uprobe")
int BPF_KPROBE(mmap_entry_uprobe, u64 addr, u64 length)
{
	if (!called_by_library(ctx, mmap_code_below, mmap_code_above))
		enter(ctx, length, 0, 0, CALL_PLAIN, false);
	return 0;
}

/* An overflowing product fails the call: nothing is tracked. */
SEC("uprobe")
int BPF_KPROBE(calloc_entry_uprobe, u64 nmemb, u64 size)
{
	enter(ctx, nmemb * size, 0, 0, CALL_PLAIN, false);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(calloc_entry_uprobe_session, u64 nmemb, u64 size)
{
	return session(ctx, nmemb * size);
}

SEC("uprobe")
int BPF_KPROBE(realloc_entry_uprobe, u64 old, u64 size)
{
	enter(ctx, size, old, 0, CALL_REALLOC, false);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(reallocarray_entry_uprobe, u64 old, u64 nmemb, u64 size)
{
	enter(ctx, nmemb * size, old, 0, CALL_REALLOC, false);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(posix_memalign_entry_uprobe, u64 memptr, u64 align, u64 size)
{
	enter(ctx, size, 0, memptr, CALL_POSIX, false);
	return 0;
}

/* free, munmap: the block is forgotten at the call, before it can be
 * handed out again. A free inside a pending call (realloc(p, 0)) is
 * the call's to account. */
static __always_inline void forget(struct pt_regs *ctx, u64 addr)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct pending *p;

	if (!addr)
		return;
	p = tk_pending_get(tid);
	if (p && PT_REGS_SP(ctx) < p->sp)
		return;
	untrack(current_tgid(), ALLOC_HEAP, addr, NULL);
}

SEC("uprobe")
int BPF_KPROBE(free_entry_uprobe, u64 addr)
{
	forget(ctx, addr);
	return 0;
}

/* The same as a uprobe.multi link (6.6), where the kernel has one. */
SEC("uprobe")
int BPF_KPROBE(free_entry_uprobe_multi, u64 addr)
{
	forget(ctx, addr);
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(munmap_entry_uprobe, u64 addr)
{
	if (!called_by_library(ctx, munmap_code_below, munmap_code_above))
		forget(ctx, addr);
	return 0;
}

SEC("tracepoint/sched/sched_process_exec")
int exec_tp(void *ctx)
{
	u32 tgid = current_tgid();
	u64 now = bpf_ktime_get_ns();

	if (tk_task_wanted())
		bpf_map_update_elem(&exec_ns, &tgid, &now, BPF_ANY);
	return 0;
}

/* --- Kernel mode ---------------------------------------------------- */

/* The tracepoints' records before 6.1 (kmalloc and kmem_cache_alloc
 * shared kmem_alloc; the _node variants kmem_alloc_node; kfree and
 * kmem_cache_free kmem_free). */
struct trace_event_raw_kmem_alloc___old {
	const void *ptr;
	size_t bytes_alloc;
} __attribute__((preserve_access_index));

struct trace_event_raw_kmem_alloc_node___old {
	const void *ptr;
	size_t bytes_alloc;
} __attribute__((preserve_access_index));

struct trace_event_raw_kmem_free___old {
	const void *ptr;
} __attribute__((preserve_access_index));

struct trace_event_raw_percpu_alloc_percpu___old {
	void *ptr;
	size_t size;
} __attribute__((preserve_access_index));

static __always_inline void kernel_alloc(void *ctx, u32 space, u64 addr, u64 size)
{
	struct alloc_info info = {};

	if (!addr || size < min_size || size > max_size || !tk_task_wanted() ||
	    sampled_out())
		return;
	info.size = size;
	info.ts_ns = bpf_ktime_get_ns();
	info.stack_id = tk_stack_id(ctx, 0);
	track(0, space, addr, &info);
}

static __always_inline void kernel_free(u32 space, u64 addr)
{
	untrack(0, space, addr, NULL);
}

/* kmalloc's and kmem_cache_alloc's records from 6.1 (type), or their
 * shared one before: ptr and bytes_alloc in each. */
#define SLAB_ALLOC(ctx, type) do {                                             \
		if (bpf_core_type_exists(struct type)) {                       \
			struct type *e_ = (ctx);                               \
			kernel_alloc(ctx, ALLOC_HEAP, (u64)BPF_CORE_READ(e_, ptr),    \
				     BPF_CORE_READ(e_, bytes_alloc));          \
		} else {                                                       \
			struct trace_event_raw_kmem_alloc___old *e_ = (ctx);   \
			kernel_alloc(ctx, ALLOC_HEAP, (u64)BPF_CORE_READ(e_, ptr),    \
				     BPF_CORE_READ(e_, bytes_alloc));          \
		}                                                              \
	} while (0)

SEC("tracepoint/kmem/kmalloc")
int kmalloc_tp(void *ctx)
{
	SLAB_ALLOC(ctx, trace_event_raw_kmalloc);
	return 0;
}

SEC("tracepoint/kmem/kmem_cache_alloc")
int cache_alloc_tp(void *ctx)
{
	SLAB_ALLOC(ctx, trace_event_raw_kmem_cache_alloc);
	return 0;
}

/* Before 6.1 only (userspace turns them off where they are gone). */
SEC("tracepoint/kmem/kmalloc_node")
int kmalloc_node_tp(void *ctx)
{
	struct trace_event_raw_kmem_alloc_node___old *e = ctx;

	kernel_alloc(ctx, ALLOC_HEAP, (u64)BPF_CORE_READ(e, ptr), BPF_CORE_READ(e, bytes_alloc));
	return 0;
}

SEC("tracepoint/kmem/kmem_cache_alloc_node")
int cache_alloc_node_tp(void *ctx)
{
	struct trace_event_raw_kmem_alloc_node___old *e = ctx;

	kernel_alloc(ctx, ALLOC_HEAP, (u64)BPF_CORE_READ(e, ptr), BPF_CORE_READ(e, bytes_alloc));
	return 0;
}

static __always_inline u64 freed_ptr(void *ctx)
{
	if (bpf_core_type_exists(struct trace_event_raw_kfree))
		return (u64)BPF_CORE_READ((struct trace_event_raw_kfree *)ctx, ptr);
	return (u64)BPF_CORE_READ((struct trace_event_raw_kmem_free___old *)ctx, ptr);
}

SEC("tracepoint/kmem/kfree")
int kfree_tp(void *ctx)
{
	kernel_free(ALLOC_HEAP, freed_ptr(ctx));
	return 0;
}

SEC("tracepoint/kmem/kmem_cache_free")
int cache_free_tp(void *ctx)
{
	if (bpf_core_type_exists(struct trace_event_raw_kmem_cache_free))
		kernel_free(ALLOC_HEAP, (u64)BPF_CORE_READ((struct trace_event_raw_kmem_cache_free *)ctx, ptr));
	else
		kernel_free(ALLOC_HEAP, freed_ptr(ctx));
	return 0;
}

SEC("tracepoint/kmem/mm_page_alloc")
int page_alloc_tp(struct trace_event_raw_mm_page_alloc *e)
{
	kernel_alloc(e, ALLOC_PAGE, BPF_CORE_READ(e, pfn), page_size << BPF_CORE_READ(e, order));
	return 0;
}

SEC("tracepoint/kmem/mm_page_free")
int page_free_tp(struct trace_event_raw_mm_page_free *e)
{
	kernel_free(ALLOC_PAGE, BPF_CORE_READ(e, pfn));
	return 0;
}

SEC("tracepoint/percpu/percpu_alloc_percpu")
int percpu_alloc_tp(void *ctx)
{
	struct trace_event_raw_percpu_alloc_percpu *e = ctx;

	/* bytes_alloc (all CPUs' copies) since 6.2; the size of one
	 * before. */
	if (bpf_core_field_exists(e->bytes_alloc))
		kernel_alloc(ctx, ALLOC_PERCPU, (u64)BPF_CORE_READ(e, ptr), BPF_CORE_READ(e, bytes_alloc));
	else
		kernel_alloc(ctx, ALLOC_PERCPU, (u64)BPF_CORE_READ(e, ptr),
			     BPF_CORE_READ((struct trace_event_raw_percpu_alloc_percpu___old *)ctx, size));
	return 0;
}

SEC("tracepoint/percpu/percpu_free_percpu")
int percpu_free_tp(struct trace_event_raw_percpu_free_percpu *e)
{
	kernel_free(ALLOC_PERCPU, (u64)BPF_CORE_READ(e, ptr));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
