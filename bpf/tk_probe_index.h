/* Which of several probes of one program a hit is (funclatency -F,
 * funccount), shared by BPF (tk_probe_index.bpf.h) and userspace
 * (tk_probe_index_set, multiattach.h). */
#ifndef TK_PROBE_INDEX_H
#define TK_PROBE_INDEX_H

/* How a hit knows its probe: */
enum tk_probe_by {
	TK_PROBE_ONE,     /* one probe: index 0 */
	TK_PROBE_COOKIE,  /* its BPF cookie (the index, set at attach; 5.15) */
	TK_PROBE_KEY,     /* its key (a kprobe's address) among
			   * tk_probe_keys */
};

/* Probes of one program (TK_FUNC_LIMIT in libtrace/funcmatch.h), and the
 * steps of a binary search over their keys. */
#define TK_PROBE_MAX 1000
#define TK_PROBE_SEARCH_STEPS 11

#endif
