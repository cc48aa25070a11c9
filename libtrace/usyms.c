/* One ELF file's symbols, through elfutils' libdwfl.
 *
 * The file is reported alone in a Dwfl of its own at base 0 with
 * add_p_vaddr, so module addresses are the file's own virtual addresses
 * (bias 0) for ET_EXEC and ET_DYN alike; symbolize.c turns a process
 * address into one through the mapping and tk_elf_off2vaddr. libdwfl
 * finds the best symbol table (.symtab, else separate debug info by
 * build-id or .gnu_debuglink, else .dynsym plus MiniDebugInfo).
 *
 * Lookups do not use dwfl_module_addrinfo: in elfutils 0.188 it scans the
 * whole symbol table on every call, and libLLVM has ~100k symbols. The
 * function symbols are copied once into a sorted array (names stay in
 * libdwfl's string tables) and binary-searched; results are cached per
 * address, since a profile sees the same few thousand addresses again
 * and again. DWARF is only opened for inline frames. */
#include "symbolize_int.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Results cached per file before the cache is dropped and refilled:
 * bounds memory (~48 bytes an entry without inline frames). */
#define CACHE_MAX (1u << 18)

struct fsym {
	unsigned long long addr, size;
	const char *name;
	int rank;
	int idx;       /* in libdwfl's symbol table */
};

struct seg {
	unsigned long long off, filesz, memsz, vaddr;
};

struct centry {
	unsigned long long vaddr;
	uint32_t first;  /* index in frames; UINT32_MAX = empty slot */
	uint32_t n;
};

enum { E_NEW, E_LOADED, E_FAILED };

struct tk_elf {
	int fd;
	int state;
	char *name, *dir_path;
	char **debuginfo_path;
	Dwfl_Callbacks cb;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct seg *segs;
	size_t nsegs;
	struct fsym *syms;
	size_t nsyms;
	/* Result cache: open addressing over vaddr. */
	struct centry *tab;
	size_t tab_cap, tab_n;
	struct tk_sym *frames;
	size_t nframes, frames_cap;
};

struct tk_elf *tk_elf_new(int fd, const char *name, const char *dir_path,
			  char **debuginfo_path)
{
	struct tk_elf *e = calloc(1, sizeof(*e));

	if (!e || !(e->name = strdup(name)) ||
	    (dir_path && !(e->dir_path = strdup(dir_path)))) {
		if (e)
			free(e->name);
		free(e);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	e->fd = fd;
	e->debuginfo_path = debuginfo_path;
	return e;
}

void tk_elf_free(struct tk_elf *e)
{
	if (!e)
		return;
	if (e->dwfl)
		dwfl_end(e->dwfl);
	if (e->fd >= 0)
		close(e->fd);
	free(e->segs);
	free(e->syms);
	free(e->tab);
	free(e->frames);
	free(e->dir_path);
	free(e->name);
	free(e);
}

const char *tk_elf_name(const struct tk_elf *e)
{
	return e->name;
}

bool tk_elf_needs_fd(const struct tk_elf *e)
{
	return e->state == E_NEW && e->fd < 0;
}

void tk_elf_set_fd(struct tk_elf *e, int fd)
{
	if (e->fd >= 0)
		close(e->fd);
	e->fd = fd;
}

bool tk_elf_holds_fd(const struct tk_elf *e)
{
	return e->fd >= 0;
}

size_t tk_elf_nsyms(const struct tk_elf *e)
{
	return e->nsyms;
}

static bool load(struct tk_elf *e);

/* The file's call frame information: .eh_frame, else .debug_frame (in
 * the file or its separate debug info). Module addresses are the file's
 * own virtual addresses (reported at base 0, see above); *bias is what
 * to subtract from one to look it up in the CFI. */
void *tk_elf_cfi(struct tk_elf *e, unsigned long long *bias)
{
	Dwarf_Addr b = 0;
	Dwarf_CFI *cfi;

	if (!load(e))
		return NULL;
	cfi = dwfl_module_eh_cfi(e->mod, &b);
	if (!cfi)
		cfi = dwfl_module_dwarf_cfi(e->mod, &b);
	*bias = b;
	return cfi;
}

static int cmp_fsym(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return 0;
}

/* Symbols a code address can be in: functions, and sized untyped
 * symbols (hand-written assembly often leaves the type out). */
static bool code_sym(const GElf_Sym *sym, GElf_Word shndx)
{
	int type = GELF_ST_TYPE(sym->st_info);

	if (shndx == SHN_UNDEF || shndx == SHN_ABS || (int)shndx == -1)
		return false;
	return type == STT_FUNC || type == STT_GNU_IFUNC ||
	       (type == STT_NOTYPE && sym->st_size);
}

/* Among symbols at one address, which to show: global, then weak, then
 * local (as eu-addr2line does); the longer size breaks ties. */
static int bind_rank(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL: return 3;
	case STB_WEAK: return 2;
	case STB_GNU_UNIQUE: return 2;
	default: return 1;
	}
}

