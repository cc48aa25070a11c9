/* argdist: counts of a probe's hits by the values of expressions (-C),
 * or a log2 histogram of one (-H), as bcc's argdist, aggregated in the
 * kernel, with no compiler at run time: each specifier is planned as
 * trace's probes are (libtrace/probe/), its values and filter run by
 * generic BPF programs (bpf/argdist.bpf.c). */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "argdist.h"
#include "argdist.skel.h"
#include "probe/argspec.h"
#include "probe/site.h"
#include "symbolize.h"
#include "tracekit.h"

struct spec {
	struct tk_probe_site site;
	struct tk_argspec_split split;
	bool hist;
	char expr[ARGDIST_VALUES][128];  /* each EXPR as written */
	unsigned short off[ARGDIST_VALUES];
};

static struct spec specs[ARGDIST_SLOTS];
static int nspecs;

static struct {
	bool cumulative;
	long top;
	long max_keys;
} env = { .max_keys = 10240 };

static struct tk_syms *syms;

enum { K_MAX_KEYS = 0x100 };

static const struct argp_option options[] = {
	{ "count", 'C', "SPECIFIER", 0, "Count the hits by the values of EXPRs", 0 },
	{ "histogram", 'H', "SPECIFIER", 0, "A log2 histogram of an integer EXPR", 0 },
	{ "interval", 'i', "SEC", 0, "Print every SEC seconds (default: at exit only)", 0 },
	{ "number", 'n', "COUNT", 0, "Exit after COUNT intervals", 0 },
	{ "cumulative", 'c', 0, 0, "Counts since the start, not per interval", 0 },
	{ "top", 'T', "N", 0, "Only the N largest counts of each -C", 0 },
	{ "max-keys", K_MAX_KEYS, "N", 0,
	  "Room for N distinct keys (values, buckets) in the kernel (default 10240)", 0 },
	{ 0 },
};

static const char doc[] =
"Count a probe's hits by the values of expressions, or make a histogram of\n"
"one, in the kernel (bcc's argdist).\n"
"\n"
"  -C 'PROBE[:EXPR[,EXPR...][:FILTER]]'   -H 'PROBE:EXPR[:FILTER]'\n"
"\n"
"  t:CATEGORY:EVENT       a tracepoint (tplist -v lists its fields)\n"
"  k:FUNC  kr:FUNC        a kernel function's entry, its return\n"
"  u:LIB:FUNC  ur:LIB:FUNC  a user function's (LIB: c, a library, a path)\n"
"  U:LIB:PROVIDER:PROBE   a USDT probe (tplist -l LIB lists them)\n"
"  p::FUNC r::FUNC p:LIB:FUNC r:LIB:FUNC   bcc's spellings\n"
"\n"
"EXPR and FILTER as trace's: tracepoint fields and kernel function arguments\n"
"by name, arg1..arg6, retval, pid tid comm uid cpu ts, members (a->b.c),\n"
"casts, container_of, C's integer operators, strings with == and != (\"ssh*\":\n"
"a prefix). Types come from BTF: bcc's signature and types are not written.\n"
"A -C key is integers, strings (comm, a char *: at most 63 bytes) and\n"
"addresses (printed as symbol+0xoff); no EXPR counts the hits (retval for a\n"
"return probe). FILTER is tested in the kernel before anything is counted.\n"
"\v"
"Output: for each specifier, bcc's layout: its text, then COUNT EVENT rows,\n"
"the largest count last, or the histogram; at exit, or every -i SEC (with\n"
"the time). -j: NDJSON, a record per key and per histogram, then the loss\n"
"record. A full keys map (--max-keys) drops hits and says how many at exit.\n"
"\n"
"Examples:\n"
"  argdist -H 't:syscalls:sys_exit_read:ret:ret > 0'  # read sizes\n"
"  argdist -C 't:syscalls:sys_enter_openat:comm'       # opens per comm\n"
"  argdist -C 'u:c:malloc:arg1' -p 185                 # malloc sizes\n"
"  argdist -C 't:timer:hrtimer_expire_entry:function' -i 1\n"
"  argdist -C 'ur:c:read:retval:retval < 0' -- ./prog  # read errors\n"
"\n"
"Up to 8 specifiers per run, each with its own filter; up to 8 EXPRs of\n"
"at most 256 key bytes (8 per integer or address, 64 per string).";

