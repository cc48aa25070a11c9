/* Function patterns over the kernel's and an ELF file's functions (see
 * funcmatch.h). */
#include "funcmatch.h"
#include "procfile.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "functarget.h"
#include "errf.h"
#include "setup.h"

bool tk_func_is_pattern(const char *name)
{
	return strpbrk(name, "*?[") != NULL;
}

/* glibc's regcomp copies the operand of each '+' (a+ is aa*) and of a
 * bound as many times as it says (a{3} is aaa), nested or in a row:
 * "a+++..." with 22 took 800 MB when fuzzed. An upper bound of the
 * copies (every '+' doubling, every {m,n} multiplying by n + 1, escaped
 * or in a bracket or not) must stay under this. */
#define TK_REGEX_MAX_COPIES 256

static bool regex_too_big(const char *s)
{
	unsigned long copies = 1, n;

	for (; *s; s++) {
		if (*s == '+') {
			copies *= 2;
		} else if (*s == '{') {
			const char *p = s + 1;

			char *q;

			n = strtoul(p, (char **)&p, 10);
			/* {m,n}: n copies; {m,}: m and a star */
			if (*p == ',' && (unsigned long)strtoul(p + 1, &q, 10) > n)
				n = strtoul(p + 1, NULL, 10);
			copies *= (n < RE_DUP_MAX ? n : RE_DUP_MAX) + 1;
		}
		if (copies > TK_REGEX_MAX_COPIES)
			return true;
	}
	return false;
}

int tk_func_pattern_init(struct tk_func_pattern *p, const char *text,
			 bool regex, char *err, size_t errlen)
{
	char *anchored;
	int r;

	memset(p, 0, sizeof(*p));
	p->text = text;
	p->regex = regex;
	if (!*text)
		return tk_errf(err, errlen, -EINVAL, "empty function pattern");
	if (!regex)
		return 0;
	if (regex_too_big(text))
		return tk_errf(err, errlen, -EINVAL,
			      "too many repetitions ('+', '{m,n}') in the regex: glibc would compile over %d copies of a part of it",
			      TK_REGEX_MAX_COPIES);
	/* The whole name, as bcc's re.fullmatch: "vfs_read" does not
	 * match vfs_readv. */
	if (asprintf(&anchored, "^(%s)$", text) < 0)
		return tk_errf(err, errlen, -ENOMEM, "out of memory");
	r = regcomp(&p->re, anchored, REG_EXTENDED | REG_NOSUB);
	free(anchored);
	if (r) {
		char why[128];

		regerror(r, &p->re, why, sizeof(why));
		p->regex = false;
		return tk_errf(err, errlen, -EINVAL,
			      "not a POSIX extended regular expression: %s", why);
	}
	return 0;
}

bool tk_func_pattern_match(const struct tk_func_pattern *p, const char *name)
{
	if (p->regex)
		return !regexec(&p->re, name, 0, NULL, 0);
	return !fnmatch(p->text, name, 0);
}

void tk_func_pattern_free(struct tk_func_pattern *p)
{
	if (p->regex)
		regfree(&p->re);
	p->regex = false;
}

void tk_func_list_free(struct tk_func_list *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static int add_func(struct tk_func_list *l, const char *name, size_t len,
		    unsigned long long addr)
{
	struct tk_func *v;

	/* Grow by powers of two. */
	if (!(l->n & (l->n - 1)) || !l->n) {
		v = realloc(l->v, (l->n ? l->n * 2 : 16) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		l->v = v;
	}
	l->v[l->n].name = strndup(name, len);
	if (!l->v[l->n].name)
		return -ENOMEM;
	l->v[l->n++].addr = addr;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct tk_func *)a)->name,
		      ((const struct tk_func *)b)->name);
}

/* Sort by name and drop repeats (static functions of one name in
 * several files: probing by name reaches the first one anyway). */
static void sort_unique(struct tk_func_list *l)
{
	size_t i, kept = 0;

	if (!l->n)
		return;
	qsort(l->v, l->n, sizeof(*l->v), by_name);
	for (i = 0; i < l->n; i++) {
		if (kept && !strcmp(l->v[kept - 1].name, l->v[i].name)) {
			free(l->v[i].name);
			continue;
		}
		l->v[kept++] = l->v[i];
	}
	l->n = kept;
}

