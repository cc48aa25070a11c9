/* trace: one line per hit of any tracepoint, kernel function or user
 * function, with a filter and values the probe names, as bcc's trace,
 * with no compiler at run time: each probe's text is planned against
 * BTF (libtrace/probe/) into a plan that generic BPF programs run. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>

#include "closest.h"
#include "funcmatch.h"
#include "functarget.h"
#include "probe/plan.h"
#include "symbolize.h"
#include "tpformat.h"
#include "trace.h"
#include "trace.skel.h"
#include "tracekit.h"
#include "usdt.h"

struct probe {
	const char *text;
	struct tk_probe_spec spec;
	struct tk_plan plan;
	struct tk_func_target ut;   /* a user function's file and name */
	struct tk_tp_field *tpf;
	struct tk_plan_field *fields;
	int nfields;
	int nargs;
	int func_id;
	int usdt_nargs;
	char binary[PATH_MAX];        /* a USDT probe's file */
	char family[16];
	unsigned short off[TRACE_VALUES];
	unsigned short data_size;
};

static struct probe probes[TRACE_SLOTS];
static int nprobes;

static struct {
	bool kstack, ustack, timestamp, cpu;
	long max_events, printed;
} env;

static struct btf *kbtf;
static struct tk_syms *syms;
static int stacks_fd = -1;

static const struct argp_option options[] = {
	{ "kernel-stack", 'K', 0, 0, "Print the kernel stack of each event", 0 },
	{ "user-stack", 'U', 0, 0, "Print the user stack of each event", 0 },
	{ "timestamp", 't', 0, 0, "Print seconds since trace started", 0 },
	{ "print-cpu", 'C', 0, 0, "Print the CPU of each event", 0 },
	{ "max-events", 'M', "N", 0, "Exit after N events", 0 },
	{ 0 },
};

static const char doc[] =
"Print a line for each hit of a probe, with values it names (bcc's trace).\n"
"\n"
"  PROBE [(FILTER)] [\"FORMAT\"[, EXPR...]]\n"
"\n"
"  t:CATEGORY:EVENT       a tracepoint (tplist -v lists its fields)\n"
"  k:FUNC  kr:FUNC        a kernel function's entry, its return\n"
"  u:LIB:FUNC  ur:LIB:FUNC  a user function's (LIB: c, a library, a path)\n"
"  U:LIB:PROVIDER:PROBE   a USDT probe (tplist -l LIB lists them)\n"
"\n"
"EXPR: tracepoint fields and kernel function arguments by name, arg1..arg6,\n"
"retval, pid tid comm uid cpu ts ($pid when a field has that name), members\n"
"(file->f_path.dentry->d_name.name), casts ((struct task_struct *)arg1),\n"
"container_of(PTR, struct TYPE, MEMBER), C's integer operators, strings with\n"
"== and != (\"ssh*\": a prefix), kernel symbols (function != hrtimer_wakeup).\n"
"FORMAT is printf's: %d %u %x %s %c %p, and %K %U for a kernel or user\n"
"address as symbol+offset; %s of an address prints its symbol.\n"
"\v"
"Examples:\n"
"  trace 't:sched:sched_process_exec \"%s\", filename'\n"
"  trace -a -K 't:timer:hrtimer_expire_entry \"%s\", function' -- sleep 0.01\n"
"  trace 'kr:vfs_read (retval < 0) \"%d\", retval'\n"
"  trace -p 1234 'u:c:write (arg1 == 1) \"%d bytes\", arg3'\n"
"  trace 'k:vfs_read \"%s\", file->f_path.dentry->d_name.name'\n"
"\n"
"Up to 8 probes per run, each with its own filter and format. A string\n"
"value holds at most 63 bytes; a longer one ends in \"...\". Kernel\n"
"functions attach by fentry, else kprobe; -v says which.";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'K': env.kstack = true; break;
	case 'U': env.ustack = true; break;
	case 't': env.timestamp = true; break;
	case 'C': env.cpu = true; break;
	case 'M': env.max_events = tk_arg_long("-M/--max-events", arg, 1, LONG_MAX); break;
	case ARGP_KEY_ARG:
		if (nprobes == TRACE_SLOTS)
			tk_usage_error("too many probes: at most %d per run", TRACE_SLOTS);
		probes[nprobes++].text = arg;
		break;
	case ARGP_KEY_END:
		if (!nprobes)
			tk_usage_error("missing PROBE, such as 't:sched:sched_process_exec \"%%s\", filename'");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_bcc_missing bcc_missing[] = {
	{ "-Z", "strings hold 63 bytes; longer ones end in \"...\"" },
	{ "--string-size", "strings hold 63 bytes; longer ones end in \"...\"" },
	{ "-I", "types come from the kernel's BTF: no headers are included" },
	{ "--include", "types come from the kernel's BTF: no headers are included" },
	{ 0 },
};

