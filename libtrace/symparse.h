/* Pure parsers of the text formats symbolization reads: one line of
 * /proc/kallsyms, of /proc/PID/maps and of a JIT's /tmp/perf-PID.map.
 * They touch nothing but the buffer they are given (no allocation, no
 * NUL terminator needed), so they are unit-tested and fuzzed on their own
 * (tests/fuzz/fuzz_*.c). Internal to libtrace (symbolize.c, ksyms.c). */
#ifndef TK_SYMPARSE_H
#define TK_SYMPARSE_H

#include <stdbool.h>
#include <stddef.h>

/* "ffffffff81000000 T _stext" or "ffffffffc0a01000 t ext4_fill_super\t[ext4]".
 * name/mod point into the line; mod is NULL (mod_len 0) for the kernel
 * itself. Trailing '\n' allowed. */
struct tk_ksym_line {
	unsigned long long addr;
	char type;
	const char *name;
	size_t name_len;
	const char *mod;
	size_t mod_len;
};

/* "START-END PERMS PGOFF MAJ:MIN INODE   PATH": path points into the line
 * (path_len 0 for anonymous mappings), without a " (deleted)" suffix,
 * which sets deleted instead. */
struct tk_maps_line {
	unsigned long long start, end, pgoff, ino;
	unsigned int dev_major, dev_minor;
	char perms[4];
	const char *path;
	size_t path_len;
	bool deleted;
};

/* "START SIZE NAME": hex without 0x (perf also accepts 0x: so do we);
 * the name is the rest of the line and may hold spaces. */
struct tk_perfmap_line {
	unsigned long long start, size;
	const char *name;
	size_t name_len;
};

/* Each returns 0 with *out filled, or -1 when the line is malformed (or
 * empty); out is then unspecified. */
int tk_parse_kallsyms_line(const char *line, size_t len, struct tk_ksym_line *out);
int tk_parse_maps_line(const char *line, size_t len, struct tk_maps_line *out);
int tk_parse_perfmap_line(const char *line, size_t len, struct tk_perfmap_line *out);

#endif
