/* cachestat: the counters of the per-CPU array, one slot each. */
#ifndef CACHESTAT_H
#define CACHESTAT_H

#include "tk_shared.h"

enum cachestat_slot {
	CACHESTAT_ADDED = 0,   /* pages added to the page cache (misses) */
	CACHESTAT_ACCESSED,    /* pages marked accessed (every access) */
	CACHESTAT_DIRTIED,     /* pages dirtied (account_page_dirtied) */
	CACHESTAT_BUF_DIRTIED, /* buffers dirtied (mark_buffer_dirty) */
	CACHESTAT_SLOTS,
};

#endif