static bool load_syms(struct tk_elf *e)
{
	int n = dwfl_module_getsymtab(e->mod), i;
	struct fsym *v;
	size_t cnt = 0, j, k;

	if (n <= 1)
		return true;
	if (!(v = malloc((size_t)n * sizeof(*v))))
		return false;
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(e->mod, i, &sym, &addr,
							   &shndx, NULL, NULL);

		if (!name || !*name || !addr || !code_sym(&sym, shndx))
			continue;
		v[cnt].addr = addr;
		v[cnt].size = sym.st_size;
		v[cnt].name = name;
		v[cnt].rank = bind_rank(&sym);
		v[cnt].idx = i;
		cnt++;
	}
	qsort(v, cnt, sizeof(*v), cmp_fsym);
	/* One entry per address: a sized one (an alias without a size
	 * must not hide its sized twin), then the best binding, then the
	 * larger size, then the first in the symbol table (C1/C2
	 * constructor twins: the one eu-addr2line and addr2line show). */
	for (j = k = 0; j < cnt; j++) {
		if (k && v[k - 1].addr == v[j].addr) {
			struct fsym *a = &v[k - 1], *b = &v[j];
			bool better = (!!b->size != !!a->size) ? !!b->size :
				b->rank != a->rank ? b->rank > a->rank :
				b->size != a->size ? b->size > a->size :
				b->idx < a->idx;

			if (better)
				*a = *b;
			continue;
		}
		v[k++] = v[j];
	}
	e->syms = k ? v : NULL;
	e->nsyms = k;
	if (!k)
		free(v);
	return true;
}

static bool load_segs(struct tk_elf *e)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(e->mod, &bias);
	size_t phnum, i;

	if (!elf || elf_getphdrnum(elf, &phnum))
		return false;
	e->segs = calloc(phnum ? phnum : 1, sizeof(*e->segs));
	if (!e->segs)
		return false;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		e->segs[e->nsegs++] = (struct seg){ ph.p_offset, ph.p_filesz,
						    ph.p_memsz, ph.p_vaddr };
	}
	return true;
}

/* Open the file in libdwfl and read its segments and symbols, once. */
static bool load(struct tk_elf *e)
{
	if (e->state != E_NEW)
		return e->state == E_LOADED;
	if (e->fd < 0)
		return false;
	e->state = E_FAILED;
	e->cb.find_elf = dwfl_build_id_find_elf;
	e->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	e->cb.section_address = dwfl_offline_section_address;
	e->cb.debuginfo_path = e->debuginfo_path;
	e->dwfl = dwfl_begin(&e->cb);
	if (!e->dwfl)
		return false;
	dwfl_report_begin(e->dwfl);
	/* On success the descriptor belongs to libdwfl (it closes it in
	 * dwfl_end); on failure it is still ours. */
	e->mod = dwfl_report_elf(e->dwfl, e->name,
				 e->dir_path ? e->dir_path : e->name,
				 e->fd, 0, true);
	dwfl_report_end(e->dwfl, NULL, NULL);
	if (!e->mod) {
		close(e->fd);
		e->fd = -1;
		return false;
	}
	e->fd = -1;
	if (!load_segs(e) || !load_syms(e))
		return false;
	e->state = E_LOADED;
	return true;
}