/* ---- kernel functions ---- */

/* One name per line, "vfs_read" or "fn [module]". */
static int match_filter_file(const struct tk_func_pattern *p, FILE *f,
			     struct tk_func_list *out)
{
	char line[512];
	int err;

	while (fgets(line, sizeof(line), f)) {
		size_t n = strcspn(line, " \t\n");

		line[n] = 0;
		/* functions ftrace lost track of (6.5+ lists them so) */
		if (!n || !strncmp(line, "__ftrace_invalid_address__", 26))
			continue;
		if (tk_func_pattern_match(p, line) &&
		    (err = add_func(out, line, n, 0)))
			return err;
	}
	return 0;
}

/* The debugfs kprobe blacklist, "0xstart-0xend\tname" per line, as one
 * string "\nname1\nname2\n" to search in; NULL when unreadable. */
static char *read_blacklist(const char *path)
{
	char line[512], *all = NULL;
	size_t len = 0;
	FILE *f = path ? fopen(path, "re") : NULL, *m;

	if (!f)
		return NULL;
	m = open_memstream(&all, &len);
	if (m) {
		fputc('\n', m);
		while (fgets(line, sizeof(line), f)) {
			char *name = strpbrk(line, " \t");

			if (!name)
				continue;
			name += strspn(name, " \t");
			name[strcspn(name, " \t\n")] = 0;
			fprintf(m, "%s\n", name);
		}
		fclose(m);
	}
	fclose(f);
	return all;
}

static bool blacklisted(const char *bl, const char *name)
{
	char key[520];

	if (!bl)
		return false;
	snprintf(key, sizeof(key), "\n%s\n", name);
	return strstr(bl, key) != NULL;
}

/* Names bcc's get_kprobe_functions leaves out as never attachable:
 * NOKPROBE_SYMBOL markers, perf's own functions (perf runs the probe),
 * static-call trampolines, and gcc's split-off .cold parts. */
static bool never_probed(const char *name)
{
	return !strncmp(name, "_kbl_addr_", 10) || !strncmp(name, "__perf", 6) ||
	       !strncmp(name, "perf_", 5) || !strncmp(name, "__SCT__", 7) ||
	       strstr(name, ".cold");
}

/* kallsyms: "ffffffff816b89f0 T vfs_read" or "... t fn\t[module]". The
 * text symbols between __irqentry_text_start and _end (entry code that
 * kprobes refuse) are skipped, as bcc does. */
static int match_kallsyms(const struct tk_func_pattern *p, FILE *f,
			  const char *blacklist, struct tk_func_list *out)
{
	char line[512], *bl = read_blacklist(blacklist);
	bool in_irq = false;
	int err = 0;

	while (!err && fgets(line, sizeof(line), f)) {
		unsigned long long addr;
		char type, *name;
		int off = 0;

		if (sscanf(line, "%llx %c %n", &addr, &type, &off) < 2 || !off)
			continue;
		name = line + off;
		name[strcspn(name, " \t\n")] = 0;
		if (!strcmp(name, "__irqentry_text_start"))
			in_irq = true;
		else if (!strcmp(name, "__irqentry_text_end"))
			in_irq = false;
		if (in_irq || !*name || !strchr("tTwW", type) || never_probed(name) ||
		    !tk_func_pattern_match(p, name) || blacklisted(bl, name))
			continue;
		err = add_func(out, name, strlen(name), addr);
	}
	free(bl);
	return err;
}

int tk_kernel_funcs_match(const struct tk_func_pattern *p, const char *filter,
			  const char *kallsyms, const char *blacklist,
			  struct tk_func_list *out)
{
	FILE *f = filter ? tk_proc_fopen(filter) : NULL;
	int err;

