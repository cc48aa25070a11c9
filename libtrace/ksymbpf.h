/* Kernel addresses named by the kernel itself (bpf/lib/ksym.bpf.c: a
 * syscall program printing each with bpf_snprintf's "%pB"), instead of
 * reading all of /proc/kallsyms: Linux 5.14 and later. Each distinct
 * address is asked once and kept. */
#ifndef TK_KSYMBPF_H
#define TK_KSYMBPF_H

#include <stdbool.h>

#include "symbolize.h"

struct tk_ksym_bpf;

/* NULL when this kernel cannot (no syscall programs before 5.14, no
 * bpf_snprintf or "%pB" in it, or not privileged), or when
 * TRACEKIT_KSYMS=kallsyms asks for /proc/kallsyms. */
struct tk_ksym_bpf *tk_ksym_bpf_open(void);

/* addr's symbol into out (name and module live as long as k): the
 * function and the offset in it, or no name and module "kernel" where
 * the kernel knows none (as ksyms.c gives an address outside every
 * symbol). False when the program could not run or printed nothing:
 * the caller falls back to /proc/kallsyms. */
bool tk_ksym_bpf_lookup(struct tk_ksym_bpf *k, unsigned long long addr, struct tk_sym *out);

void tk_ksym_bpf_free(struct tk_ksym_bpf *k);

#endif
