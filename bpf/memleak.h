/* memleak: outstanding allocations, kept in the kernel per address and
 * read by userspace at each report. */
#ifndef MEMLEAK_H
#define MEMLEAK_H

#include "tk_shared.h"

/* Which allocator an address belongs to: kernel mode keeps slab
 * addresses, page frame numbers and per-CPU offsets, whose numbers may
 * coincide, apart. */
enum alloc_space {
	ALLOC_HEAP = 0,   /* user mode's every allocator; kmalloc and slab */
	ALLOC_PAGE,       /* mm_page_alloc: the key is the frame number */
	ALLOC_PERCPU,     /* percpu_alloc_percpu */
};

/* An allocation's place: the process and the address (user mode); in
 * kernel mode tgid 0 (kernel memory is freed by any task). */
struct alloc_key {
	unsigned int tgid;
	unsigned int space;          /* enum alloc_space */
	unsigned long long addr;
};

struct alloc_info {
	unsigned long long size;     /* bytes asked for */
	unsigned long long ts_ns;    /* when (ktime), for --older-than */
	int stack_id;                /* tk_stacks: user stack in user mode,
				      * kernel stack in kernel mode; <0 when
				      * not taken (-EFAULT, a full map) */
	unsigned int pad_;
};

#endif
