/* funccount: count the calls of functions, or the hits of tracepoints,
 * that a pattern matches, as bcc's funccount. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "funcmatch.h"
#include "functarget.h"
#include "multiattach.h"
#include "tracekit.h"
#include "funccount.skel.h"

static struct {
	const char *spec;  /* PATTERN as given */
	bool regex;        /* -r */
} env;

/* What PATTERN names: one function (target), or several functions or
 * tracepoints (probes, n > 1; tracepoints "category:name"), or one
 * tracepoint (probes, n == 1). */
static struct tk_func_target target;
static struct tk_func_list probes;
static bool tracepoints;
static const char *label;  /* PATTERN's last part, for -v */
static char tp_category[256];

static const struct argp_option options[] = {
	{ "interval", 'i', "SEC", 0,
	  "Print the counts every SEC seconds, and start again from zero", 0 },
	{ "regexp", 'r', 0, 0,
	  "PATTERN's name part is a POSIX extended regex, not a glob", 0 },
	{ 0 },
};

static const char doc[] =
"Count the calls of kernel or user functions, or the hits of tracepoints,\n"
"that a pattern matches.\n"
"\v"
"PATTERN is one of (bcc's forms):\n"
"  FUNC, p::FUNC, k:FUNC  kernel functions (fentry, else kprobes): vfs_*\n"
"  LIB:FUNC, p:LIB:FUNC   functions of a library (uprobes): c:str*, where c\n"
"                         is libc.so.*, or a file name such as libssl.so.3;\n"
"                         with -p, the library that process maps; LIB may\n"
"                         be a PATH (./a.out:f*) or a program in PATH\n"
"  t:CATEGORY:NAME        tracepoints: t:syscalls:sys_enter_get*\n"
"  u:LIB:PROBE            USDT probes: not supported yet\n"
"Each name part may be a glob (*, ? and [...]) or, with -r, a POSIX\n"
"extended regex matching whole names; a pattern matches at most 1000\n"
"functions or tracepoints. Kernel functions are matched against\n"
"available_filter_functions (else /proc/kallsyms), tracepoints against\n"
"tracefs events/ (mounted when missing). Several functions attach with\n"
"one kprobe.multi (uprobe.multi) link where the kernel has it, else one\n"
"probe per function; several tracepoints with one classic tracepoint\n"
"link each; one tracepoint with tp_btf, else raw_tp, else the classic\n"
"tracepoint (-v says which). Each hit adds one to its probe's per-CPU\n"
"counter, the probe told by its BPF cookie (else a kprobe's address;\n"
"several tracepoints need cookies, Linux 5.15). k:FUNC is bpftrace's\n"
"form, not bcc's.\n"
"\n"
"Output: bcc's table, FUNC and COUNT, of the probes hit, the largest\n"
"count last: at exit (the end of -d/--duration, Ctrl-C, or COMMAND's\n"
"end), or with -i SEC every SEC seconds (a blank line, with -T the time,\n"
"then the counts of that interval). -j: NDJSON, a record per probe hit\n"
"({\"type\":\"count\",\"probe\":...,\"count\":N}, with \"time\" and \"interval\"\n"
"under -i), then the loss record. With -p (or --tid) a user function is\n"
"probed in that process only, and every hit is of that process.\n"
"\n"
"Examples:\n"
"  funccount 'vfs_*'                 # kernel vfs_*() calls\n"
"  funccount -r '^vfs.*'             # the same, with a regex\n"
"  funccount -Ti 5 'vfs_*'           # every 5 s, with the time\n"
"  funccount -d 10 'vfs_*'           # for 10 s\n"
"  funccount -p 185 'c:str*'         # libc's str*() in process 185\n"
"  funccount t:sched:sched_fork      # hits of one tracepoint\n"
"  funccount 't:syscalls:sys_enter_get*'  # per syscall entry tracepoint\n"
"  funccount ./test:'read*'          # read*() of ./test\n"
"  funccount -j c:malloc -- ls       # malloc() calls of ls, NDJSON\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'i':
		tk_opts.interval = tk_arg_long("-i/--interval", arg, 1, 86400);
		break;
	case 'r':
		env.regex = true;
		break;
	case ARGP_KEY_ARG:
		if (env.spec)
			tk_usage_error("unexpected argument '%s': one PATTERN per run", arg);
		env.spec = arg;
		break;
	case ARGP_KEY_END:
		if (!env.spec)
			tk_usage_error("missing PATTERN: kernel functions (vfs_*), LIB:FUNC (c:str*), PATH:FUNC or t:CATEGORY:NAME (tracepoints)");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* bcc's -D prints the generated BPF program; tracekit's is compiled
 * ahead of time. */