static const struct tk_tool tool = {
	.name = "trace",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "KUtCM",
	.args_doc = "PROBE...",
	.bcc_missing = bcc_missing,
};

/* --- Resolving each probe ------------------------------------------------ */

static void probe_error(const struct probe *p, const struct tk_perr *err)
{
	tk_perr_print(stderr, "trace", p->text, err);
	exit(2);
}

static unsigned long long ksym_addr(const char *name, void *arg)
{
	struct tk_func f = { .name = (char *)name };
	struct tk_func_list l = { .v = &f, .n = 1 };

	(void)arg;
	return tk_kernel_funcs_addrs(&l, "/proc/kallsyms") ? 0 : f.addr;
}

static const char *closest_func(const char *name, char *buf, size_t size)
{
	struct tk_closest c;

	tk_closest_init(&c, name);
	for (__u32 id = 1; kbtf && id < btf__type_cnt(kbtf); id++) {
		const struct btf_type *t = btf__type_by_id(kbtf, id);

		if (btf_is_func(t))
			tk_closest_add(&c, btf__name_by_offset(kbtf, t->name_off));
	}
	return tk_closest_text(&c, buf, size);
}

static void resolve_tracepoint(struct probe *p)
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
	snprintf(p->family, sizeof(p->family), "trace_t%d", (int)(p - probes));
	tk_set_target_tp(p->family, cat, ev);
}

static void resolve_kernel(struct probe *p)
{
	char near[200];
	int id = kbtf ? btf__find_by_name_kind(kbtf, p->spec.name, BTF_KIND_FUNC) : -1;

	if (id > 0) {
		const struct btf_type *fn = btf__type_by_id(kbtf, (__u32)id);

		p->func_id = id;
		p->nargs = btf_vlen(btf__type_by_id(kbtf, fn->type));
	} else if (!ksym_addr(p->spec.name, NULL)) {
		tk_usage_error("invalid PROBE '%s': no kernel function '%s'%s", p->text, p->spec.name,
			       closest_func(p->spec.name, near, sizeof(near)));
	}
	snprintf(p->family, sizeof(p->family), "trace_k%s%d",
		 p->spec.kind == TK_PROBE_KRETPROBE ? "r" : "", (int)(p - probes));
	tk_set_target(p->family, NULL, p->spec.name, -1);
}

static void resolve_user(struct probe *p)
{
	pid_t pid = tk_filter_attach_pid() > 0 ? tk_filter_attach_pid() : 0;
	char spec[PATH_MAX + 256], err[PATH_MAX + 256];

	snprintf(spec, sizeof(spec), "%s:%s", p->spec.target, p->spec.name);
	if (tk_func_target_resolve(spec, pid, &p->ut, err, sizeof(err)))
		tk_usage_error("invalid PROBE '%s': %s", p->text, err);
	snprintf(p->family, sizeof(p->family), "trace_u%s%d",
		 p->spec.kind == TK_PROBE_URETPROBE ? "r" : "", (int)(p - probes));
	/* In the filtered process only, when there is one. */
	tk_set_target(p->family, p->ut.binary, p->ut.func, pid ? pid : -1);
}

/* U:LIB:PROVIDER:PROBE: the file LIB names, which must have that probe
 * (its note's argument count bounds arg1..argN). */
