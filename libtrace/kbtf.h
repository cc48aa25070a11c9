/* The kernel's BTF for planning: parsed once, on first use. */
#ifndef TK_KBTF_H
#define TK_KBTF_H

#include <bpf/btf.h>
#include <stdbool.h>

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

/* Whether argument i (from 0, after the data pointer) of the kernel's
 * tracepoint NAME is a pointer to struct STRUCT_NAME: for an argument a
 * kernel replaced (kmem_cache_alloc's cache, 6.1, where sizes were). */
bool tk_tp_arg_is_struct_ptr(const char *name, int i, const char *struct_name);

/* Whether the kernel's BTF has function NAME: a static function that the
 * compiler inlined everywhere is not there and cannot be probed. */
bool tk_kernel_has_func(const char *name);

/* The value of the kernel's enumerator NAME (a constant of any enum,
 * named or not) into *value: 0, or -ENOENT when its BTF has none (a
 * kernel where the constant is still a #define). */
int tk_kernel_enumerator(const char *name, long long *value);

#endif