bool tk_elf_off2vaddr(struct tk_elf *e, unsigned long long off,
		      unsigned long long *vaddr)
{
	size_t i;

	if (!load(e))
		return false;
	for (i = 0; i < e->nsegs; i++) {
		const struct seg *s = &e->segs[i];

		if (off >= s->off && off - s->off < s->filesz) {
			*vaddr = off - s->off + s->vaddr;
			return true;
		}
	}
	/* Past the file's bytes of a segment (its .bss): still that
	 * segment's address, though no code lives there. */
	for (i = 0; i < e->nsegs; i++) {
		const struct seg *s = &e->segs[i];

		if (off >= s->off && off - s->off < s->memsz) {
			*vaddr = off - s->off + s->vaddr;
			return true;
		}
	}
	return false;
}

/* The function symbol holding vaddr, or NULL. */
static const struct fsym *find_sym(const struct tk_elf *e, unsigned long long vaddr)
{
	size_t lo = 0, hi = e->nsyms, j, steps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	/* A symbol without size runs to the next one; a sized one ends at
	 * its size, but may nest in an enclosing one just before it. */
	for (j = lo, steps = 0; j-- > 0 && steps < 8; steps++) {
		const struct fsym *f = &e->syms[j];

		if (!f->size)
			return j == lo - 1 ? f : NULL;
		if (vaddr - f->addr < f->size)
			return f;
	}
	return NULL;
}

/* Inline frames at vaddr from DWARF, innermost first, into out; returns
 * how many (0 when there is no DWARF or no inlining here). The frame of
 * the containing function is not included. */
static int inline_frames(struct tk_elf *e, unsigned long long vaddr,
			 struct tk_sym *out, int max)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(e->mod, vaddr, &bias);
	Dwarf_Die *scopes = NULL, *chain = NULL;
	int n, i, cnt = 0;

	if (!cu)
		return 0;
	/* dwarf_getscopes gives the innermost scope at pc, but past an
	 * inlined instance it continues with the abstract definition's
	 * parents, not the functions it was inlined into; those are the
	 * physical parents of the innermost inlined DIE (as eu-addr2line
	 * -i walks them). */
	n = dwarf_getscopes(cu, vaddr - bias, &scopes);
	for (i = 0; i < n; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_subprogram)
			break;
		if (tag == DW_TAG_inlined_subroutine) {
			n = dwarf_getscopes_die(&scopes[i], &chain);
			break;
		}
	}
	for (i = 0; chain && i < n && cnt < max; i++) {
		int tag = dwarf_tag(&chain[i]);
		Dwarf_Addr entry;

		if (tag == DW_TAG_subprogram)
			break;
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		/* The name is the abstract origin's: dwarf_diename follows
		 * DW_AT_abstract_origin. */
		out[cnt].name = dwarf_diename(&chain[i]);
		out[cnt].module = e->name;
		out[cnt].offset = 0;
		if (!dwarf_entrypc(&chain[i], &entry) && vaddr - bias >= entry)
			out[cnt].offset = vaddr - bias - entry;
		out[cnt].inlined = true;
		if (out[cnt].name)
			cnt++;
	}
	free(chain);
	free(scopes);
	return cnt;
}

static int resolve(struct tk_elf *e, unsigned long long vaddr, bool inl,
		   struct tk_sym *out, int max)
{
	const struct fsym *f;
	int n = 0;

	if (inl && max > 1)
		n = inline_frames(e, vaddr, out, max - 1);
	f = find_sym(e, vaddr);
	out[n].module = e->name;
	out[n].inlined = false;
	out[n].name = f ? f->name : NULL;
	out[n].offset = f ? vaddr - f->addr : vaddr;
	return n + 1;
}

