// SPDX-License-Identifier: GPL-2.0
/* cachestat: page cache accesses, additions and dirtyings, counted in a
 * per-CPU array that userspace reads at each interval (bcc's formula
 * turns them into hits and misses there).
 *
 * Each counter is one probe at a kernel function (fentry, else kprobe),
 * pointed at run time at the name this kernel has (tools/cachestat.c):
 *   add:    filemap_add_folio (5.16+) or add_to_page_cache_lru
 *   access: folio_mark_accessed (5.16+) or mark_page_accessed
 *   dirty:  folio_account_dirtied or account_page_dirtied; where neither
 *           is in the kernel's BTF (inlined; removed in 6.2), the
 *           writeback:writeback_dirty_folio (or _page) tracepoint
 *   mbd:    mark_buffer_dirty
 * There is no tracepoint where a cached page is accessed, so there is
 * no tracepoint way for the hits: without kernel-function tracing the
 * tool cannot run.
 *
 * The folio functions count the folio's pages, not one per call: a
 * large folio (xfs, btrfs, a readahead of 64 KiB) is many pages read or
 * added at once, and counting calls would make the ratio depend on the
 * folio sizes of each file system. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "cachestat.h"
#include "tk_filter.bpf.h"
#include "tk_loss.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CACHESTAT_SLOTS);
	__type(key, u32);
	__type(value, u64);
} counts SEC(".maps");

/* 5.16 to 6.5 kept a large folio's order in its own byte. */
struct folio___order {
	unsigned char _folio_order;
} __attribute__((preserve_access_index));

/* Pages in a folio: 1 unless it is large (PG_head set in its first
 * page's flags), else 1 << its order (6.6+: the low byte of _flags_1). */
static __always_inline u64 folio_pages(struct folio *folio)
{
	unsigned long flags = 0, flags_1 = 0;
	unsigned char order = 0;
	struct folio___order *old = (void *)folio;

	/* flags is the first word of every struct page and folio; 6.17
	 * wrapped it in memdesc_flags_t, so it is read by place. */
	bpf_probe_read_kernel(&flags, sizeof(flags), folio);
	if (!(flags & (1UL << bpf_core_enum_value(enum pageflags, PG_head))))
		return 1;
	if (bpf_core_field_exists(old->_folio_order)) {
		order = BPF_CORE_READ(old, _folio_order);
	} else if (bpf_core_field_exists(folio->_flags_1)) {
		flags_1 = BPF_CORE_READ(folio, _flags_1);
		order = flags_1 & 0xff;
	}
	return 1ULL << (order & 31);
}

static __always_inline int count(u32 slot, u64 n)
{
	u64 *c;

	if (!tk_task_wanted())
		return 0;
	c = bpf_map_lookup_elem(&counts, &slot);
	if (c)
		*c += n;   /* per-CPU: no atomic needed */
	return 0;
}

/* The folio is the second argument of filemap_add_folio(mapping, folio,
 * index, gfp); the first of folio_mark_accessed and
 * folio_account_dirtied(folio, mapping). The page functions count 1. */
const volatile bool add_folio = false;
const volatile bool access_folio = false;
const volatile bool dirty_folio = false;

SEC("fentry")
int BPF_PROG(add_fentry, void *mapping, struct folio *folio)
{
	return count(CACHESTAT_ADDED, add_folio ? folio_pages(folio) : 1);
}

SEC("kprobe")
int BPF_KPROBE(add_kprobe, void *mapping, struct folio *folio)
{
	return count(CACHESTAT_ADDED, add_folio ? folio_pages(folio) : 1);
}

SEC("fentry")
int BPF_PROG(access_fentry, struct folio *folio)
{
	return count(CACHESTAT_ACCESSED, access_folio ? folio_pages(folio) : 1);
}

SEC("kprobe")
int BPF_KPROBE(access_kprobe, struct folio *folio)
{
	return count(CACHESTAT_ACCESSED, access_folio ? folio_pages(folio) : 1);
}

SEC("fentry")
int BPF_PROG(dirty_fentry, struct folio *folio)
{
	return count(CACHESTAT_DIRTIED, dirty_folio ? folio_pages(folio) : 1);
}

SEC("kprobe")
int BPF_KPROBE(dirty_kprobe, struct folio *folio)
{
	return count(CACHESTAT_DIRTIED, dirty_folio ? folio_pages(folio) : 1);
}

/* The tracepoints' records are not read (one per folio or page): their
 * fields differ between the two and across kernels. */
SEC("tp_btf")
int dirty_tp_tp_btf(void *ctx)
{
	return count(CACHESTAT_DIRTIED, 1);
}

SEC("raw_tp")
int dirty_tp_raw_tp(void *ctx)
{
	return count(CACHESTAT_DIRTIED, 1);
}

SEC("tp")
int dirty_tp_tp(void *ctx)
{
	return count(CACHESTAT_DIRTIED, 1);
}

SEC("fentry/mark_buffer_dirty")
int BPF_PROG(mbd_fentry)
{
	return count(CACHESTAT_BUF_DIRTIED, 1);
}

SEC("kprobe/mark_buffer_dirty")
int BPF_KPROBE(mbd_kprobe)
{
	return count(CACHESTAT_BUF_DIRTIED, 1);
}

char LICENSE[] SEC("license") = "GPL";