static void add_spec(const char *text, bool hist)
{
	if (nspecs == ARGDIST_SLOTS)
		tk_usage_error("too many specifiers: at most %d -C and -H per run", ARGDIST_SLOTS);
	specs[nspecs].site.text = text;
	specs[nspecs++].hist = hist;
}

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'C': add_spec(arg, false); break;
	case 'H': add_spec(arg, true); break;
	case 'i': tk_opts.interval = tk_arg_long("-i/--interval", arg, 1, 86400); break;
	case 'n': tk_opts.count = tk_arg_long("-n/--number", arg, 1, LONG_MAX); break;
	case 'c': env.cumulative = true; break;
	case 'T': env.top = tk_arg_long("-T/--top", arg, 1, LONG_MAX); break;
	case K_MAX_KEYS: env.max_keys = tk_arg_long("--max-keys", arg, 1, 1 << 24); break;
	case ARGP_KEY_ARG:
		tk_usage_error("unexpected argument '%s': a specifier goes after -C or -H", arg);
		break;
	case ARGP_KEY_END:
		if (!nspecs)
			tk_usage_error("missing -C or -H, such as -H 't:syscalls:sys_exit_read:ret'");
		if (tk_opts.count && !tk_opts.interval)
			tk_usage_error("-n/--number counts intervals: give -i/--interval too");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_bcc_missing bcc_missing[] = {
	{ "-z", "strings hold 63 bytes; longer ones end in \"...\"" },
	{ "--string-size", "strings hold 63 bytes; longer ones end in \"...\"" },
	{ "-I", "not needed: types come from the kernel's BTF, no headers are included" },
	{ "--include", "not needed: types come from the kernel's BTF, no headers are included" },
	{ "-t", "use --tid TID" },
	{ 0 },
};

static const struct tk_tool tool = {
	.name = "argdist",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "cnT",
	.bcc_missing = bcc_missing,
};

/* --- Resolving each specifier -------------------------------------------- */

static bool return_probe(const struct spec *s)
{
	return s->site.spec.kind == TK_PROBE_KRETPROBE || s->site.spec.kind == TK_PROBE_URETPROBE;
}

static void spec_error(const struct spec *s, int pos, const char *msg)
{
	struct tk_perr err = { .pos = pos };

	snprintf(err.msg, sizeof(err.msg), "%s", msg);
	tk_probe_site_error(&s->site, "argdist", &err);
}

static void resolve(struct spec *s)
{
	struct tk_probe_spec *ps = &s->site.spec;
	struct tk_perr err;
	unsigned short off = 0;
	int slot = (int)(s - specs);

	if (tk_argspec_parse(s->site.text, ps, &err))
		tk_probe_site_error(&s->site, "argdist", &err);
	tk_argspec_split(s->site.text, &s->split, &err);
	/* bcc: a return probe without EXPR counts by its return value. */
	if (!ps->nargs && (return_probe(s) || s->hist)) {
		if (!return_probe(s))
			spec_error(s, (int)strlen(s->site.text),
				   "-H needs an EXPR: PROBE:EXPR[:FILTER]");
		ps->args[ps->nargs++] = tk_px_parse("retval", &err);
		strcpy(s->expr[0], "retval");
	}
	if (s->hist && ps->nargs > 1)
		spec_error(s, s->split.start[1], "-H takes one EXPR: PROBE:EXPR[:FILTER]");
	if (ps->nargs > ARGDIST_VALUES)
		spec_error(s, s->split.start[ARGDIST_VALUES], "more than 8 EXPRs in one -C");
	for (int i = 0; i < s->split.nexprs; i++)
		snprintf(s->expr[i], sizeof(s->expr[i]), "%.*s", s->split.end[i] - s->split.start[i],
			 s->site.text + s->split.start[i]);
	tk_probe_site_resolve(&s->site, "argdist", "argdist", slot);
	for (int i = 0; i < s->site.plan.nvalues; i++) {
		const struct tk_plan_value *v = &s->site.plan.value[i];
		int pos = i < s->split.nexprs ? s->split.start[i] : 0;

		if (s->hist && v->kind == TK_PV_STR)
			spec_error(s, pos, "-H makes a histogram of an integer: this is a string (-C counts strings)");
		s->off[i] = off;
		off += v->kind == TK_PV_STR ? TK_PLAN_STR_LEN : 8;
		if (off > ARGDIST_KEY_DATA)
			spec_error(s, pos, "a key holds at most 256 bytes (8 per integer, 64 per string)");
	}
}

/* --- Loading ------------------------------------------------------------- */

