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
#include "strtab.h"
#include "u64map.h"

struct named {
	char *name;              /* NULL: unknown */
	const char *module;      /* "kernel", or an entry of mods */
	unsigned long long offset;
};

struct tk_ksym_bpf {
	struct lib_ksym_bpf *skel;
	struct tk_u64map named;  /* by address: each asked once */
	struct tk_strtab mods;   /* module names */
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
	k->named = (struct tk_u64map)TK_U64MAP_INIT(struct named);
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
	struct named *n;
	size_t pos = 0;

	if (!k)
		return;
	while ((n = tk_u64map_next(&k->named, &pos, NULL)))
		free(n->name);
	tk_u64map_free(&k->named);
	tk_strtab_free(&k->mods);
	lib_ksym_bpf__destroy(k->skel);
	free(k);
}

static const char *intern_mod(struct tk_ksym_bpf *k, const char *m, size_t len)
{
	long i = tk_strtab_intern(&k->mods, m, len);

	if (i < 0)
		tk_fail("out of memory");
	return k->mods.strs[i];
}

/* text: "name+0xOFF/0xSIZE" then " [module]" (a module's or a BPF
 * program's), or "0x..." for an address of no symbol. */
static bool parse(struct tk_ksym_bpf *k, unsigned long long addr, const char *text,
		  struct named *n)
{
	const char *plus = strrchr(text, '+'), *mod = strstr(text, " [");
	unsigned long long off;
	char *end;

	/* No symbol: "kernel" for an address in the kernel's half (the top
	 * bit set, on x86-64 and arm64), as ksyms.c says of one between
	 * its symbols; none below. */
	n->module = (int64_t)addr < 0 ? "kernel" : NULL;
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
	struct named *n = tk_u64map_get(&k->named, addr), fresh = { 0 };
	const char *text;

	if (!n) {
		k->skel->bss->addr = addr + 1;
		k->skel->bss->out[0] = '\0';
		if (bpf_prog_test_run_opts(bpf_program__fd(k->skel->progs.ksym_name), &run))
			return false;
		text = k->skel->bss->out;
		/* A name that filled the buffer may be cut. */
		if (strnlen(text, sizeof(k->skel->bss->out)) >= sizeof(k->skel->bss->out) - 1)
			return false;
		if (!*text || !parse(k, addr, text, &fresh))
			return false;
		if (!(n = tk_u64map_put(&k->named, addr, NULL)))
			tk_fail("out of memory");
		*n = fresh;
	}
	*out = (struct tk_sym){ n->name, n->module, n->name ? n->offset : addr, false };
	return true;
}