static const struct tk_bcc_missing bcc_missing[] = {
	{ "-D", "the BPF program is compiled ahead of time (bpf/funccount.bpf.c); --verbose shows how it attaches" },
	{ "--debug", "the BPF program is compiled ahead of time (bpf/funccount.bpf.c); --verbose shows how it attaches" },
	{ 0 },
};

static const struct tk_tool tool = {
	.name = "funccount",
	.doc = doc,
	.options = options,
	.parser = parse,
	.args_doc = "PATTERN",
	.bcc_missing = bcc_missing,
};

static void resolve_tracepoints(const char *spec)
{
	char err[PATH_MAX + 256], events[PATH_MAX];
	const char *dir = tk_tracefs_file("events", events, sizeof(events));

	tracepoints = true;
	if (tk_tracepoints_match(spec, env.regex, dir, &probes, err, sizeof(err)) < 0)
		tk_usage_error("invalid PATTERN '%s': %s", env.spec, err);
	label = spec;
	if (probes.n == 1)
		snprintf(tp_category, sizeof(tp_category), "%.*s",
			 (int)strcspn(probes.v[0].name, ":"), probes.v[0].name);
}

static void resolve_funcs(const char *spec)
{
	pid_t pid = tk_filter_attach_pid() > 0 ? tk_filter_attach_pid() : 0;
	char err[PATH_MAX + 256];

	if (tk_func_spec_resolve(spec, env.regex, pid, &target, &probes,
				 &label, err, sizeof(err)) < 0)
		tk_usage_error("invalid PATTERN '%s': %s", env.spec, err);
	if ((target.binary[0] || probes.binary[0]) && pid && kill(pid, 0) &&
	    errno == ESRCH)
		tk_usage_error("invalid --%s value '%d': no such process",
			       tk_opts.filter.tgid > 0 ? "pid" : "tid", (int)pid);
}

/* PATTERN in bcc's grammar (funccount.py's Probe): split at every colon,
 * one part FUNC, two LIB:FUNC, three TYPE:LIB:FUNC with TYPE p, t or u. */
static void resolve(void)
{
	const char *s = env.spec, *rest;
	int parts = 1;

	for (rest = s; (rest = strchr(rest, ':')); rest++)
		parts++;
	if (!strncmp(s, "t:", 2) && (parts == 3 || env.regex)) {
		resolve_tracepoints(s + 2);
	} else if (!strncmp(s, "t:", 2)) {
		tk_usage_error("invalid PATTERN '%s': expected t:CATEGORY:NAME, such as t:syscalls:sys_enter_get*",
			       s);
	} else if (parts == 3 && !strncmp(s, "u:", 2)) {
		tk_usage_error("invalid PATTERN '%s': USDT probes are not supported yet; p:%s counts calls of a user function",
			       s, s + 2);
	} else if (parts == 3 && !strncmp(s, "p::", 3)) {
		resolve_funcs(s + 3);
	} else if (parts == 3 && !strncmp(s, "p:", 2)) {
		resolve_funcs(s + 2);
	} else if (parts == 2 && !strncmp(s, "k:", 2)) {
		resolve_funcs(s + 2);
	} else if (parts >= 3 && !env.regex) {
		tk_usage_error("invalid PATTERN '%s': expected FUNC, LIB:FUNC, p::FUNC, p:LIB:FUNC, t:CATEGORY:NAME or u:LIB:PROBE",
			       s);
	} else {
		resolve_funcs(s);
	}
}

static size_t n_probes(void)
{
	return probes.n ? probes.n : 1;
}

static const char *probe_name(size_t i)
{
	return probes.n ? probes.v[i].name : target.func;
}

