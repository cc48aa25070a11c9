/* A probe of the generic tracer resolved on this machine (site.h). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "closest.h"
#include "funcmatch.h"
#include "kbtf.h"
#include "probe/site.h"
#include "tracekit.h"
#include "usdt.h"

void tk_probe_site_error(const struct tk_probe_site *site, const char *tool,
			 const struct tk_perr *err)
{
	tk_perr_print(stderr, tool, site->text, err);
	exit(2);
}

static unsigned long long ksym_addr(const char *name, void *arg)
{
	struct tk_func f = { .name = (char *)name };
	struct tk_func_list l = { .v = &f, .n = 1 };

	(void)arg;
	return tk_kernel_funcs_addrs(&l, "/proc/kallsyms") ? 0 : f.addr;
}

static const char *closest_func(const struct btf *btf, const char *name, char *buf, size_t size)
{
	struct tk_closest c;

	tk_closest_init(&c, name);
	for (__u32 id = 1; btf && id < btf__type_cnt(btf); id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);

		if (btf_is_func(t))
			tk_closest_add(&c, btf__name_by_offset(btf, t->name_off));
	}
	return tk_closest_text(&c, buf, size);
}

static void resolve_tracepoint(struct tk_probe_site *p, const char *prefix, int slot)
{
	const char *cat = p->spec.target, *ev = p->spec.name;
	int n;

	if (tk_tracepoint_lookup(cat, ev) != TK_TP_FOUND)
		tk_usage_error("invalid PROBE '%s': no tracepoint %s:%s in this kernel (tplist '%s:*' lists its category)",
			       p->text, cat, ev, cat);
	n = tk_tp_fields(cat, ev, &p->tpf);
	if (n < 0)
		tk_fail("cannot read the fields of %s:%s: %s", cat, ev, strerror(-n));
	p->fields = calloc((size_t)n + 1, sizeof(*p->fields));
	if (!p->fields)
		tk_fail("out of memory");
	for (int i = 0; i < n; i++) {
		struct tk_tp_field *f = &p->tpf[i];
		struct tk_plan_field *pf = &p->fields[i];

		pf->name = f->name;
		pf->type = f->type;
		pf->offset = (int)f->offset;
		pf->size = (int)f->size;
		pf->is_signed = f->is_signed;
		pf->data_loc = !strncmp(f->type, "__data_loc ", 11);
		pf->array = f->array[0] ? atoi(f->array + 1) : 0;
	}
	p->nfields = n;
	snprintf(p->family, sizeof(p->family), "%s_t%d", prefix, slot);
	tk_set_target_tp(p->family, cat, ev);
}

static void resolve_kernel(struct tk_probe_site *p, const char *prefix, int slot)
{
	const struct btf *btf = tk_kernel_btf();
	char near[200];
	int id = btf ? btf__find_by_name_kind(btf, p->spec.name, BTF_KIND_FUNC) : -1;

	if (id > 0) {
		const struct btf_type *fn = btf__type_by_id(btf, (__u32)id);

		p->func_id = id;
		p->nargs = btf_vlen(btf__type_by_id(btf, fn->type));
	} else if (!ksym_addr(p->spec.name, NULL)) {
		tk_usage_error("invalid PROBE '%s': no kernel function '%s'%s", p->text, p->spec.name,
			       closest_func(btf, p->spec.name, near, sizeof(near)));
	}
	snprintf(p->family, sizeof(p->family), "%s_k%s%d", prefix,
		 p->spec.kind == TK_PROBE_KRETPROBE ? "r" : "", slot);
	tk_set_target(p->family, NULL, p->spec.name, -1);
}

static void resolve_user(struct tk_probe_site *p, const char *prefix, int slot)
{
	pid_t pid = tk_filter_attach_pid() > 0 ? tk_filter_attach_pid() : 0;
	char spec[PATH_MAX + 256], err[PATH_MAX + 256];

	snprintf(spec, sizeof(spec), "%s:%s", p->spec.target, p->spec.name);
	if (tk_func_target_resolve(spec, pid, &p->ut, err, sizeof(err)))
		tk_usage_error("invalid PROBE '%s': %s", p->text, err);
	snprintf(p->family, sizeof(p->family), "%s_u%s%d", prefix,
		 p->spec.kind == TK_PROBE_URETPROBE ? "r" : "", slot);
	/* In the filtered process only, when there is one. */
	tk_set_target(p->family, p->ut.binary, p->ut.func, pid ? pid : -1);
}

