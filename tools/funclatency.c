/* funclatency: time kernel or user functions, as log2 histograms. */
#include <bpf/bpf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "funclatency.h"
#include "funcmatch.h"
#include "functarget.h"
#include "multiattach.h"
#include "tracekit.h"
#include "funclatency.skel.h"

static struct {
	const char *spec;    /* FUNC as given */
	bool micros, millis;
	bool per_func;       /* -F */
	bool regex;          /* -r */
	int level;           /* -l, 0 when not given */
} env;

/* What FUNC names: one function (target), or several (funcs, n > 1). */
static struct tk_func_target target;
static struct tk_func_list funcs;
static const char *pattern;  /* FUNC's function part, for messages */

static const struct argp_option options[] = {
	{ "microseconds", 'u', 0, 0, "Microsecond histogram (default: ns)", 0 },
	{ "milliseconds", 'm', 0, 0, "Millisecond histogram (default: ns)", 0 },
	{ "interval", 'i', "SEC", 0,
	  "Print every SEC seconds (as [interval])", 0 },
	{ "function", 'F', 0, 0, "A histogram per function", 0 },
	{ "regexp", 'r', 0, 0,
	  "FUNC's function part is a POSIX extended regex, not a glob", 0 },
	{ "level", 'l', "LEVEL", 0,
	  "Time only the outermost LEVEL levels of nested or recursive calls (1-16)", 0 },
	{ 0 },
};

static const char doc[] =
"Time kernel or user functions: a histogram of their latency.\n"
"\v"
"FUNC is one of:\n"
"  vfs_read             a kernel function (fentry/fexit, else kprobes)\n"
"  c:malloc             a library function (uprobes): c is libc.so.*,\n"
"                       pthread libpthread.so.*, or a file name such as\n"
"                       libssl.so.3; with -p, the one the process maps\n"
"  /usr/bin/bash:readline, ./a.out:work   a function of an ELF file\n"
"  bash:readline        a function of a program in PATH\n"
"and the function part may be a glob ('vfs_*', 'c:str*'; *, ? and [...])\n"
"or, with -r, a POSIX extended regex matching whole names\n"
"('vfs_(read|write)'). Kernel functions are matched against\n"
"available_filter_functions (else /proc/kallsyms, less the kprobe\n"
"blacklist); a pattern may match at most 1000 functions. Several\n"
"functions attach with one kprobe.multi (uprobe.multi) link where the\n"
"kernel has it, else one probe per function (-v says which).\n"
"\n"
"The latency of a call is the time from its entry to its return. All\n"
"calls are counted in one histogram; -F gives one per function, headed\n"
"'Function = NAME', for the functions called. A call made while another\n"
"of them is running on the same thread (recursion, nesting) is timed\n"
"too, up to 16 deep (deeper calls count as failed map inserts in the loss\n"
"report); -l LEVEL times only the outermost LEVEL of them (deeper calls\n"
"are left out, not lost). --print-cgroup gives a histogram per cgroup v2\n"
"(of the thread as the call returns), or with -F per function and cgroup,\n"
"headed 'cgroup = PATH'; up to 10240 of them in a run (the calls of more\n"
"count as failed map inserts). Filters are judged at the call's entry.\n"
"With -p (or --tid) a user function is probed in that process only. A\n"
"FUNC that names nothing (no such file, library or function) is a usage\n"
"error. Since -u is --microseconds here (as in bcc), --uid has no short\n"
"letter.\n"
"\n"
"Examples:\n"
"  funclatency vfs_read             # kernel vfs_read() latency, in ns\n"
"  funclatency -u -p 181 c:malloc   # malloc() of process 181, in us\n"
"  funclatency -m do_nanosleep 1 5  # every second, 5 times, in ms\n"
"  funclatency -T -i 2 ./a.out:work # every 2 s with a time line\n"
"  funclatency -j c:getpid          # NDJSON\n"
"  funclatency -F 'vfs_r*'          # a histogram per vfs_r* function\n"
"  funclatency --print-cgroup c:malloc  # a histogram per cgroup\n"
"  funclatency -r 'c:str(len|cmp)'  # strlen() and strcmp() together\n"
"  funclatency -l 1 ./a.out:walk    # outermost calls of a recursion\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'u': env.micros = true; break;
	case 'm': env.millis = true; break;
	case 'i':
		tk_opts.interval = tk_arg_long("--interval", arg, 1, 86400);
		break;
	case 'F': env.per_func = true; break;
	case 'r': env.regex = true; break;
	case 'l':
		env.level = tk_arg_long("--level", arg, 1, FUNCLATENCY_MAX_DEPTH);
		break;
	case ARGP_KEY_ARG:
		if (env.spec)
			return ARGP_ERR_UNKNOWN;  /* [interval [count]] */
		env.spec = arg;
		break;
	case ARGP_KEY_END:
		if (env.micros && env.millis)
			tk_usage_error("options -u/--microseconds and -m/--milliseconds cannot be combined");
		if (!env.spec)
			tk_usage_error("missing FUNC: a kernel function (vfs_read), LIB:FUNC (c:malloc) or PATH:FUNC");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* libbpf-tools' -k picks kprobes over fentry; here every tool's attach
 * chain does, and TRACEKIT_ATTACH starts it where asked. */
