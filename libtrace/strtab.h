/* Interned names: each distinct string kept once, by index, for the
 * module names of kernel symbols (ksyms.c, ksymbpf.c). Few, and they
 * arrive grouped, so a search from the newest is all it needs. A
 * string's text never moves once added. */
#ifndef TK_STRTAB_H
#define TK_STRTAB_H

#include <stddef.h>

struct tk_strtab {
	char **strs;
	size_t n;
};

/* The index of m[0..len) in t, added when new; -1 when memory ran out. */
long tk_strtab_intern(struct tk_strtab *t, const char *m, size_t len);

void tk_strtab_free(struct tk_strtab *t);

#endif
