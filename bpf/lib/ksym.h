/* Kernel symbols named by the kernel (bpf/lib/ksym.bpf.c,
 * libtrace/ksymbpf.c). */
#ifndef TK_KSYM_H
#define TK_KSYM_H

/* Bytes of a name: "name+0xoff/0xsize [module]"; a longer one is cut,
 * and libtrace then takes no name from it (it falls back to
 * /proc/kallsyms). */
#define TK_KSYM_LEN 256

#endif
