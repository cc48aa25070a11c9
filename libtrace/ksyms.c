/* Kernel symbols from /proc/kallsyms: one sorted array, binary search.
 *
 * Every symbol is kept, not only text ones: a data or other non-text
 * symbol after a function marks where that function's code can no longer
 * be (kallsyms has no sizes), so an address past the kernel's text or in
 * a module's data is unknown rather than blamed on the last function.
 * Names share one arena (offsets, so it may grow by realloc), modules are
 * interned; an entry is 16 bytes, ~2 MB for a distribution kernel. */
#include "symbolize_int.h"
#include "procfile.h"
#include "strtab.h"
#include "symparse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ksym {
	unsigned long long addr;
	uint32_t name;      /* offset in names */
	uint16_t mod;       /* index in mods; 0 = "kernel" */
	uint8_t text;       /* t/T/w/W */
	uint8_t rank;       /* preference among symbols at one address */
};

struct tk_ksyms {
	struct ksym *syms;
	size_t n;
	char *names;
	size_t names_len;
	struct tk_strtab mods;   /* module names; 0: "kernel" */
	bool restricted;
};

static bool is_text(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

/* Which of several symbols at one address to show: a text symbol, then
 * a global one, then a weak one; never an empty or local label. */
static uint8_t rank_of(char t)
{
	switch (t) {
	case 'T': return 4;
	case 'W': return 3;
	case 't': return 2;
	case 'w': return 1;
	default: return 0;
	}
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Best first, so dedup keeps the first of a run. */
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	return 0;
}

/* kallsyms lists the kernel's own symbols already in address order and
 * then modules' and BPF's: sort only the tail that is not, and merge.
 * Sorting all 120k+ lines was a fifth of the load's user time. */
static int sort_ksyms(struct ksym *s, size_t n)
{
	size_t sorted = n ? 1 : 0, i, j, o;
	struct ksym *tail;

	while (sorted < n && cmp_ksym(&s[sorted - 1], &s[sorted]) <= 0)
		sorted++;
	if (sorted == n)
		return 0;
	qsort(s + sorted, n - sorted, sizeof(*s), cmp_ksym);
	if (!(tail = malloc((n - sorted) * sizeof(*s))))
		return -1;
	memcpy(tail, s + sorted, (n - sorted) * sizeof(*s));
	/* Merge from the back, so the prefix can stay where it is. */
	i = sorted, j = n - sorted, o = n;
	while (j) {
		if (i && cmp_ksym(&s[i - 1], &tail[j - 1]) > 0)
			s[--o] = s[--i];
		else
			s[--o] = tail[--j];
	}
	free(tail);
	return 0;
}

/* The index of module m[0..len) in k->mods: -1 out of memory, 0
 * (taken as "kernel") past UINT16_MAX modules. */
static int intern_mod(struct tk_ksyms *k, const char *m, size_t len)
{
	long i = tk_strtab_intern(&k->mods, m, len);

	return i > UINT16_MAX ? 0 : (int)i;
}

struct tk_ksyms *tk_ksyms_load(const char *path)
{
	struct tk_ksyms *k = calloc(1, sizeof(*k));
	size_t cap = 0, ncap = 0, lcap = 0, nonzero = 0, i, j;
	char *line = NULL;
	ssize_t len;
	FILE *f;

	if (!k || tk_strtab_intern(&k->mods, "kernel", strlen("kernel")) != 0)
		goto oom;
	f = tk_proc_fopen(path);
	if (!f)
		return k;
	while ((len = getline(&line, &lcap, f)) > 0) {
		struct tk_ksym_line l;
		struct ksym *ks;
		int mod = 0;

		if (tk_parse_kallsyms_line(line, (size_t)len, &l))
			continue;
		if (l.mod && (mod = intern_mod(k, l.mod, l.mod_len)) < 0)
			goto oom_file;
		if (k->n == cap) {
			cap = cap ? cap * 2 : 65536;
			if (!(ks = realloc(k->syms, cap * sizeof(*ks))))
				goto oom_file;
			k->syms = ks;
		}
		if (k->names_len + l.name_len + 1 > ncap) {
			char *nn;

			ncap = ncap ? ncap * 2 : 1 << 20;
			while (ncap < k->names_len + l.name_len + 1)
				ncap *= 2;
			if (ncap > UINT32_MAX || !(nn = realloc(k->names, ncap)))
				goto oom_file;
			k->names = nn;
		}
		ks = &k->syms[k->n++];
		ks->addr = l.addr;
		ks->name = (uint32_t)k->names_len;
		ks->mod = (uint16_t)mod;
		ks->text = is_text(l.type);
		ks->rank = rank_of(l.type);
		memcpy(k->names + k->names_len, l.name, l.name_len);
		k->names_len += l.name_len;
		k->names[k->names_len++] = '\0';
		if (l.addr)
			nonzero++;
	}
	free(line);
	tk_proc_fclose(f);
	if (k->n && !nonzero) {
		/* kptr_restrict hides addresses: nothing to search. */
		k->restricted = true;
		k->n = 0;
		return k;
	}
	if (sort_ksyms(k->syms, k->n))
		goto oom;
	/* One entry per address (the best ranked: first after sorting);
	 * drop zero addresses (absolute symbols, per-CPU offsets). */
	for (i = j = 0; i < k->n; i++) {
		if (!k->syms[i].addr)
			continue;
		if (j && k->syms[j - 1].addr == k->syms[i].addr)
			continue;
		k->syms[j++] = k->syms[i];
	}
	k->n = j;
	return k;

oom_file:
	free(line);
	tk_proc_fclose(f);
oom:
	tk_ksyms_free(k);
	return NULL;
}

void tk_ksyms_free(struct tk_ksyms *k)
{
	if (!k)
		return;
	tk_strtab_free(&k->mods);
	free(k->names);
	free(k->syms);
	free(k);
}

bool tk_ksyms_restricted(const struct tk_ksyms *k)
{
	return k->restricted;
}

size_t tk_ksyms_count(const struct tk_ksyms *k)
{
	return k->n;
}

void tk_ksyms_lookup(const struct tk_ksyms *k, unsigned long long addr,
		     struct tk_sym *out)
{
	size_t lo = 0, hi = k->n;
	const struct ksym *ks;

	out->name = NULL;
	out->module = NULL;
	out->offset = addr;
	out->inlined = false;
	/* Last entry with ks->addr <= addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return;
	ks = &k->syms[lo - 1];
	/* The last symbol of all has no end marker after it; cap it so
	 * that a garbage address far above it stays unknown. */
	if (lo == k->n && addr - ks->addr >= (1ULL << 20))
		return;
	out->module = k->mods.strs[ks->mod];
	if (!ks->text)
		return;
	out->name = k->names + ks->name;
	out->offset = addr - ks->addr;
}
