/* slabratetop: kernel slab allocations per cache, summed in the kernel. */
#ifndef SLABRATETOP_H
#define SLABRATETOP_H

#include "tk_shared.h"

/* Bytes of a cache's name kept: bcc's CACHE_NAME_SIZE (a longer name is
 * cut; the kernel's own names are shorter). */
#define SLABRATETOP_NAME_LEN 32
#define SLABRATETOP_MAX_ENTRIES 4096

/* Per CPU, keyed by the struct kmem_cache's address: the name and the
 * object size are read from the cache on the CPU's first allocation
 * from it, then only the count grows. */
struct slabratetop_val {
	unsigned long long allocs;
	unsigned int size;                 /* the cache's size: bytes per object */
	char name[SLABRATETOP_NAME_LEN];   /* "" until this CPU has read it */
	char pad[4];
};

#endif