static const struct tk_bcc_missing bcc_missing[] = {
	{ "-k", "set TRACEKIT_ATTACH=kprobe to use kprobes rather than fentry" },
	{ "--kprobes", "set TRACEKIT_ATTACH=kprobe to use kprobes rather than fentry" },
	{ 0 },
};

static const struct tk_tool tool = {
	.name = "funclatency",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "u",
	.periodic = true,
	.args_doc = "FUNC [interval [count]]",
	.bcc_missing = bcc_missing,
};

static const char *unit(void)
{
	return env.millis ? "msecs" : env.micros ? "usecs" : "nsecs";
}

static unsigned long long unit_ns(void)
{
	return env.millis ? 1000000 : env.micros ? 1000 : 1;
}

/* FUNC must name something that exists, and a user function's process
 * must exist: a usage error (exit 2) otherwise. A pattern that matches
 * one function is that function. */
static void resolve(void)
{
	pid_t pid = tk_filter_attach_pid() > 0 ? tk_filter_attach_pid() : 0;
	char err[PATH_MAX + 256];

	if (tk_func_spec_resolve(env.spec, env.regex, pid, &target, &funcs,
				 &pattern, err, sizeof(err)) < 0)
		tk_usage_error("invalid FUNC '%s': %s", env.spec, err);
	if ((target.binary[0] || funcs.binary[0]) && pid && kill(pid, 0) &&
	    errno == ESRCH)
		tk_usage_error("invalid --%s value '%d': no such process",
			       tk_opts.filter.tgid > 0 ? "pid" : "tid", (int)pid);
}

static bool several(void)
{
	return funcs.n > 1;
}

static const char *func_name(unsigned i)
{
	return several() ? funcs.v[i].name : target.func;
}

/* The entries of hist: one histogram per function with -F over several,
 * else one (--print-cgroup keeps them per cgroup too, in cgroup_hist). */
static unsigned n_hists(void)
{
	return env.per_func && several() ? funcs.n : 1;
}

/* A histogram's counts: of one function (-F over several) or of all,
 * of one cgroup (--print-cgroup) or of all. */
struct entry {
	struct funclatency_key key;  /* first: a pointer to an entry is one
				      * to its key (by_key) */
	struct funclatency_hist h;
};

struct entries {
	struct entry *v;
	size_t n, cap;
};

/* One entry of the map read (hist: key the function's index;
 * cgroup_hist: a funclatency_key), its per-CPU values summed. */
