/* Internals of symbolization shared by symbolize.c (processes, mappings,
 * JIT maps), ksyms.c (kernel) and usyms.c (one ELF file through libdwfl).
 * Not for tools: they use symbolize.h. Unit tests include it to test the
 * parts alone (a kallsyms file of their own, one ELF file). */
#ifndef TK_SYMBOLIZE_INT_H
#define TK_SYMBOLIZE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbolize.h"

/* ---- kernel (ksyms.c) ---- */

struct tk_ksyms;

/* Read a kallsyms-format file. NULL only when out of memory: a file that
 * cannot be read gives an empty table (every lookup unknown). */
struct tk_ksyms *tk_ksyms_load(const char *path);
void tk_ksyms_free(struct tk_ksyms *k);
/* True when the file listed symbols but every address was 0
 * (kptr_restrict, or not root): nothing can be resolved. */
bool tk_ksyms_restricted(const struct tk_ksyms *k);
size_t tk_ksyms_count(const struct tk_ksyms *k);
/* Fill *out for addr (name NULL when unknown). */
void tk_ksyms_lookup(const struct tk_ksyms *k, unsigned long long addr,
		     struct tk_sym *out);

/* ---- one ELF file (usyms.c) ---- */

/* One file mapped by any number of processes, keyed by the (dev, ino)
 * /proc/PID/maps shows for it; symbols and results are cached here. */
struct tk_elf;

/* fd (consumed; -1 when it could not be opened yet) reads the file;
 * name is the base name shown as module; dir_path is the path the file
 * is reachable at for .gnu_debuglink lookups (may be NULL).
 * debuginfo_path points at libdwfl's search path (outlives the file).
 * NULL when out of memory. */
struct tk_elf *tk_elf_new(int fd, const char *name, const char *dir_path,
			  char **debuginfo_path);
void tk_elf_free(struct tk_elf *e);
const char *tk_elf_name(const struct tk_elf *e);
/* True until the file has been handed an fd (or loaded). */
bool tk_elf_needs_fd(const struct tk_elf *e);
void tk_elf_set_fd(struct tk_elf *e, int fd);
/* True when the file holds an open descriptor not yet handed to libdwfl
 * (those count against the descriptors symbolize.c may keep). */
bool tk_elf_holds_fd(const struct tk_elf *e);

/* File offset -> the ELF file's virtual address (PT_LOAD segments).
 * Loads the file on first use. false when no segment holds it or the
 * file cannot be read. */
bool tk_elf_off2vaddr(struct tk_elf *e, unsigned long long off,
		      unsigned long long *vaddr);
/* Symbolize the file's virtual address vaddr into out[0..max): returns
 * the count (>= 1); name NULL when unknown. Results are cached per
 * vaddr when cache is true. */
int tk_elf_lookup(struct tk_elf *e, unsigned long long vaddr, bool inline_frames,
		  bool cache, struct tk_sym *out, int max);
/* The file's Dwarf_CFI (.eh_frame, else .debug_frame), or NULL; *bias:
 * subtract it from a file virtual address to look that up in the CFI. */
void *tk_elf_cfi(struct tk_elf *e, unsigned long long *bias);
/* Number of function symbols loaded (0 before loading or when none). */
size_t tk_elf_nsyms(const struct tk_elf *e);

/* ---- tk_syms internals for tests and the bench ---- */

/* Turn the per-(file, address) result cache on or off (on by default). */
void tk_syms_set_cache(struct tk_syms *s, bool on);
/* Use this file instead of /proc/kallsyms (before the first kernel
 * lookup). */
void tk_syms_set_kallsyms_path(struct tk_syms *s, const char *path);

#endif