static void to_bpf(const struct spec *s, volatile struct argdist_plan *b)
{
	const struct tk_plan *pl = &s->site.plan;
	struct argdist_plan t;

	memset(&t, 0, sizeof(t));
	tk_plan_to_code(pl, s->site.nargs, &t.code);
	t.nvalues = pl->nvalues;
	t.hist = s->hist;
	for (int i = 0; i < pl->nvalues; i++) {
		t.value_src[i] = tk_plan_value_src(&pl->value[i]);
		t.value_off[i] = s->off[i];
		t.value_str[i] = pl->value[i].kind == TK_PV_STR;
	}
	memcpy((void *)b, &t, sizeof(t));
}

/* The bytes of struct argdist_key the specifiers use: BPF zeroes the
 * rest, the kernel hashes only these. */
static size_t key_size(void)
{
	size_t data = 8;  /* -H's bucket; "total calls" */

	for (int i = 0; i < nspecs; i++)
		for (int v = 0; v < specs[i].site.plan.nvalues; v++) {
			size_t end = specs[i].off[v] +
				     (specs[i].site.plan.value[v].kind == TK_PV_STR ? TK_PLAN_STR_LEN : 8);

			if (end > data)
				data = end;
		}
	return offsetof(struct argdist_key, data) + data;
}

static int configure(void *sk, void *ctx)
{
	const struct tk_probe_site *sites[ARGDIST_SLOTS];
	struct argdist_bpf *skel = sk;
	int e;

	(void)ctx;
	for (int i = 0; i < nspecs; i++) {
		to_bpf(&specs[i], &skel->rodata->argdist_plans[i]);
		sites[i] = &specs[i].site;
	}
	tk_probe_sites_only(skel->obj, "argdist", ARGDIST_SLOTS, sites, nspecs);
	if ((e = bpf_map__set_key_size(skel->maps.counts, (__u32)key_size())))
		return e;
	return bpf_map__set_max_entries(skel->maps.counts, (__u32)env.max_keys);
}

TK_SKEL_OPS(argdist_bpf);

/* --- Reading the counts -------------------------------------------------- */

struct entry {
	struct argdist_key key;
	unsigned long long n;      /* since the start */
	unsigned long long delta;  /* what is printed */
	char text[1024];           /* -C: its EVENT */
};

static struct entry *last;     /* the previous read, sorted by key */
static size_t nlast;

static int key_cmp(const void *a, const void *b)
{
	return memcmp(&((const struct entry *)a)->key, &((const struct entry *)b)->key,
		      sizeof(struct argdist_key));
}

/* Every key and its count (the map is never cleared: a print subtracts
 * what it last read, so no hit is lost to a clear). */
static struct entry *read_counts(int fd, size_t *np)
{
	struct argdist_key k, next, *prev = NULL;
	struct entry *v = NULL;
	size_t n = 0, cap = 0;

	/* The kernel writes the map's key_size bytes: the rest stays 0. */
	memset(&next, 0, sizeof(next));
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		unsigned long long c;

		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &c))
			continue;  /* deleted meanwhile: never here */
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				tk_fail("out of memory");
		}
		memset(&v[n], 0, sizeof(v[n]));
		v[n].key = k;
		v[n++].n = c;
	}
	qsort(v, n, sizeof(*v), key_cmp);
	for (size_t i = 0; i < n; i++) {
		struct entry *was = nlast ? bsearch(&v[i], last, nlast, sizeof(*last), key_cmp) : NULL;

		v[i].delta = env.cumulative || !was ? v[i].n : v[i].n - was->n;
	}
	*np = n;
	return v;
}

/* --- Output -------------------------------------------------------------- */

static unsigned long long int_at(const struct argdist_key *k, int off)
{
	unsigned long long v;

	memcpy(&v, k->data + off, sizeof(v));
	return v;
}

static unsigned long long int_value(const struct tk_plan_value *v, unsigned long long u)
{
	if (v->size < 8 && !v->is_signed)
		u &= (1ULL << (v->size * 8)) - 1;
	return u;
}

static void addr_text(const struct spec *s, unsigned long long addr, char *buf, size_t size)
{
	bool user = tk_probe_site_user(&s->site);
	pid_t pid = tk_filter_attach_pid();

	if (user && pid <= 0) {
		snprintf(buf, size, "0x%llx", addr);  /* no process to read it in */
		return;
	}
	if (!syms) {
		struct tk_syms_opts o = { 0 };

		syms = tk_syms_new(&o);
	}
	tk_syms_addr_text(syms, addr, user, pid, buf, size);
}