	out->binary[0] = 0;
	if (f) {
		out->source = "available_filter_functions";
		err = match_filter_file(p, f, out);
	} else {
		f = tk_proc_fopen(kallsyms);
		if (!f)
			return -ENOENT;
		out->source = "kallsyms";
		err = match_kallsyms(p, f, blacklist, out);
	}
	tk_proc_fclose(f);
	sort_unique(out);
	return err;
}

static int by_addr(const void *a, const void *b)
{
	unsigned long long x = ((const struct tk_func *)a)->addr;
	unsigned long long y = ((const struct tk_func *)b)->addr;

	return x < y ? -1 : x > y;
}

int tk_kernel_funcs_addrs(struct tk_func_list *l, const char *kallsyms)
{
	FILE *f;
	char line[512];
	size_t i;

	if (!l->n)
		return access(kallsyms, R_OK) ? -ENOENT : 0;
	if (!(f = tk_proc_fopen(kallsyms)))
		return -ENOENT;
	/* l is in name order: find each symbol by bsearch. */
	while (fgets(line, sizeof(line), f)) {
		struct tk_func key, *hit;
		unsigned long long addr;
		char type, *name;
		int off = 0;

		if (sscanf(line, "%llx %c %n", &addr, &type, &off) < 2 || !off ||
		    !strchr("tTwW", type))
			continue;
		name = line + off;
		name[strcspn(name, " \t\n")] = 0;
		key.name = name;
		hit = bsearch(&key, l->v, l->n, sizeof(*l->v), by_name);
		if (hit && !hit->addr)
			hit->addr = addr;
	}
	tk_proc_fclose(f);
	for (i = 0; i < l->n; i++)
		if (!l->v[i].addr)
			return -ENOENT;
	tk_func_list_sort_addr(l);
	return 0;
}

void tk_func_list_sort_addr(struct tk_func_list *l)
{
	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), by_addr);
}

/* ---- user functions ---- */

/* Rank of a symbol for the one name kept per address: a global name
 * over a weak one over a local one. */
static int bind_rank(const GElf_Sym *s)
{
	switch (GELF_ST_BIND(s->st_info)) {
	case STB_GLOBAL: return 0;
	case STB_WEAK: return 1;
	default: return 2;
	}
}

struct elf_hit {
	unsigned long long off;
	int rank;
	const char *name;  /* in the ELF file's string table */
};

static int by_off(const void *a, const void *b)
{
	const struct elf_hit *x = a, *y = b;
	size_t lx = strlen(x->name), ly = strlen(y->name);

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	/* memcpy before __memcpy: the shorter name is the public one */
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The file offset of the code at vaddr, through its section (as
 * libbpf's elf_find_func_offset does). */
static bool sym_offset(Elf *elf, const GElf_Sym *sym, unsigned long long *off)
{
	Elf_Scn *scn = elf_getscn(elf, sym->st_shndx);
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh) || sym->st_value < sh.sh_addr)
		return false;
	*off = sym->st_value - sh.sh_addr + sh.sh_offset;
	return true;
}

static int scan_syms(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
		     const struct tk_func_pattern *p, struct elf_hit **hits,
		     size_t *n, size_t *cap)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, count;

	if (!data || !sh->sh_entsize)
		return 0;
	count = data->d_size / sh->sh_entsize;
	for (i = 0; i < count; i++) {
		unsigned long long off;
		const char *name;
		GElf_Sym sym;

		if (!gelf_getsym(data, i, &sym) ||
		    GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE ||
		    !sym.st_value)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !*name || !tk_func_pattern_match(p, name) ||
		    !sym_offset(elf, &sym, &off))
			continue;
		if (*n == *cap) {
			struct elf_hit *h = realloc(*hits, (*cap = *cap * 2 + 64) *
						    sizeof(**hits));

			if (!h)
				return -ENOMEM;
			*hits = h;
		}
		(*hits)[(*n)++] = (struct elf_hit){ off, bind_rank(&sym), name };
	}
	return 0;
}

int tk_elf_funcs_match(const char *path, const struct tk_func_pattern *p,
		       struct tk_func_list *out, char *err, size_t errlen)
{
	struct elf_hit *hits = NULL;
	size_t n = 0, cap = 0, i;
	bool symtab = false;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	int fd, ret = 0;
	Elf *elf;