static void resolve_usdt(struct probe *p)
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
		/* "provider:name" of each, for the closest */
		names = calloc(n ? n : 1, 256);
		if (!names)
			tk_fail("out of memory");
		tk_closest_init(&c, strchr(p->text, ':') + 1 + strlen(p->spec.target) + 1);
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
	snprintf(p->family, sizeof(p->family), "trace_U%d", (int)(p - probes));
	tk_set_target_usdt(p->family, p->binary, p->spec.provider, p->spec.name, pid ? pid : -1);
}

/* Each value's place in the event: strings TK_PLAN_STR_LEN bytes, the
 * rest 8. */
static void layout(struct probe *p)
{
	unsigned short off = 0;

	for (int i = 0; i < p->plan.nvalues; i++) {
		p->off[i] = off;
		off += p->plan.value[i].kind == TK_PV_STR ? TK_PLAN_STR_LEN : 8;
	}
	p->data_size = off;
}

static void resolve(struct probe *p)
{
	struct tk_plan_ctx ctx = { .btf = kbtf, .ksym = ksym_addr };
	struct tk_perr err;

	if (tk_probe_parse(p->text, &p->spec, &err))
		probe_error(p, &err);
	switch (p->spec.kind) {
	case TK_PROBE_TRACEPOINT:
		resolve_tracepoint(p);
		break;
	case TK_PROBE_KPROBE:
	case TK_PROBE_KRETPROBE:
		resolve_kernel(p);
		break;
	case TK_PROBE_UPROBE:
	case TK_PROBE_URETPROBE:
		resolve_user(p);
		break;
	case TK_PROBE_USDT:
		resolve_usdt(p);
		break;
	}
	ctx.kind = p->spec.kind;
	ctx.what = p->spec.kind == TK_PROBE_TRACEPOINT ? strchr(p->text, ':') + 1 : p->spec.name;
	ctx.fields = p->fields;
	ctx.nfields = p->nfields;
	ctx.func_id = p->func_id;
	ctx.usdt_nargs = p->usdt_nargs;
	if (p->spec.kind == TK_PROBE_TRACEPOINT) {
		static char what[256];

		snprintf(what, sizeof(what), "%s:%s", p->spec.target, p->spec.name);
		ctx.what = what;
	}
	if (tk_plan_build(&ctx, &p->spec, &p->plan, &err))
		probe_error(p, &err);
	layout(p);
}

/* --- Loading ------------------------------------------------------------- */

static void to_bpf(const struct probe *p, volatile struct trace_probe_plan *b)
{
	const struct tk_plan *pl = &p->plan;
	struct trace_probe_plan t;

	memset(&t, 0, sizeof(t));
	memcpy(t.fetch, pl->fetch, sizeof(t.fetch));
	memcpy(t.insn, pl->insn, sizeof(t.insn));
	memcpy(t.str, pl->str, sizeof(t.str));
	t.filter = pl->filter;
	t.nfetch = pl->nfetch;
	t.nargs = p->nargs;
	t.nvalues = pl->nvalues;
	for (int i = 0; i < pl->nvalues; i++) {
		t.value_src[i] = pl->value[i].fetch >= 0 ? pl->value[i].fetch : -(pl->value[i].prog + 1);
		t.value_off[i] = p->off[i];
		t.value_str[i] = pl->value[i].kind == TK_PV_STR;
	}
	t.data_size = p->data_size;
	t.kstack = env.kstack;
	t.ustack = env.ustack;
	memcpy((void *)b, &t, sizeof(t));
}

static int configure(void *s, void *ctx)
{
	static const char *const kinds[] = { "t", "k", "kr", "u", "ur", "U" };
	struct trace_bpf *skel = s;
	char family[16];

	(void)ctx;
	for (int i = 0; i < nprobes; i++)
		to_bpf(&probes[i], &skel->rodata->trace_plans[i]);
	/* Only each probe's own family loads. */
	for (int slot = 0; slot < TRACE_SLOTS; slot++)
		for (size_t k = 0; k < sizeof(kinds) / sizeof(*kinds); k++) {
			snprintf(family, sizeof(family), "trace_%s%d", kinds[k], slot);
			if (slot >= nprobes || strcmp(family, probes[slot].family))
				tk_programs_off(skel->obj, family);
		}
	if (!env.kstack && !env.ustack)
		bpf_map__set_max_entries(skel->maps.trace_stacks, 1);
	return 0;
}

