/* Kernel addresses named by the kernel (ksymbpf.h). The program's text
 * for an address A is the kernel's sprint_backtrace(A): it looks up
 * A - 1 (a return address's call) and prints the offset of A. Asked for
 * A + 1, it names A itself, with A's offset plus one. */
#include "ksymbpf.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib_ksym.skel.h"
#include "setup.h"

struct named {
	unsigned long long addr;
	char *name;              /* NULL: unknown */
	const char *module;      /* "kernel", or an entry of mods */
	unsigned long long offset;
	bool used;
};

struct tk_ksym_bpf {
	struct lib_ksym_bpf *skel;
	struct named *slots;     /* open addressing by addr */
	size_t cap, used;
	char **mods;             /* module names, interned */
	size_t nmods;
};

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level, (void)fmt, (void)ap;
	return 0;
}

struct tk_ksym_bpf *tk_ksym_bpf_open(void)
{
	const char *knob = getenv("TRACEKIT_KSYMS");
	libbpf_print_fn_t old;
	struct tk_ksym_bpf *k;

	if (knob && !strcmp(knob, "kallsyms"))
		return NULL;
	if (!(k = calloc(1, sizeof(*k))))
		return NULL;
	/* A kernel without syscall programs refuses the load: that is an
	 * answer, not an error to print. */
	old = libbpf_set_print(silent);
	k->skel = lib_ksym_bpf__open_and_load();
	libbpf_set_print(old);
	if (!k->skel) {
		free(k);
		return NULL;
	}
	return k;
}

void tk_ksym_bpf_free(struct tk_ksym_bpf *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->cap; i++)
		free(k->slots[i].name);
	free(k->slots);
	for (size_t i = 0; i < k->nmods; i++)
		free(k->mods[i]);
	free(k->mods);
	lib_ksym_bpf__destroy(k->skel);
	free(k);
}

static struct named *slot_of(struct tk_ksym_bpf *k, unsigned long long addr)
{
	size_t i = (size_t)((addr * 0x9e3779b97f4a7c15ULL) >> 20) & (k->cap - 1);

	while (k->slots[i].used && k->slots[i].addr != addr)
		i = (i + 1) & (k->cap - 1);
	return &k->slots[i];
}

static void grow(struct tk_ksym_bpf *k)
{
	struct named *old = k->slots;
	size_t oldcap = k->cap;

	k->cap = oldcap ? oldcap * 2 : 1024;
	if (!(k->slots = calloc(k->cap, sizeof(*k->slots))))
		tk_fail("out of memory");
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].used)
			*slot_of(k, old[i].addr) = old[i];
	free(old);
}

static const char *intern_mod(struct tk_ksym_bpf *k, const char *m, size_t len)
{
	char **nm;

	for (size_t i = 0; i < k->nmods; i++)
		if (!strncmp(k->mods[i], m, len) && !k->mods[i][len])
			return k->mods[i];
	if (!(nm = realloc(k->mods, (k->nmods + 1) * sizeof(*nm))) ||
	    !(nm[k->nmods] = strndup(m, len)))
		tk_fail("out of memory");
	k->mods = nm;
	return k->mods[k->nmods++];
}

/* text: "name+0xOFF/0xSIZE" then " [module]" (a module's or a BPF
 * program's), or "0x..." for an address of no symbol. */
static bool parse(struct tk_ksym_bpf *k, const char *text, struct named *n)
{
	const char *plus = strrchr(text, '+'), *mod = strstr(text, " [");
	unsigned long long off;
	char *end;

	/* No symbol: "kernel" for an address in the kernel's half (the top
	 * bit set, on x86-64 and arm64), as ksyms.c says of one between
	 * its symbols; none below. */
	n->module = (int64_t)n->addr < 0 ? "kernel" : NULL;
	if (!strncmp(text, "0x", 2) && !plus)
		return true;
	n->module = "kernel";
	if (!plus || plus == text || strncmp(plus, "+0x", 3))
		return false;
	off = strtoull(plus + 3, &end, 16);
	if (*end != '/' || !off)
		return false;
	if (mod) {
		const char *close = strchr(mod + 2, ']');

		if (!close)
			return false;
		n->module = intern_mod(k, mod + 2, (size_t)(close - mod - 2));
	}
	if (!(n->name = strndup(text, (size_t)(plus - text))))
		tk_fail("out of memory");
	n->offset = off - 1;
	return true;
}

bool tk_ksym_bpf_lookup(struct tk_ksym_bpf *k, unsigned long long addr, struct tk_sym *out)
{
	LIBBPF_OPTS(bpf_test_run_opts, run);
	struct named *n;
	const char *text;

	if (k->used * 2 >= k->cap)
		grow(k);
	n = slot_of(k, addr);
	if (!n->used) {
		k->skel->bss->addr = addr + 1;
		k->skel->bss->out[0] = '\0';
		if (bpf_prog_test_run_opts(bpf_program__fd(k->skel->progs.ksym_name), &run))
			return false;
		text = k->skel->bss->out;
		/* A name that filled the buffer may be cut. */
		if (strnlen(text, sizeof(k->skel->bss->out)) >= sizeof(k->skel->bss->out) - 1)
			return false;
		n->addr = addr;
		if (!*text || !parse(k, text, n))
			return false;
		n->used = true;
		k->used++;
	}
	*out = (struct tk_sym){ n->name, n->module, n->name ? n->offset : addr, false };
	return true;
}