	if (strlen(path) >= sizeof(out->binary))
		return tk_errf(err, errlen, -ENOENT, "path too long");
	strcpy(out->binary, path);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return tk_errf(err, errlen, -ENOENT, "%s: %s", path, strerror(errno));
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)) {
		ret = tk_errf(err, errlen, -ENOEXEC,
			     "%s is not an executable or a shared library", path);
		goto out;
	}
	while (!ret && (scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		symtab |= sh.sh_type == SHT_SYMTAB;
		ret = scan_syms(elf, scn, &sh, p, &hits, &n, &cap);
	}
	out->source = symtab ? ".symtab" : ".dynsym";
	/* One function per address: the best-ranked name. */
	if (n)
		qsort(hits, n, sizeof(*hits), by_off);
	for (i = 0; !ret && i < n; i++)
		if (!i || hits[i].off != hits[i - 1].off)
			ret = add_func(out, hits[i].name, strlen(hits[i].name),
				       hits[i].off);
	if (ret)
		tk_errf(err, errlen, ret, "%s", strerror(-ret));
	sort_unique(out);
out:
	free(hits);
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

/* ---- tracepoints ---- */

/* The tracepoints of category cat matching p, into out; 0 or -ENOMEM. */
static int match_category(const char *events_dir, const char *cat,
			  const struct tk_func_pattern *p,
			  struct tk_func_list *out)
{
	char path[PATH_MAX], *full;
	struct dirent *e;
	DIR *d;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/%s", events_dir, cat);
	d = opendir(path);
	if (!d)
		return 0;
	while (!ret && (e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.' ||
		    !tk_func_pattern_match(p, e->d_name))
			continue;
		if (asprintf(&full, "%s:%s", cat, e->d_name) < 0)
			ret = -ENOMEM;
		else
			ret = add_func(out, full, strlen(full), 0);
		free(full);
	}
	closedir(d);
	return ret;
}

int tk_tracepoints_match(const char *spec, bool regex, const char *events_dir,
			 struct tk_func_list *out, char *err, size_t errlen)
{
	const char *colon = strchr(spec, ':');
	struct tk_func_pattern cp, np;
	char cat[256];
	struct dirent *e;
	bool any_cat = false;
	int ret;
	DIR *d;

	memset(out, 0, sizeof(*out));
	out->source = "tracefs events/";
	if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof(cat) ||
	    !colon[1] || (!regex && strchr(colon + 1, ':')))
		return tk_errf(err, errlen, -EINVAL,
			      "expected t:CATEGORY:NAME, such as t:syscalls:sys_enter_get*");
	snprintf(cat, sizeof(cat), "%.*s", (int)(colon - spec), spec);
	if (!regex && (strchr(cat, '/') || strchr(colon + 1, '/')))
		return tk_errf(err, errlen, -EINVAL,
			      "expected t:CATEGORY:NAME, such as t:syscalls:sys_enter_get*");
	ret = tk_func_pattern_init(&cp, cat, regex, err, errlen);
	if (ret)
		return ret;
	ret = tk_func_pattern_init(&np, colon + 1, regex, err, errlen);
	if (ret) {
		tk_func_pattern_free(&cp);
		return ret;
	}
	d = events_dir ? opendir(events_dir) : NULL;
	if (!d)
		ret = tk_errf(err, errlen, -ENOENT,
			     "cannot list the kernel's tracepoints: tracefs events/ cannot be read");
	while (d && !ret && (e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.' ||
		    !tk_func_pattern_match(&cp, e->d_name))
			continue;
		any_cat = true;
		ret = match_category(events_dir, e->d_name, &np, out);
	}
	if (d)
		closedir(d);
	tk_func_pattern_free(&cp);
	tk_func_pattern_free(&np);
	if (ret)
		return ret == -ENOMEM ? tk_errf(err, errlen, ret, "out of memory") : ret;
	if (!any_cat)
		return tk_errf(err, errlen, -ENOENT,
			      "no tracepoint category matches %s'%s' (tracefs events/ lists those this kernel has)",
			      regex ? "the regex " : "", cat);
	if (!out->n)
		return tk_errf(err, errlen, -ENOENT,
			      "no tracepoint matches %s'%s' in %s (tracefs events/ lists those this kernel has)",
			      regex ? "the regex " : "", colon + 1, cat);
	if (out->n > TK_FUNC_LIMIT)
		return tk_errf(err, errlen, -E2BIG,
			      "'%s' matches %zu tracepoints, more than %d (bcc's probe limit); narrow the pattern",
			      spec, out->n, TK_FUNC_LIMIT);
	sort_unique(out);
	return (int)out->n;
}