static size_t hash_addr(unsigned long long a)
{
	a ^= a >> 33;
	a *= 0xff51afd7ed558ccdULL;
	a ^= a >> 33;
	return (size_t)a;
}

static void cache_clear(struct tk_elf *e)
{
	size_t i;

	for (i = 0; i < e->tab_cap; i++)
		e->tab[i].first = UINT32_MAX;
	e->tab_n = 0;
	e->nframes = 0;
}

static struct centry *cache_slot(struct tk_elf *e, unsigned long long vaddr)
{
	size_t i = hash_addr(vaddr) & (e->tab_cap - 1);

	while (e->tab[i].first != UINT32_MAX && e->tab[i].vaddr != vaddr)
		i = (i + 1) & (e->tab_cap - 1);
	return &e->tab[i];
}

static bool cache_grow(struct tk_elf *e)
{
	size_t ncap = e->tab_cap ? e->tab_cap * 2 : 1024, i, ocap = e->tab_cap;
	struct centry *old = e->tab;

	e->tab = malloc(ncap * sizeof(*e->tab));
	if (!e->tab) {
		e->tab = old;
		return false;
	}
	e->tab_cap = ncap;
	for (i = 0; i < ncap; i++)
		e->tab[i].first = UINT32_MAX;
	for (i = 0; i < ocap; i++)
		if (old[i].first != UINT32_MAX)
			*cache_slot(e, old[i].vaddr) = old[i];
	free(old);
	return true;
}

static void cache_put(struct tk_elf *e, unsigned long long vaddr,
		      const struct tk_sym *fr, int n)
{
	struct centry *c;

	if (e->tab_n >= CACHE_MAX)
		cache_clear(e);
	if ((e->tab_n + 1) * 4 > e->tab_cap * 3 && !cache_grow(e))
		return;
	if (e->nframes + (size_t)n > e->frames_cap) {
		size_t ncap = e->frames_cap ? e->frames_cap * 2 : 1024;
		struct tk_sym *nf;

		while (ncap < e->nframes + (size_t)n)
			ncap *= 2;
		if (!(nf = realloc(e->frames, ncap * sizeof(*nf))))
			return;
		e->frames = nf;
		e->frames_cap = ncap;
	}
	c = cache_slot(e, vaddr);
	c->vaddr = vaddr;
	c->first = (uint32_t)e->nframes;
	c->n = (uint32_t)n;
	memcpy(e->frames + e->nframes, fr, (size_t)n * sizeof(*fr));
	e->nframes += (size_t)n;
	e->tab_n++;
}

int tk_elf_lookup(struct tk_elf *e, unsigned long long vaddr, bool inl,
		  bool cache, struct tk_sym *out, int max)
{
	struct tk_sym buf[64];
	int n;

	if (!load(e)) {
		out[0] = (struct tk_sym){ NULL, e->name, vaddr, false };
		return 1;
	}
	if (cache && e->tab_cap) {
		struct centry *c = cache_slot(e, vaddr);

		if (c->first != UINT32_MAX) {
			/* Cached with room for up to 64 frames: a smaller
			 * max keeps the innermost ones and the function. */
			n = (int)c->n;
			if (n <= max) {
				memcpy(out, e->frames + c->first, (size_t)n * sizeof(*out));
				return n;
			}
			memcpy(out, e->frames + c->first, (size_t)(max - 1) * sizeof(*out));
			out[max - 1] = e->frames[c->first + (size_t)n - 1];
			return max;
		}
	}
	if (!cache)
		return resolve(e, vaddr, inl, out, max);
	n = resolve(e, vaddr, inl, buf, 64);
	cache_put(e, vaddr, buf, n);
	if (n > max) {
		memcpy(out, buf, (size_t)(max - 1) * sizeof(*out));
		out[max - 1] = buf[n - 1];
		return max;
	}
	memcpy(out, buf, (size_t)n * sizeof(*out));
	return n;
}