static void add_entry(const void *key, const char *vals, int ncpu,
		      size_t vsize, void *ctx)
{
	struct entries *es = ctx;
	struct entry *e;
	int c, s;

	if (es->n == es->cap) {
		size_t cap = es->cap ? 2 * es->cap : 64;
		struct entry *v = realloc(es->v, cap * sizeof(*v));

		if (!v)
			tk_fail("out of memory");
		es->v = v;
		es->cap = cap;
	}
	e = &es->v[es->n++];
	memset(e, 0, sizeof(*e));
	if (tk_opts.filter.cgroup_ids)
		memcpy(&e->key, key, sizeof(e->key));
	else
		e->key.func = *(const unsigned *)key;
	for (c = 0; c < ncpu; c++) {
		const struct funclatency_hist *v = (const void *)(vals + c * vsize);

		for (s = 0; s < FUNCLATENCY_SLOTS; s++)
			e->h.slots[s] += v->slots[s];
		e->h.sum_ns += v->sum_ns;
	}
}

static int by_key(const void *a, const void *b)
{
	const struct funclatency_key *x = a, *y = b;

	if (x->cgroup_id != y->cgroup_id)
		return x->cgroup_id < y->cgroup_id ? -1 : 1;
	return x->func < y->func ? -1 : x->func > y->func;
}

/* Counts since the last print: the map's sums now, minus the sums then,
 * by key. The map is never cleared, so no call is lost to a clear (and
 * with --print-cgroup a cgroup's entries stay for the run). */
static struct entries read_counts(struct funclatency_bpf *skel)
{
	static struct entries last;
	struct entries now = { 0 }, diff;
	const struct entry *was;
	size_t i;
	int s;

	if (tk_percpu_map_read(tk_opts.filter.cgroup_ids ? skel->maps.cgroup_hist :
			       skel->maps.hist, add_entry, &now))
		tk_fail("cannot read the histogram map");
	if (now.n)
		qsort(now.v, now.n, sizeof(*now.v), by_key);
	diff = now;
	diff.v = calloc(now.n + 1, sizeof(*diff.v));
	if (!diff.v)
		tk_fail("out of memory");
	for (i = 0; i < now.n; i++) {
		diff.v[i] = now.v[i];
		was = last.n ? bsearch(&now.v[i], last.v, last.n, sizeof(*last.v),
				       by_key) : NULL;
		if (!was)
			continue;
		for (s = 0; s < FUNCLATENCY_SLOTS; s++)
			diff.v[i].h.slots[s] -= was->h.slots[s];
		diff.v[i].h.sum_ns -= was->h.sum_ns;
	}
	free(last.v);
	last = now;
	return diff;
}

static unsigned long long hist_count(const struct funclatency_hist *h)
{
	unsigned long long count = 0;
	int s;

	for (s = 0; s < FUNCLATENCY_SLOTS; s++)
		count += h->slots[s];
	return count;
}

/* Each histogram in a section of its own (else one of all calls): per
 * function with -F, per cgroup with --print-cgroup. */
static bool sections(void)
{
	return env.per_func || tk_opts.filter.cgroup_ids;
}

/* One histogram record; key NULL: of all calls. */
static void print_json(const struct funclatency_hist *h,
		       const struct funclatency_key *key)
{
	unsigned long long count = hist_count(h);
	struct tk_json j;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "histogram");
	tk_json_time(&j);
	if ((key && env.per_func) || !several()) {
		tk_json_str(&j, "function", func_name(key ? key->func : 0));
	} else {
		tk_json_str(&j, "pattern", pattern);
		tk_json_uint(&j, "functions", funcs.n);
	}
	if (target.binary[0] || funcs.binary[0])
		tk_json_str(&j, "binary", several() ? funcs.binary : target.binary);
	if (key && tk_opts.filter.cgroup_ids)
		tk_json_cgroup(&j, key->cgroup_id);
	tk_hist_json_log2(&j, h->slots, FUNCLATENCY_SLOTS, unit());
	tk_json_uint(&j, "sum_ns", h->sum_ns);
	if (count)
		tk_json_double(&j, "avg_ns", (double)h->sum_ns / count);
	else
		tk_json_null(&j, "avg_ns");
	tk_json_end(&j);
}

/* Sections in function name order (the list is in address order when
 * found by address), then cgroup path order. */
static int by_name(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int order = strcmp(func_name(x->key.func), func_name(y->key.func));

	return order ? order : tk_hist_cgroup_cmp(x->key.cgroup_id, y->key.cgroup_id);
}

