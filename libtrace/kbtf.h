/* The kernel's BTF for planning: parsed once, on first use. */
#ifndef TK_KBTF_H
#define TK_KBTF_H

#include <bpf/btf.h>

/* The BTF of --btf FILE, else the running kernel's; NULL when there is
 * none (errno says why). Parsed on first call: a tracepoint probe that
 * names only its record's integer and string fields never needs it
 * (bench-trace: the parse was 9 ms of trace's 33 ms start-up, and
 * libbpf parses its own copy to load). */
const struct btf *tk_kernel_btf(void);

/* Frees it; the next tk_kernel_btf() parses it again. tk_load calls this
 * so that the copy is not alive beside libbpf's (5.8 MB). */
void tk_kernel_btf_release(void);

/* How many arguments the kernel's tracepoint NAME passes to tp_btf and
 * raw_tp programs (its btf_trace_NAME typedef in the kernel's BTF); -1
 * when the BTF has no such tracepoint. For arguments a kernel added
 * later (kfree_skb's reason, tcp_retransmit_skb's err): a program reads
 * them behind rodata set from this, so the verifier never sees the read
 * on a kernel without them. */
int tk_tp_nargs(const char *name);

#endif