/* ---- the whole spec ---- */

/* Where available_filter_functions is, mounting tracefs when needed. */
static const char *filter_file(void)
{
	static char path[128];

	return tk_tracefs_file("available_filter_functions", path, sizeof(path));
}

int tk_func_match(const char *spec, bool regex, pid_t pid,
		  struct tk_func_list *out, char *err, size_t errlen)
{
	const char *colon = regex ? strchr(spec, ':') : strrchr(spec, ':');
	const char *pat = colon ? colon + 1 : spec;
	struct tk_func_pattern p;
	char obj[PATH_MAX];
	int ret;

	memset(out, 0, sizeof(*out));
	if (colon && (colon == spec || (size_t)(colon - spec) >= sizeof(obj)))
		return tk_errf(err, errlen, -EINVAL,
			      "expected PATTERN (kernel functions) or LIB:PATTERN");
	ret = tk_func_pattern_init(&p, pat, regex, err, errlen);
	if (ret)
		return ret;
	if (colon) {
		snprintf(obj, sizeof(obj), "%.*s", (int)(colon - spec), spec);
		ret = tk_func_object_resolve(obj, pid, out->binary,
					     sizeof(out->binary), err, errlen);
		if (!ret)
			ret = tk_elf_funcs_match(out->binary, &p, out, err, errlen);
	} else {
		ret = tk_kernel_funcs_match(&p, filter_file(), "/proc/kallsyms",
					    "/sys/kernel/debug/kprobes/blacklist",
					    out);
		if (ret)
			tk_errf(err, errlen, ret, "cannot read the kernel's functions (available_filter_functions, /proc/kallsyms): %s",
			       strerror(-ret));
	}
	tk_func_pattern_free(&p);
	if (ret)
		return ret;
	if (!out->n)
		return tk_errf(err, errlen, -ENOENT, "no %s matches %s'%s' (%s%s%s)",
			      out->binary[0] ? "function" : "kernel function",
			      regex ? "the regex " : "", pat,
			      out->binary[0] ? out->binary : "",
			      out->binary[0] ? ": " : "", out->source);
	if (out->n > TK_FUNC_LIMIT)
		return tk_errf(err, errlen, -E2BIG,
			      "'%s' matches %zu functions, more than %d (bcc's probe limit); narrow the pattern: a longer prefix than '%.*s', or fewer alternatives",
			      pat, out->n, TK_FUNC_LIMIT,
			      (int)strcspn(pat, "*?[(|."), pat);
	return (int)out->n;
}

int tk_func_spec_resolve(const char *spec, bool regex, pid_t pid,
			 struct tk_func_target *t, struct tk_func_list *l,
			 const char **func_part, char *err, size_t errlen)
{
	/* A regex may hold colons: its OBJ ends at the first one. */
	const char *c = regex ? strchr(spec, ':') : strrchr(spec, ':');
	int n;

	memset(l, 0, sizeof(*l));
	*func_part = c ? c + 1 : spec;
	if (!regex && !tk_func_is_pattern(*func_part))
		return tk_func_target_resolve(spec, pid, t, err, errlen) ?: 1;
	n = tk_func_match(spec, regex, pid, l, err, errlen);
	if (n == 1) {
		memset(t, 0, sizeof(*t));
		snprintf(t->binary, sizeof(t->binary), "%s", l->binary);
		snprintf(t->func, sizeof(t->func), "%s", l->v[0].name);
		tk_func_list_free(l);
	}
	return n;
}