static void print_interval(void *arg, int seq)
{
	struct funclatency_bpf *skel = arg;
	struct entries c = read_counts(skel);
	struct funclatency_hist all = { 0 };
	unsigned long long count, total;
	char buf[16];
	size_t i, k;
	int s;

	(void)seq;  /* tk_print_intervals' count: not printed */

	/* All calls; the histograms with calls first, in section order. */
	for (i = k = 0; i < c.n; i++) {
		for (s = 0; s < FUNCLATENCY_SLOTS; s++)
			all.slots[s] += c.v[i].h.slots[s];
		all.sum_ns += c.v[i].h.sum_ns;
		if (hist_count(&c.v[i].h))
			c.v[k++] = c.v[i];
	}
	qsort(c.v, k, sizeof(*c.v), by_name);
	count = hist_count(&all);
	if (tk_opts.json && !sections()) {
		print_json(&all, NULL);
	} else if (tk_opts.json) {
		for (i = 0; i < k; i++)
			print_json(&c.v[i].h, &c.v[i].key);
	} else {
		putchar('\n');
		if (tk_opts.time)
			printf("%-8s\n", tk_time_str(buf, sizeof(buf)));
		if (!sections()) {
			tk_hist_print_log2(stdout, all.slots, FUNCLATENCY_SLOTS, unit());
		}
		/* bcc's layout: a section per function (and cgroup) with calls */
		for (i = 0; sections() && i < k; i++) {
			putchar('\n');
			if (env.per_func)
				printf("Function = %s", func_name(c.v[i].key.func));
			if (tk_opts.filter.cgroup_ids)
				tk_hist_print_cgroup_label(stdout, env.per_func,
							   c.v[i].key.cgroup_id);
			putchar('\n');
			tk_hist_print_log2(stdout, c.v[i].h.slots,
					   FUNCLATENCY_SLOTS, unit());
		}
		/* bcc's summary: the total in the unit, its average per call */
		total = all.sum_ns / unit_ns();
		if (count)
			printf("\navg = %llu %s, total: %llu %s, count: %llu\n\n",
			       total / count, unit(), total, unit(), count);
	}
	fflush(stdout);
	free(c.v);
}

static int configure(void *s, void *ctx)
{
	struct funclatency_bpf *skel = s;
	int err;

	(void)ctx;
	skel->rodata->unit_ns = unit_ns();
	if (env.level) {
		skel->rodata->max_level = env.level;
		skel->rodata->level_set = true;
	}
	if (n_hists() > 1 && (err = tk_probe_index_set(skel->obj, &funcs)))
		return err;
	/* The histogram map not used gets one entry. */
	if (tk_opts.filter.cgroup_ids)
		return bpf_map__set_max_entries(skel->maps.hist, 1);
	err = bpf_map__set_max_entries(skel->maps.hist, n_hists());
	return err ? err : bpf_map__set_max_entries(skel->maps.cgroup_hist, 1);
}

TK_SKEL_OPS(funclatency_bpf);

int main(int argc, char **argv)
{
	struct funclatency_bpf *skel;
	const char *binary;
	pid_t pid;

	tk_parse_args(&tool, argc, argv);
	resolve();
	tk_init();
	/* A user function is probed in the filtered process only. */
	binary = target.binary[0] ? target.binary : NULL;
	pid = tk_filter_attach_pid();
	if (several()) {
		if (env.per_func)
			tk_probe_index_plan(&funcs, false, "-F");
		binary = funcs.binary[0] ? funcs.binary : NULL;
		tk_set_target_multi("entry", &funcs, pattern, binary ? pid : -1);
		tk_set_target_multi("exit", &funcs, pattern, binary ? pid : -1);
	} else {
		tk_set_target("entry", binary, target.func, binary ? pid : -1);
		tk_set_target("exit", binary, target.func, binary ? pid : -1);
	}
	skel = tk_load(&funclatency_bpf_ops, configure, NULL);
	tk_ready();
	tk_print_intervals(print_interval, skel);
	tk_losses_report(skel->obj);
	funclatency_bpf__destroy(skel);
	tk_func_list_free(&funcs);
	return tk_exit_status();
}