/* Value i of key k as text. */
static void value_text(const struct spec *s, const struct argdist_key *k, int i, char *out,
		       size_t size)
{
	const struct tk_plan_value *v = &s->site.plan.value[i];
	unsigned long long u;
	bool trunc;

	if (k->faults & (1u << i)) {
		snprintf(out, size, "(fault)");
		return;
	}
	if (v->kind == TK_PV_STR) {
		tk_plan_str_text(k->data + s->off[i], out, size, &trunc);
		return;
	}
	u = int_value(v, int_at(k, s->off[i]));
	if (v->kind == TK_PV_PTR)
		addr_text(s, u, out, size);
	else if (v->is_signed)
		snprintf(out, size, "%lld", (long long)u);
	else
		snprintf(out, size, "%llu", u);
}

/* bcc's EVENT: "expr = value, expr = value"; "total calls" without. */
static void event_text(const struct spec *s, struct entry *e)
{
	size_t n = 0;
	char buf[TK_PLAN_STR_LEN * 4 + 8];

	if (!s->site.plan.nvalues)
		n += (size_t)snprintf(e->text, sizeof(e->text), "total calls");
	for (int i = 0; i < s->site.plan.nvalues && n < sizeof(e->text); i++) {
		value_text(s, &e->key, i, buf, sizeof(buf));
		n += (size_t)snprintf(e->text + n, sizeof(e->text) - n, "%s%s = %s", i ? ", " : "",
				      s->expr[i], buf);
	}
}

static int by_count(const void *a, const void *b)
{
	const struct entry *x = *(const struct entry *const *)a, *y = *(const struct entry *const *)b;

	if (x->delta != y->delta)
		return x->delta < y->delta ? -1 : 1;
	if (x->key.cgroup_id != y->key.cgroup_id)
		return tk_hist_cgroup_cmp(x->key.cgroup_id, y->key.cgroup_id);
	return strcmp(x->text, y->text);
}

static void json_head(struct tk_json *j, const char *type, const struct spec *s, int seq)
{
	tk_json_begin(j, stdout);
	tk_json_str(j, "type", type);
	if (tk_opts.interval) {
		tk_json_time(j);
		tk_json_int(j, "interval", seq);
	}
	tk_json_str(j, "probe", s->site.text);
}

static void json_values(struct tk_json *j, const struct spec *s, const struct argdist_key *k)
{
	char buf[TK_PLAN_STR_LEN * 4 + 8];
	bool trunc;

	tk_json_arr_open(j, "values");
	for (int i = 0; i < s->site.plan.nvalues; i++) {
		const struct tk_plan_value *v = &s->site.plan.value[i];
		const char *type = v->kind == TK_PV_STR ? "string" :
				   v->kind == TK_PV_PTR ? "address" : "integer";
		unsigned long long u;

		tk_json_obj_open(j, NULL);
		tk_json_str(j, "expr", s->expr[i]);
		tk_json_str(j, "type", type);
		if (k->faults & (1u << i)) {
			tk_json_null(j, "value");
			tk_json_bool(j, "fault", true);
		} else if (v->kind == TK_PV_STR) {
			const char *d = (const char *)k->data + s->off[i];

			tk_json_strn(j, "value", d, strnlen(d, TK_PLAN_STR_LEN));
			tk_plan_str_text(k->data + s->off[i], buf, sizeof(buf), &trunc);
			tk_json_bool(j, "truncated", trunc);
		} else {
			u = int_value(v, int_at(k, s->off[i]));
			if (v->kind == TK_PV_PTR) {
				tk_json_uint(j, "value", u);
				addr_text(s, u, buf, sizeof(buf));
				tk_json_str(j, "symbol", buf);
			} else if (v->is_signed) {
				tk_json_int(j, "value", (long long)u);
			} else {
				tk_json_uint(j, "value", u);
			}
		}
		tk_json_obj_close(j);
	}
	tk_json_arr_close(j);
}