/* --- Output -------------------------------------------------------------- */

/* The conversion's flags and width, its length dropped, then "ll" and
 * the conversion (or conv instead). */
static void respec(const struct tk_fmt_conv *c, char conv, bool ll, char *out, size_t size)
{
	size_t n = strspn(c->text + 1, "-+ #0123456789.");

	snprintf(out, size, "%%%.*s%s%c", (int)n, c->text + 1, ll ? "ll" : "", conv);
}

static void symbol(char *buf, size_t size, unsigned long long addr, bool user, pid_t pid)
{
	struct tk_sym sym[8];
	int n;

	if (!syms) {
		struct tk_syms_opts o = { 0 };

		syms = tk_syms_new(&o);
	}
	n = !syms ? 0 : user ? tk_syms_user(syms, pid, addr, sym, 8) : tk_syms_kernel(syms, addr, sym);
	if (n > 0 && sym[n - 1].name) {
		const struct tk_sym *s = &sym[n - 1];
		int len = snprintf(buf, size, "%.*s", (int)strcspn(s->name, "@"), s->name);

		if (s->offset && len >= 0 && (size_t)len < size)
			snprintf(buf + len, size - (size_t)len, "+0x%llx", s->offset);
	} else {
		snprintf(buf, size, "0x%llx", addr);
	}
}

static bool user_probe(const struct probe *p)
{
	return p->spec.kind == TK_PROBE_UPROBE || p->spec.kind == TK_PROBE_URETPROBE ||
	       p->spec.kind == TK_PROBE_USDT;
}

/* A string value with what cannot be shown escaped, "..." when it filled
 * its TK_PLAN_STR_LEN bytes (it may have gone on). */
static void str_value(const unsigned char *d, char *out, size_t size, bool *truncated)
{
	size_t len = strnlen((const char *)d, TK_PLAN_STR_LEN), n = 0;

	*truncated = len >= TK_PLAN_STR_LEN - 1;
	for (size_t i = 0; i < len && n + 5 < size; i++) {
		if (isprint(d[i]))
			out[n++] = (char)d[i];
		else
			n += (size_t)snprintf(out + n, size - n, "\\x%02x", d[i]);
	}
	out[n] = 0;
	if (*truncated && n + 4 < size)
		strcpy(out + n, "...");
}

static unsigned long long int_at(const struct trace_hit *e, int off)
{
	unsigned long long v;

	memcpy(&v, e->data + off, sizeof(v));
	return v;
}

/* Value i of e, formatted by its conversion, into out. */
static void format_value(const struct probe *p, const struct trace_hit *e, int i, char *out,
			 size_t size)
{
	const struct tk_fmt_conv *c = &p->spec.conv[i];
	const struct tk_plan_value *v = &p->plan.value[i];
	char spec[32], buf[TK_PLAN_STR_LEN * 4 + 8];
	unsigned long long u;
	bool trunc, sgn;

	if (e->faults & (1u << i)) {
		respec(c, 's', false, spec, sizeof(spec));
		snprintf(out, size, spec, "(fault)");
		return;
	}
	if (v->kind == TK_PV_STR) {
		str_value(e->data + p->off[i], buf, sizeof(buf), &trunc);
		respec(c, 's', false, spec, sizeof(spec));
		snprintf(out, size, spec, buf);
		return;
	}
	u = int_at(e, p->off[i]);
	if (v->size < 8 && !v->is_signed)
		u &= (1ULL << (v->size * 8)) - 1;
	switch (c->conv) {
	case 's': case 'K': case 'U':
		symbol(buf, sizeof(buf), u, c->conv == 'U' || (c->conv == 's' && user_probe(p)), (pid_t)e->pid);
		respec(c, 's', false, spec, sizeof(spec));
		snprintf(out, size, spec, buf);
		return;
	case 'p':
		snprintf(out, size, "0x%llx", u);
		return;
	case 'c':
		respec(c, 'c', false, spec, sizeof(spec));
		snprintf(out, size, spec, (int)(unsigned char)u);
		return;
	}
	/* printf's own widths: %d is an int, %hd a short, %ld 64 bits (so a
	 * uprobe's int return value, of which rax's low half is all that
	 * counts, prints as -1, not 4294967295). */
	sgn = c->conv == 'd' || c->conv == 'i';
	if (c->length == 'h')
		u = sgn ? (unsigned long long)(long long)(short)u : (unsigned short)u;
	else if (c->length == 'H')
		u = sgn ? (unsigned long long)(long long)(signed char)u : (unsigned char)u;
	else if (!c->length)
		u = sgn ? (unsigned long long)(long long)(int)u : (unsigned int)u;
	respec(c, c->conv, true, spec, sizeof(spec));
	snprintf(out, size, spec, u);
}