/* U:LIB:PROVIDER:PROBE: the file LIB names, which must have that probe
 * (its note's argument count bounds arg1..argN). */
static void resolve_usdt(struct tk_probe_site *p, const char *prefix, int slot)
{
	pid_t pid = tk_filter_attach_pid() > 0 ? tk_filter_attach_pid() : 0;
	char err[PATH_MAX + 256], near[200], *names = NULL;
	struct tk_usdt_probe *v = NULL;
	struct tk_closest c;
	size_t n = 0, i, k;

	if (tk_func_object_resolve(p->spec.target, pid, p->binary, sizeof(p->binary), err,
				   sizeof(err)) ||
	    tk_usdt_list(p->binary, &v, &n, err, sizeof(err)))
		tk_usage_error("invalid PROBE '%s': %s", p->text, err);
	for (i = 0; i < n; i++)
		if (!strcmp(v[i].provider, p->spec.provider) && !strcmp(v[i].name, p->spec.name))
			break;
	if (i == n) {
		char want[512];

		/* "provider:name" of each, for the closest */
		names = calloc(n ? n : 1, 256);
		if (!names)
			tk_fail("out of memory");
		snprintf(want, sizeof(want), "%s:%s", p->spec.provider, p->spec.name);
		tk_closest_init(&c, want);
		for (k = 0; k < n; k++) {
			snprintf(names + k * 256, 256, "%s:%s", v[k].provider, v[k].name);
			tk_closest_add(&c, names + k * 256);
		}
		tk_usage_error("invalid PROBE '%s': no USDT probe %s:%s in %s%s", p->text,
			       p->spec.provider, p->spec.name, p->binary,
			       tk_closest_text(&c, near, sizeof(near)));
	}
	for (const char *a = v[i].args; *a; ) {
		a += strspn(a, " ");
		if (!*a)
			break;
		p->usdt_nargs++;
		a += strcspn(a, " ");
	}
	tk_usdt_free(v, n);
	free(names);
	snprintf(p->family, sizeof(p->family), "%s_U%d", prefix, slot);
	tk_set_target_usdt(p->family, p->binary, p->spec.provider, p->spec.name, pid ? pid : -1);
}

void tk_probe_site_resolve(struct tk_probe_site *p, const char *tool, const char *prefix,
			   int slot)
{
	struct tk_plan_ctx ctx = { .load_btf = tk_kernel_btf, .ksym = ksym_addr };
	char what[256];
	struct tk_perr err;

	switch (p->spec.kind) {
	case TK_PROBE_TRACEPOINT:
		resolve_tracepoint(p, prefix, slot);
		break;
	case TK_PROBE_KPROBE:
	case TK_PROBE_KRETPROBE:
		resolve_kernel(p, prefix, slot);
		break;
	case TK_PROBE_UPROBE:
	case TK_PROBE_URETPROBE:
		resolve_user(p, prefix, slot);
		break;
	case TK_PROBE_USDT:
		resolve_usdt(p, prefix, slot);
		break;
	}
	ctx.kind = p->spec.kind;
	ctx.what = p->spec.name;
	ctx.fields = p->fields;
	ctx.nfields = p->nfields;
	ctx.func_id = p->func_id;
	ctx.usdt_nargs = p->usdt_nargs;
	if (p->spec.kind == TK_PROBE_TRACEPOINT) {
		snprintf(what, sizeof(what), "%s:%s", p->spec.target, p->spec.name);
		ctx.what = what;
	}
	if (tk_plan_build(&ctx, &p->spec, &p->plan, &err))
		tk_probe_site_error(p, tool, &err);
}

void tk_probe_sites_only(struct bpf_object *obj, const char *prefix, int nslots,
			 const struct tk_probe_site *const *sites, int n)
{
	static const char *const kinds[] = { "t", "k", "kr", "u", "ur", "U" };
	char family[32];

	for (int slot = 0; slot < nslots; slot++)
		for (size_t k = 0; k < sizeof(kinds) / sizeof(*kinds); k++) {
			snprintf(family, sizeof(family), "%s_%s%d", prefix, kinds[k], slot);
			if (slot >= n || strcmp(family, sites[slot]->family))
				tk_programs_off(obj, family);
		}
}

bool tk_probe_site_user(const struct tk_probe_site *p)
{
	return p->spec.kind == TK_PROBE_UPROBE || p->spec.kind == TK_PROBE_URETPROBE ||
	       p->spec.kind == TK_PROBE_USDT;
}