static void print_freq(const struct spec *s, struct entry *v, size_t n, int seq)
{
	struct entry **rows = calloc(n ? n : 1, sizeof(*rows));
	size_t k = 0, from;
	struct tk_json j;

	if (!rows)
		tk_fail("out of memory");
	for (size_t i = 0; i < n; i++)
		if (v[i].key.slot == (unsigned)(s - specs) && v[i].delta) {
			event_text(s, &v[i]);
			rows[k++] = &v[i];
		}
	qsort(rows, k, sizeof(*rows), by_count);
	from = env.top && (size_t)env.top < k ? k - (size_t)env.top : 0;
	if (!tk_opts.json) {
		printf("%s\n", s->site.text);
		printf("\t%-10s %s\n", "COUNT", "EVENT");
	}
	for (size_t i = from; i < k; i++) {
		if (tk_opts.json) {
			json_head(&j, "count", s, seq);
			json_values(&j, s, &rows[i]->key);
			if (tk_opts.filter.cgroup_ids)
				tk_json_cgroup(&j, rows[i]->key.cgroup_id);
			tk_json_uint(&j, "count", rows[i]->delta);
			tk_json_end(&j);
			continue;
		}
		printf("\t%-10llu %s", rows[i]->delta, rows[i]->text);
		if (tk_opts.filter.cgroup_ids)
			tk_hist_print_cgroup_label(stdout, true, rows[i]->key.cgroup_id);
		putchar('\n');
	}
	free(rows);
}

/* One histogram of s per cgroup (one without --print-cgroup). */
static void print_hist(const struct spec *s, const struct entry *v, size_t n, int seq)
{
	unsigned long long groups[64];
	size_t ngroups = 0;

	for (size_t i = 0; i < n; i++) {
		size_t g;

		if (v[i].key.slot != (unsigned)(s - specs) || !v[i].delta)
			continue;
		for (g = 0; g < ngroups && groups[g] != v[i].key.cgroup_id; g++)
			;
		if (g == ngroups && ngroups < sizeof(groups) / sizeof(*groups))
			groups[ngroups++] = v[i].key.cgroup_id;
	}
	if (!ngroups)
		groups[ngroups++] = 0;
	for (size_t a = 1; a < ngroups; a++)
		for (size_t b = a; b > 0 && tk_hist_cgroup_cmp(groups[b - 1], groups[b]) > 0; b--) {
			unsigned long long t = groups[b];

			groups[b] = groups[b - 1];
			groups[b - 1] = t;
		}
	for (size_t g = 0; g < ngroups; g++) {
		unsigned long long slots[ARGDIST_HIST_SLOTS] = { 0 }, faults = 0;
		struct tk_json j;

		for (size_t i = 0; i < n; i++) {
			unsigned long long b;

			if (v[i].key.slot != (unsigned)(s - specs) || v[i].key.cgroup_id != groups[g])
				continue;
			b = int_at(&v[i].key, 0);
			if (v[i].key.faults)
				faults += v[i].delta;
			else if (b < ARGDIST_HIST_SLOTS)
				slots[b] += v[i].delta;
		}
		if (tk_opts.json) {
			json_head(&j, "histogram", s, seq);
			tk_json_str(&j, "expr", s->expr[0]);
			if (tk_opts.filter.cgroup_ids)
				tk_json_cgroup(&j, groups[g]);
			tk_hist_json_log2(&j, slots, ARGDIST_HIST_SLOTS, s->expr[0]);
			tk_json_uint(&j, "faults", faults);
			tk_json_end(&j);
			continue;
		}
		printf("%s", s->site.text);
		if (tk_opts.filter.cgroup_ids)
			tk_hist_print_cgroup_label(stdout, true, groups[g]);
		putchar('\n');
		tk_hist_print_log2(stdout, slots, ARGDIST_HIST_SLOTS, s->expr[0]);
		if (faults)
			printf("     %llu hit%s could not read %s\n", faults, faults == 1 ? "" : "s",
			       s->expr[0]);
	}
}

static void print_all(void *arg, int seq)
{
	struct argdist_bpf *skel = arg;

	size_t n;
	struct entry *v = read_counts(bpf_map__fd(skel->maps.counts), &n);
	char buf[16];

	if (!tk_opts.json && tk_opts.interval)
		printf("[%s]\n", tk_time_str(buf, sizeof(buf)));
	for (int i = 0; i < nspecs; i++) {
		if (specs[i].hist)
			print_hist(&specs[i], v, n, seq);
		else
			print_freq(&specs[i], v, n, seq);
	}
	fflush(stdout);
	free(last);
	last = v;
	nlast = n;
}

int main(int argc, char **argv)
{
	struct argdist_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	for (int i = 0; i < nspecs; i++)
		resolve(&specs[i]);
	tk_init();
	skel = tk_load(&argdist_bpf_ops, configure, NULL);
	tk_ready();
	tk_print_intervals(print_all, skel);
	tk_losses_report(skel->obj);
	argdist_bpf__destroy(skel);
	tk_syms_free(syms);
	free(last);
	return tk_exit_status();
}