/* The format with its values: literal text as written, "%%" as '%'. */
static void message(const struct probe *p, const struct trace_hit *e, char *out, size_t size)
{
	const char *f = p->spec.format;
	size_t n = 0;
	int i = 0;

	out[0] = 0;
	while (f && *f && n + 1 < size) {
		if (*f != '%') {
			out[n++] = *f++;
			continue;
		}
		if (f[1] == '%') {
			out[n++] = '%';
			f += 2;
			continue;
		}
		format_value(p, e, i, out + n, size - n);
		n += strlen(out + n);
		f += strlen(p->spec.conv[i++].text);
	}
	out[n < size ? n : size - 1] = 0;
}

static void print_stack(const struct trace_hit *e, int id, bool user, struct tk_json *j)
{
	unsigned long long ips[127];
	char buf[512];

	if (id < 0 || stacks_fd < 0 || bpf_map_lookup_elem(stacks_fd, &id, ips)) {
		if (!j)
			printf("        [%s stack unavailable]\n", user ? "user" : "kernel");
		return;
	}
	if (j)
		tk_json_arr_open(j, user ? "ustack" : "kstack");
	for (int i = 0; i < 127 && ips[i]; i++) {
		symbol(buf, sizeof(buf), ips[i], user, (pid_t)e->pid);
		if (j)
			tk_json_str(j, NULL, buf);
		else
			printf("        %s\n", buf);
	}
	if (j)
		tk_json_arr_close(j);
}

static void print_json(const struct probe *p, const struct trace_hit *e, const char *msg)
{
	struct tk_json j;
	char buf[TK_PLAN_STR_LEN * 4 + 8];

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "event");
	tk_json_time(&j);
	tk_json_str(&j, "probe", p->text);
	tk_json_int(&j, "pid", e->pid);
	tk_json_int(&j, "tid", e->tid);
	tk_json_int(&j, "cpu", e->cpu);
	tk_json_strn(&j, "comm", e->comm, strnlen(e->comm, sizeof(e->comm)));
	tk_json_str(&j, "func", p->spec.name);
	if (tk_opts.filter.cgroup_ids)
		tk_json_cgroup(&j, e->cgroup_id);
	tk_json_arr_open(&j, "values");
	for (int i = 0; i < p->plan.nvalues; i++) {
		const struct tk_plan_value *v = &p->plan.value[i];
		unsigned long long u = v->kind == TK_PV_STR ? 0 : int_at(e, p->off[i]);
		bool trunc;

		tk_json_obj_open(&j, NULL);
		if (e->faults & (1u << i)) {
			tk_json_str(&j, "type", v->kind == TK_PV_STR ? "string" : v->kind == TK_PV_PTR ? "address" : "integer");
			tk_json_null(&j, "value");
			tk_json_bool(&j, "fault", true);
		} else if (v->kind == TK_PV_STR) {
			size_t len = strnlen((const char *)e->data + p->off[i], TK_PLAN_STR_LEN);

			tk_json_str(&j, "type", "string");
			tk_json_strn(&j, "value", (const char *)e->data + p->off[i], len);
			str_value(e->data + p->off[i], buf, sizeof(buf), &trunc);
			tk_json_bool(&j, "truncated", trunc);
		} else if (v->kind == TK_PV_PTR) {
			tk_json_str(&j, "type", "address");
			tk_json_uint(&j, "value", u);
			symbol(buf, sizeof(buf), u, user_probe(p), (pid_t)e->pid);
			tk_json_str(&j, "symbol", buf);
		} else {
			if (v->size < 8 && !v->is_signed)
				u &= (1ULL << (v->size * 8)) - 1;
			tk_json_str(&j, "type", "integer");
			if (v->is_signed)
				tk_json_int(&j, "value", (long long)u);
			else
				tk_json_uint(&j, "value", u);
		}
		tk_json_obj_close(&j);
	}
	tk_json_arr_close(&j);
	if (p->spec.format)
		tk_json_str(&j, "message", msg);
	if (env.kstack)
		print_stack(e, e->kstack, false, &j);
	if (env.ustack)
		print_stack(e, e->ustack, true, &j);
	tk_json_end(&j);
}