static int configure(void *s, void *ctx)
{
	struct funccount_bpf *skel = s;
	int err;

	(void)ctx;
	err = bpf_map__set_max_entries(skel->maps.counts, n_probes());
	return err ? err : tk_probe_index_set(skel->obj, &probes);
}

TK_SKEL_OPS(funccount_bpf);

struct count {
	size_t probe;
	unsigned long long n;
};

static void add_count(const void *key, const char *vals, int ncpu,
		      size_t vsize, void *ctx)
{
	unsigned long long *sums = ctx;
	unsigned k = *(const unsigned *)key;
	int c;

	for (c = 0; k < n_probes() && c < ncpu; c++)
		sums[k] += *(const unsigned long long *)(vals + c * vsize);
}

/* bcc's order: the largest count last; ties by name. */
static int by_count(const void *a, const void *b)
{
	const struct count *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? -1 : 1;
	return strcmp(probe_name(x->probe), probe_name(y->probe));
}

/* The counts since the last print (the map is never cleared: each
 * print subtracts the sums it last read, so no hit is lost to a clear). */
static void print_counts(void *arg, int seq)
{
	struct funccount_bpf *skel = arg;

	static unsigned long long *last;
	unsigned long long *now = calloc(n_probes(), sizeof(*now));
	struct count *c = calloc(n_probes(), sizeof(*c));
	struct tk_json j;
	size_t i, n = 0;
	char buf[16];

	if (!now || !c || (!last && !(last = calloc(n_probes(), sizeof(*last)))))
		tk_fail("out of memory");
	if (tk_percpu_map_read(skel->maps.counts, add_count, now))
		tk_fail("cannot read the counts map");
	for (i = 0; i < n_probes(); i++) {
		if (now[i] > last[i])
			c[n++] = (struct count){ i, now[i] - last[i] };
		last[i] = now[i];
	}
	qsort(c, n, sizeof(*c), by_count);
	if (!tk_opts.json) {
		putchar('\n');
		if (tk_opts.time)
			printf("%-8s\n", tk_time_str(buf, sizeof(buf)));
		printf("%-36s %8s\n", "FUNC", "COUNT");
	}
	for (i = 0; i < n; i++) {
		if (!tk_opts.json) {
			printf("%-36s %8llu\n", probe_name(c[i].probe), c[i].n);
			continue;
		}
		tk_json_begin(&j, stdout);
		tk_json_str(&j, "type", "count");
		if (tk_opts.interval) {
			tk_json_time(&j);
			tk_json_int(&j, "interval", seq);
		}
		tk_json_str(&j, "probe", probe_name(c[i].probe));
		if (target.binary[0] || probes.binary[0])
			tk_json_str(&j, "binary", probes.n ? probes.binary : target.binary);
		tk_json_uint(&j, "count", c[i].n);
		tk_json_end(&j);
	}
	fflush(stdout);
	free(now);
	free(c);
}

int main(int argc, char **argv)
{
	struct funccount_bpf *skel;
	pid_t pid;

	tk_parse_args(&tool, argc, argv);
	resolve();
	tk_init();
	/* A user function is probed in the filtered process only. */
	pid = tk_filter_attach_pid();
	if (tracepoints && probes.n == 1) {
		tk_set_target_tp("probe", tp_category,
				 probes.v[0].name + strlen(tp_category) + 1);
	} else if (tracepoints) {
		tk_probe_index_plan(&probes, true, "funccount");
		tk_set_target_tps("probe", &probes, label);
	} else if (probes.n) {
		tk_probe_index_plan(&probes, false, "funccount");
		tk_set_target_multi("probe", &probes, label,
				    probes.binary[0] ? pid : -1);
	} else {
		tk_set_target("probe", target.binary[0] ? target.binary : NULL,
			      target.func, target.binary[0] ? pid : -1);
	}
	skel = tk_load(&funccount_bpf_ops, configure, NULL);
	tk_ready();
	tk_print_intervals(print_counts, skel);
	tk_losses_report(skel->obj);
	funccount_bpf__destroy(skel);
	tk_func_list_free(&probes);
	return tk_exit_status();
}
