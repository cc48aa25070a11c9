/* Symbols for kernel and user addresses, for the stack tools.
 *
 * Kernel: /proc/kallsyms, modules included, read once into a sorted
 * array and binary-searched.
 *
 * User: elfutils (libdwfl) over each ELF file a process maps: .symtab,
 * .dynsym, MiniDebugInfo (.gnu_debugdata), and separate debug info found
 * by build-id (or .gnu_debuglink) under the debug directories. An address
 * is turned into a file offset through the process's mapping, and the
 * file offset into the ELF file's own address through its program
 * headers, so PIE executables and shared libraries work at any load
 * bias, and one cache per file serves every process that maps it.
 * Files are opened through /proc/PID/map_files or /proc/PID/root, so
 * processes in other mount namespaces symbolize; a process's mappings are
 * read when it is first noted (tk_syms_note_pid) and kept, so a process
 * that exited before output still symbolizes. Addresses outside any file
 * mapping are looked up in the process's JIT map, /tmp/perf-PID.map (read
 * through /proc/PID/root, named by the PID the process sees in its own
 * namespace).
 *
 * What cannot be resolved has name NULL; tk_sym_format prints it as
 * "[unknown]", with the module where known: "[unknown] (libfoo.so)".
 *
 * Only executable mappings are kept. The [vdso] is named from this
 * process's own vDSO image (the kernel's, the same in every process of
 * our architecture): module "[vdso]". A process's addresses that miss its
 * mappings make it re-read (at most every 100 ms, while it lives), so
 * code dlopen'ed or JIT-compiled since it was noted is found.
 * Memory: results are cached per (file, address), up to 256Ki entries a
 * file; at most 8192 processes are kept (the least recently used go);
 * files stay open (for processes that exit) up to half the descriptor
 * limit, past which they are opened only while their process lives.
 * Kernel lookups read /proc/kallsyms on first use (~2 MB for ~120k
 * symbols). Not thread-safe: one tk_syms per thread. */
#ifndef TK_SYMBOLIZE_H
#define TK_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct tk_syms;

struct tk_syms_opts {
	bool inline_frames;      /* report inlined frames from DWARF */
	const char *debug_dirs;  /* ':'-separated directories of separate
				  * debug info (with .build-id/xx/yyy.debug
				  * under them); NULL: /usr/lib/debug */
};

/* NULL with errno set on failure (out of memory only: files that cannot
 * be read just leave their addresses unknown). */
struct tk_syms *tk_syms_new(const struct tk_syms_opts *opts);
void tk_syms_free(struct tk_syms *s);

/* Read process pid's mappings now (and its JIT map, and open the files
 * it maps), so its addresses resolve even after it exits. Calling again
 * adds mappings not seen before (a process that dlopen'ed or exec'ed
 * since) and keeps the old ones. 0, or -errno (-ESRCH: gone). */
int tk_syms_note_pid(struct tk_syms *s, pid_t pid);
/* tk_syms_note_pid, and when pid is gone before its mappings could be
 * read: parent's (a forked child that had not exec'd has its parent's
 * mappings; one that exits at once is gone before it is read). */
int tk_syms_note_fork(struct tk_syms *s, pid_t pid, pid_t parent);
/* For a process noted before whose mappings are known to be the same
 * (the stack tools' BPF watches its mm, mapping count and code size):
 * re-read its JIT map only, if it has grown; a process not noted yet is
 * noted whole (tk_syms_note_pid). Far cheaper than reading
 * /proc/PID/maps again. 0, or -errno. */
int tk_syms_note_jit(struct tk_syms *s, pid_t pid);

struct tk_sym {
	const char *name;    /* function; NULL when unknown */
	const char *module;  /* file base name ("libc.so.6"), kernel module
			      * ("ext4"), "kernel", "[jit]" (a perf-PID.map
			      * entry), "[vdso]", or a pseudo mapping's name
			      * ("[heap]"); NULL when not even the mapping
			      * is known */
	unsigned long long offset;  /* from the symbol's start; when name
				     * is NULL: for an ELF file, the ELF
				     * virtual address (what addr2line -e
				     * FILE takes; the file offset if the
				     * file cannot be read), else the
				     * address itself */
	bool inlined;        /* an inlined frame: its caller follows */
};

/* A kernel address. Returns 1, having filled *out (name NULL when
 * unknown). Strings live as long as s. */
int tk_syms_kernel(struct tk_syms *s, unsigned long long addr,
		   struct tk_sym *out);

/* A user address of process pid: fills up to max frames, the innermost
 * inlined function first and the function that holds the code last
 * (always one frame without inline_frames). Returns the number filled,
 * at least 1 (max >= 1). A process not noted before is noted now.
 * Strings live as long as s, or until their process is forgotten to
 * bound memory (after 8192 others were seen since it was last used):
 * copy them to keep them across that many processes. */
int tk_syms_user(struct tk_syms *s, pid_t pid, unsigned long long addr,
		 struct tk_sym *out, int max);

/* The call frame information for user address addr of process pid, for
 * the unwinder (unwind.c): the Dwarf_CFI of the file mapped there (or of
 * the vDSO) into *cfi, the address to look up in it into *cfi_addr, and
 * the file's base name into *module. false when addr is in no file
 * mapping (a JIT, anonymous memory) or the file has no CFI: *module is
 * still set where the mapping is known, else NULL. */
bool tk_syms_user_cfi(struct tk_syms *s, pid_t pid, unsigned long long addr,
		      void **cfi, unsigned long long *cfi_addr, const char **module);

/* "name" (without a symbol version: "clock_gettime", not
 * "clock_gettime@@GLIBC_2.17"), "[unknown] (module)" or "[unknown]",
 * into buf; returns buf. */
const char *tk_sym_format(const struct tk_sym *sym, char *buf, size_t size);

/* A code address as the generic tracer prints it: "name+0xoff" (the
 * outermost of its inlined frames, without a symbol version; "name" at
 * offset 0), else "0x..." (also when s is NULL); a kernel address
 * unless user, then one of process pid. Into buf; returns buf. */
const char *tk_syms_addr_text(struct tk_syms *s, unsigned long long addr, bool user, pid_t pid,
			      char *buf, size_t size);

#endif