static void print_text(const struct probe *p, const struct trace_hit *e, const char *msg)
{
	char buf[16];

	if (tk_opts.time)
		printf("%-8s ", tk_time_str(buf, sizeof(buf)));
	if (env.timestamp)
		printf("%-14.6f ", tk_elapsed());
	printf("%-7u %-7u ", e->pid, e->tid);
	tk_print_safe_padded(stdout, e->comm, strnlen(e->comm, sizeof(e->comm)), 15);
	if (env.cpu)
		printf(" %-3u", e->cpu);
	/* FUNC padded only when something follows: no trailing blanks. */
	if (tk_opts.filter.cgroup_ids) {
		printf(" %-16s ", p->spec.name);
		tk_print_cgroup(stdout, e->cgroup_id, *msg ? TK_CGROUP_WIDTH : 0);
	} else {
		printf(*msg ? " %-16s" : " %s", p->spec.name);
	}
	if (*msg)
		printf(" %s", msg);
	putchar('\n');
	if (env.kstack)
		print_stack(e, e->kstack, false, NULL);
	if (env.ustack)
		print_stack(e, e->ustack, true, NULL);
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	const struct trace_hit *e = data;
	const struct probe *p;
	char msg[4096];

	(void)ctx;
	if (size < offsetof(struct trace_hit, data) || e->probe >= (unsigned)nprobes)
		return 0;
	p = &probes[e->probe];
	if (size < offsetof(struct trace_hit, data) + p->data_size)
		return 0;  /* malformed: never trust sizes blindly */
	if (env.max_events && env.printed >= env.max_events)
		return 0;
	message(p, e, msg, sizeof(msg));
	if (tk_opts.json)
		print_json(p, e, msg);
	else
		print_text(p, e, msg);
	if (env.max_events && ++env.printed == env.max_events)
		tk_request_stop();
	return 0;
}

TK_SKEL_OPS(trace_bpf);

int main(int argc, char **argv)
{
	struct trace_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	kbtf = btf__load_vmlinux_btf();
	for (int i = 0; i < nprobes; i++)
		resolve(&probes[i]);
	tk_init();
	skel = tk_load(&trace_bpf_ops, configure, NULL);
	stacks_fd = bpf_map__fd(skel->maps.trace_stacks);
	tk_events_open(skel->obj, handle_event, NULL);
	if (!tk_opts.json) {
		if (tk_opts.time)
			printf("%-8s ", "TIME");
		if (env.timestamp)
			printf("%-14s ", "TIME(s)");
		printf("%-7s %-7s %-15s", "PID", "TID", "COMM");
		if (env.cpu)
			printf(" %-3s", "CPU");
		printf(" %-16s", "FUNC");
		if (tk_opts.filter.cgroup_ids)
			printf(" %-*s", TK_CGROUP_WIDTH, TK_CGROUP_HEADER);
		printf(" -\n");
	}
	tk_ready();
	tk_events_loop();
	tk_losses_report(skel->obj);
	trace_bpf__destroy(skel);
	tk_syms_free(syms);
	btf__free(kbtf);
	return tk_exit_status();
}
