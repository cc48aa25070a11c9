/* Function patterns, as bcc's funclatency and stackcount take them:
 *
 *   vfs_*          kernel functions matching a glob
 *   c:str*         functions of a library (or PATH, or PROG; see
 *                  functarget.h) matching a glob
 *   -r 'vfs_(read|write)'   a POSIX extended regex instead of a glob,
 *                  matched against the whole name (bcc's re.fullmatch)
 *
 * A glob is fnmatch(3)'s: '*', '?' and '[...]'. A name without those is
 * not a pattern: tools resolve it as one function (functarget.h), with
 * its own error messages.
 *
 * Kernel functions are matched against what can be probed: tracefs's
 * available_filter_functions when it can be read (the functions ftrace
 * can patch, which is what kprobe.multi attaches through, and what bcc
 * and libbpf >= 1.2 match against), else /proc/kallsyms' text symbols
 * less the kprobe blacklist and the names bcc also leaves out (see
 * funcmatch.c). User functions are the defined functions (not IFUNCs,
 * not imports) of the file's .symtab and .dynsym, one per address: an
 * alias (memcpy and __memcpy) is the same code, probed once. */
#ifndef TK_FUNCMATCH_H
#define TK_FUNCMATCH_H

#include <limits.h>
#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* At most this many functions per pattern: bcc's probe limit
 * (BCC_PROBE_LIMIT, 1000), counted in functions. Without multi-attach
 * each function costs one perf event per probe (two for funclatency),
 * each an open file and a kernel kprobe or uprobe. */
#define TK_FUNC_LIMIT 1000

struct tk_func_pattern {
	const char *text;  /* as given */
	bool regex;
	regex_t re;        /* when regex */
};

struct tk_func {
	char *name;
	/* kernel: the kallsyms address (0 until tk_kernel_funcs_addrs);
	 * user: the offset in the file, as uprobes take it */
	unsigned long long addr;
};

struct tk_func_list {
	char binary[PATH_MAX];  /* "" for kernel functions */
	struct tk_func *v;
	size_t n;
	const char *source;     /* what was matched: file or symbol table */
};

/* Has NAME a glob's special characters? */
bool tk_func_is_pattern(const char *name);

/* 0, or -EINVAL with err saying why the regex does not compile. */
int tk_func_pattern_init(struct tk_func_pattern *p, const char *text,
			 bool regex, char *err, size_t errlen);
bool tk_func_pattern_match(const struct tk_func_pattern *p, const char *name);
void tk_func_pattern_free(struct tk_func_pattern *p);

/* Kernel functions matching p, appended to out, in name order without
 * repeats. filter: available_filter_functions (NULL or unreadable: use
 * kallsyms, less the names in blacklist, a debugfs kprobes/blacklist,
 * when readable). 0 or -errno (-ENOENT: neither file can be read). */
int tk_kernel_funcs_match(const struct tk_func_pattern *p, const char *filter,
			  const char *kallsyms, const char *blacklist,
			  struct tk_func_list *out);

/* Fill each function's address from kallsyms (the first text symbol of
 * that name) and sort the list by address. 0, or -ENOENT when one has
 * none (the file cannot be read, or addresses are hidden: zeros). */
int tk_kernel_funcs_addrs(struct tk_func_list *l, const char *kallsyms);

/* Functions of ELF file path matching p, into out (binary set too), in
 * name order. 0, or -ENOENT / -ENOEXEC with err set. */
int tk_elf_funcs_match(const char *path, const struct tk_func_pattern *p,
		       struct tk_func_list *out, char *err, size_t errlen);

/* The whole thing: SPEC is PATTERN (kernel) or OBJ:PATTERN (user, OBJ as
 * in functarget.h for process pid, 0: any). Returns the number matched,
 * between 1 and TK_FUNC_LIMIT, or -errno with one line in err:
 *   -EINVAL  malformed spec or regex
 *   -ENOENT  no such library or file; no function matched
 *   -ENOEXEC not an ELF executable or library
 *   -E2BIG   more than TK_FUNC_LIMIT matched */
int tk_func_match(const char *spec, bool regex, pid_t pid,
		  struct tk_func_list *out, char *err, size_t errlen);

void tk_func_list_free(struct tk_func_list *l);

/* Sort l by addr (kernel function addresses). */
void tk_func_list_sort_addr(struct tk_func_list *l);

/* Tracepoints: SPEC is CATEGORY:NAME (what follows bcc's "t:"), each part
 * a glob or, with regex, a regex (the category ends at the first colon),
 * matched against events_dir (tracefs's events/, NULL when it cannot be
 * read). Into out, named "category:name" in name order (addr 0: BPF
 * never sees a tracepoint's event id, see multiattach.c). Returns the number
 * matched, between 1 and TK_FUNC_LIMIT, or -errno with one line in err:
 *   -EINVAL  malformed spec or regex
 *   -ENOENT  no category or no tracepoint matches, no tracefs
 *   -E2BIG   more than TK_FUNC_LIMIT matched */
int tk_tracepoints_match(const char *spec, bool regex, const char *events_dir,
			 struct tk_func_list *out, char *err, size_t errlen);

/* What a tool takes: SPEC, one function ([OBJ:]FUNC, functarget.h) or a
 * pattern ([OBJ:]PATTERN, or anything with regex). One function, or a
 * pattern that matches one, goes into t (l empty); several into l.
 * Returns how many, or -errno with one line in err. *func_part points
 * into spec at the function part (for messages). */
struct tk_func_target;
int tk_func_spec_resolve(const char *spec, bool regex, pid_t pid,
			 struct tk_func_target *t, struct tk_func_list *l,
			 const char **func_part, char *err, size_t errlen);

#endif
