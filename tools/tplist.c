/* tplist: the tracepoints of this kernel with their fields, its functions
 * with their prototypes, the functions of a binary and its USDT probes:
 * what the other tools can attach to. No BPF program of its own. */
#include <bpf/btf.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "funcmatch.h"
#include "functarget.h"
#include "tpformat.h"
#include "tracekit.h"
#include "usdt.h"

enum mode { M_TRACEPOINTS, M_KERNEL, M_USER, M_USDT };

static struct {
	enum mode mode;
	const char *binary;  /* -u, -l */
	const char *glob;
} env = { .glob = "*" };

static const struct argp_option options[] = {
	{ "kernel", 'k', 0, 0,
	  "Kernel functions matching GLOB, with their BTF prototypes; those that cannot be probed are marked", 0 },
	{ "user", 'u', "BIN", 0,
	  "Functions of BIN (a path, a program in PATH, or a library: c, pthread, libssl.so.3) matching GLOB", 0 },
	{ "usdt", 'l', "BIN", 0,
	  "USDT probes of BIN (provider:name) matching GLOB, with location, semaphore and argument spec", 0 },
	{ "GLOB", 0, 0, OPTION_DOC | OPTION_NO_USAGE,
	  "A glob (fnmatch: * ? [...]) over category:event for tracepoints, function names for -k and -u, provider:name for -l; default *", 0 },
	{ "-v", 0, 0, OPTION_DOC | OPTION_NO_USAGE,
	  "With tracepoints: each one's fields, as C declarations (common_* fields left out)", 0 },
	{ 0 },
};

static const char doc[] =
"List what can be traced: tracepoints (default), kernel functions (-k),\n"
"functions of a binary (-u BIN) or its USDT probes (-l BIN).\n"
"\v"
"Tracepoints come from tracefs's events/ (mounted when missing); -v shows\n"
"each one's fields from its format file, which is the kernel's own layout\n"
"of the record (offsets and sizes in -j). Kernel function prototypes come\n"
"from BTF (/sys/kernel/btf/vmlinux, or --btf FILE); a function that is not\n"
"in available_filter_functions (notrace) or not in /proc/kallsyms (inlined)\n"
"is marked: no tool can probe it.\n"
"Exit status: 0 when something matched, 1 when nothing did (with a message\n"
"on stderr, as grep exits 1), 2 on a usage error or a binary not found.\n"
"\n"
"Examples:\n"
"  tplist                        # every tracepoint\n"
"  tplist 'sched:*'              # the scheduler's tracepoints\n"
"  tplist -v sched:sched_switch  # with its fields\n"
"  tplist -k 'vfs_*'             # kernel functions and their prototypes\n"
"  tplist -u c 'str*'            # functions of libc\n"
"  tplist -l /usr/bin/python3    # USDT probes of python\n"
"  tplist -j -v 'timer:*' | jq .fields\n";

static void set_mode(enum mode m, const char *binary)
{
	if (env.mode != M_TRACEPOINTS && env.mode != m)
		tk_usage_error("-k, -u and -l cannot be combined");
	env.mode = m;
	env.binary = binary;
}

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'k':
		set_mode(M_KERNEL, NULL);
		break;
	case 'u':
		set_mode(M_USER, arg);
		break;
	case 'l':
		set_mode(M_USDT, arg);
		break;
	case ARGP_KEY_ARG:
		if (state->arg_num > 0)
			tk_usage_error("unexpected argument '%s': one GLOB at most", arg);
		env.glob = arg;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "tplist",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "u",
	.args_doc = "[GLOB]",
};

/* tplist looks at no task: a task filter or a traced COMMAND is a
 * mistake, not something to ignore. */
static void refuse_task_options(void)
{
	const struct tk_filter *f = &tk_opts.filter;

	if (f->tgid || f->tid || f->ppid || f->uid != -1 || f->comm[0] ||
	    tk_opts.cgroup_path || tk_opts.unit)
		tk_usage_error("task filters (-p, --tid, --ppid, --uid, -n, -c, --unit) do not apply: tplist lists probe points");
	if (tk_opts.command)
		tk_usage_error("tplist runs no COMMAND");
	if (tk_opts.duration || tk_opts.time)
		tk_usage_error("tplist does not trace: -d and -T do not apply");
}

/* A path into buf: false when it does not fit. */
static bool __attribute__((format(printf, 3, 4)))
pathf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < size;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void no_match(const char *what)
{
	fflush(stdout);
	tk_fail("no %s matches '%s'", what, env.glob);
}

/* ---- tracepoints ---- */

/* "category:event" of every tracepoint matching the glob, sorted. */
static char **list_tracepoints(const char *events, size_t *n)
{
	char **v = NULL, path[PATH_MAX], name[512];
	struct dirent *c, *e;
	DIR *cd, *ed;

	*n = 0;
	cd = opendir(events);
	if (!cd)
		tk_fail("cannot list %s: %s", events, strerror(errno));
	while ((c = readdir(cd))) {
		if (c->d_name[0] == '.')
			continue;
		if (!pathf(path, sizeof(path), "%s/%s", events, c->d_name) ||
		    !(ed = opendir(path)))
			continue;  /* a file: enable, header_page, ... */
		while ((e = readdir(ed))) {
			struct stat st;
			char **nv;

			if (e->d_name[0] == '.')
				continue;
			if (!pathf(path, sizeof(path), "%s/%s/%s/format", events,
				   c->d_name, e->d_name) ||
			    !pathf(name, sizeof(name), "%s:%s", c->d_name, e->d_name) ||
			    stat(path, &st) || fnmatch(env.glob, name, 0))
				continue;
			nv = realloc(v, (*n + 1) * sizeof(*v));
			if (!nv || !(nv[*n] = strdup(name)))
				tk_fail("out of memory");
			v = nv;
			(*n)++;
		}
		closedir(ed);
	}
	closedir(cd);
	qsort(v, *n, sizeof(*v), cmp_str);
	return v;
}

static void print_tracepoint(const char *events, const char *tp)
{
	char path[PATH_MAX], line[1024];
	const char *colon = strchr(tp, ':');
	struct tk_json j;
	struct tk_tp_field f;
	FILE *fmt = NULL;

	if (tk_opts.verbose) {
		pathf(path, sizeof(path), "%s/%.*s/%s/format", events,
		      (int)(colon - tp), tp, colon + 1);
		fmt = fopen(path, "re");
		if (!fmt)
			tk_warn("cannot read %s: %s", path, strerror(errno));
	}
	if (tk_opts.json) {
		tk_json_begin(&j, stdout);
		tk_json_str(&j, "type", "tracepoint");
		tk_json_strn(&j, "category", tp, colon - tp);
		tk_json_str(&j, "event", colon + 1);
		if (fmt)
			tk_json_arr_open(&j, "fields");
	} else {
		printf("%s\n", tp);
	}
	while (fmt && fgets(line, sizeof(line), fmt)) {
		if (!tk_tp_field_parse(line, &f) || !strncmp(f.name, "common_", 7))
			continue;
		if (!tk_opts.json) {
			printf("    %s %s%s;\n", f.type, f.name, f.array);
			continue;
		}
		tk_json_obj_open(&j, NULL);
		tk_json_str(&j, "name", f.name);
		snprintf(line, sizeof(line), "%s%s", f.type, f.array);
		tk_json_str(&j, "type", line);
		tk_json_int(&j, "offset", f.offset);
		tk_json_int(&j, "size", f.size);
		tk_json_bool(&j, "signed", f.is_signed);
		tk_json_obj_close(&j);
	}
	if (fmt) {
		fclose(fmt);
		if (tk_opts.json)
			tk_json_arr_close(&j);
	}
	if (tk_opts.json)
		tk_json_end(&j);
}

static void tracepoints(void)
{
	char events[PATH_MAX], **tps;
	size_t n, i;

	if (!tk_tracefs_file("events", events, sizeof(events)))
		tk_fail("cannot read tracefs's events/ (tracefs not mounted and not mountable here)");
	tps = list_tracepoints(events, &n);
	if (tk_opts.dry_run)
		return;
	if (!n)
		no_match("tracepoint");
	for (i = 0; i < n; i++) {
		print_tracepoint(events, tps[i]);
		free(tps[i]);
	}
	free(tps);
}

/* ---- kernel functions ---- */

static FILE *dump_to;

static void dump_printf(void *ctx, const char *fmt, va_list ap)
{
	(void)ctx;
	vfprintf(dump_to, fmt, ap);
}

/* "int vfs_read(struct file *file, char *buf, size_t count, loff_t *pos)"
 * for BTF function func_id, malloc'd. */
static char *prototype(const struct btf *btf, struct btf_dump *d, int func_id)
{
	const struct btf_type *fn = btf__type_by_id(btf, func_id);
	const struct btf_type *proto = btf__type_by_id(btf, fn->type);
	const struct btf_param *p = btf_params(proto);
	int i, n = btf_vlen(proto);
	char *buf = NULL;
	size_t len = 0;
	LIBBPF_OPTS(btf_dump_emit_type_decl_opts, o);

	dump_to = open_memstream(&buf, &len);
	if (!dump_to)
		tk_fail("out of memory");
	/* The return type declared with the function's name: "char *name". */
	o.field_name = btf__name_by_offset(btf, fn->name_off);
	btf_dump__emit_type_decl(d, proto->type, &o);
	fputc('(', dump_to);
	for (i = 0; i < n; i++, p++) {
		if (i)
			fputs(", ", dump_to);
		if (!p->type) {  /* the ... of a variadic function */
			fputs("...", dump_to);
			continue;
		}
		o.field_name = btf__name_by_offset(btf, p->name_off);
		btf_dump__emit_type_decl(d, p->type, &o);
	}
	if (!n)
		fputs("void", dump_to);
	fputc(')', dump_to);
	fclose(dump_to);
	return buf;
}

struct kfunc {
	char *name;
	int btf_id;          /* 0: none */
	bool in_kallsyms, in_filter;
};

static int cmp_kfunc(const void *a, const void *b)
{
	return strcmp(((const struct kfunc *)a)->name, ((const struct kfunc *)b)->name);
}

static struct kfunc *find_kfunc(struct kfunc *v, size_t n, const char *name)
{
	struct kfunc key = { .name = (char *)name };

	return bsearch(&key, v, n, sizeof(*v), cmp_kfunc);
}

static void add_kfunc(struct kfunc **v, size_t *n, const char *name, int id)
{
	struct kfunc *nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv || !(nv[*n].name = strdup(name)))
		tk_fail("out of memory");
	nv[*n].btf_id = id;
	nv[*n].in_kallsyms = nv[*n].in_filter = false;
	*v = nv;
	(*n)++;
}

static const char *kfunc_problem(const struct kfunc *k)
{
	if (!k->in_kallsyms)
		return "not in kallsyms: inlined or removed";
	if (!k->in_filter)
		return "not in available_filter_functions: notrace";
	return NULL;
}

static void kernel_functions(struct tk_func_pattern *pat)
{
	struct tk_func_list ks = { 0 }, fl = { 0 };
	char filter[PATH_MAX];
	struct kfunc *v = NULL, *k;
	bool have_filter;
	size_t n = 0, n_btf, i;
	struct btf_dump *d;
	const struct btf *btf;
	int id, last;

	btf = tk_kernel_btf();
	if (!btf)
		tk_fail("cannot load kernel BTF%s%s: %s (use --btf FILE)",
			tk_opts.btf_path ? " from " : "",
			tk_opts.btf_path ? tk_opts.btf_path : "", strerror(errno));
	d = btf_dump__new(btf, dump_printf, NULL, NULL);
	if (!d)
		tk_fail("btf_dump: %s", strerror(errno));
	last = btf__type_cnt(btf);
	for (id = 1; id < last; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const char *name;

		if (!btf_is_func(t))
			continue;
		name = btf__name_by_offset(btf, t->name_off);
		if (name && tk_func_pattern_match(pat, name))
			add_kfunc(&v, &n, name, id);
	}
	qsort(v, n, sizeof(*v), cmp_kfunc);
	n_btf = n;
	/* What kprobes and kprobe.multi could attach to: kallsyms's text
	 * symbols, and of those the ones ftrace can patch. */
	if (tk_kernel_funcs_match(pat, NULL, "/proc/kallsyms", NULL, &ks))
		tk_fail("cannot read /proc/kallsyms: %s", strerror(errno));
	/* Unreadable (EPERM on some locked-down kernels): notrace
	 * functions cannot be told apart, and say so. */
	have_filter = tk_tracefs_file("available_filter_functions", filter, sizeof(filter)) &&
		!tk_kernel_funcs_match(pat, filter, "/proc/kallsyms", NULL, &fl) &&
		!strcmp(fl.source, "available_filter_functions");
	if (!have_filter && !tk_opts.dry_run)
		tk_warn("cannot read tracefs's available_filter_functions: notrace functions are not marked");
	for (i = 0; i < ks.n; i++) {
		k = find_kfunc(v, n_btf, ks.v[i].name);
		if (!k) {
			add_kfunc(&v, &n, ks.v[i].name, 0);
			k = &v[n - 1];
		}
		k->in_kallsyms = true;
	}
	qsort(v, n, sizeof(*v), cmp_kfunc);
	for (i = 0; i < n; i++)
		v[i].in_filter = !have_filter;  /* unknown: not marked */
	for (i = 0; i < fl.n; i++) {
		k = find_kfunc(v, n, fl.v[i].name);
		if (k)
			k->in_filter = true;
	}
	tk_func_list_free(&ks);
	tk_func_list_free(&fl);
	if (!n && !tk_opts.dry_run)
		no_match("kernel function");
	for (i = 0; i < n && !tk_opts.dry_run; i++) {
		const char *problem = kfunc_problem(&v[i]);
		char *proto = v[i].btf_id ? prototype(btf, d, v[i].btf_id) : NULL;

		if (tk_opts.json) {
			struct tk_json j;

			tk_json_begin(&j, stdout);
			tk_json_str(&j, "type", "kernel_function");
			tk_json_str(&j, "name", v[i].name);
			if (proto)
				tk_json_str(&j, "prototype", proto);
			else
				tk_json_null(&j, "prototype");
			tk_json_bool(&j, "probeable", !problem);
			tk_json_bool(&j, "in_kallsyms", v[i].in_kallsyms);
			if (have_filter)
				tk_json_bool(&j, "in_available_filter_functions", v[i].in_filter);
			else
				tk_json_null(&j, "in_available_filter_functions");
			tk_json_end(&j);
		} else {
			printf("%s%s%s%s\n", proto ? proto : v[i].name,
			       proto ? "" : " (no BTF prototype)",
			       problem ? "  # cannot be probed: " : "", problem ? problem : "");
		}
		free(proto);
	}
	for (i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	btf_dump__free(d);
	tk_kernel_btf_release();
}

/* ---- a binary's functions and USDT probes ---- */

static void resolve_binary(char *path, size_t size)
{
	char err[512];

	if (tk_func_object_resolve(env.binary, 0, path, size, err, sizeof(err)))
		tk_usage_error("%s", err);
}

static void user_functions(struct tk_func_pattern *pat)
{
	struct tk_func_list l = { 0 };
	char path[PATH_MAX], err[512];
	size_t i;

	resolve_binary(path, sizeof(path));
	if (tk_elf_funcs_match(path, pat, &l, err, sizeof(err)))
		tk_usage_error("%s", err);
	if (tk_opts.dry_run)
		goto out;
	if (!l.n)
		tk_fail("no function of %s matches '%s'", path, env.glob);
	for (i = 0; i < l.n; i++) {
		if (tk_opts.json) {
			struct tk_json j;

			tk_json_begin(&j, stdout);
			tk_json_str(&j, "type", "function");
			tk_json_str(&j, "binary", path);
			tk_json_str(&j, "name", l.v[i].name);
			tk_json_uint(&j, "offset", l.v[i].addr);
			tk_json_end(&j);
		} else {
			printf("%s\n", l.v[i].name);
		}
	}
out:
	tk_func_list_free(&l);
}

static void usdt_probes(void)
{
	char path[PATH_MAX], err[512], name[1024];
	struct tk_usdt_probe *v;
	size_t n, i, shown = 0;
	int ret;

	resolve_binary(path, sizeof(path));
	ret = tk_usdt_list(path, &v, &n, err, sizeof(err));
	if (ret == -ENOENT || ret == -ENOEXEC)
		tk_usage_error("%s", err);
	if (ret)
		tk_fail("%s", err);
	for (i = 0; i < n && !tk_opts.dry_run; i++) {
		const struct tk_usdt_probe *p = &v[i];

		snprintf(name, sizeof(name), "%s:%s", p->provider, p->name);
		if (fnmatch(env.glob, name, 0))
			continue;
		if (tk_opts.json) {
			struct tk_json j;

			tk_json_begin(&j, stdout);
			tk_json_str(&j, "type", "usdt");
			tk_json_str(&j, "binary", path);
			tk_json_str(&j, "provider", p->provider);
			tk_json_str(&j, "name", p->name);
			tk_json_uint(&j, "location", p->addr);
			if (p->sema)
				tk_json_uint(&j, "semaphore", p->sema);
			else
				tk_json_null(&j, "semaphore");
			tk_json_str(&j, "args", p->args);
			tk_json_end(&j);
		} else {
			if (!shown)
				printf("%-32s %-18s %-18s %s\n", "PROBE", "LOCATION",
				       "SEMAPHORE", "ARGUMENTS");
			printf("%-32s %#-18llx %-18s %s\n", name, p->addr,
			       p->sema ? (snprintf(err, sizeof(err), "%#llx", p->sema), err) : "-",
			       p->args);
		}
		shown++;
	}
	tk_usdt_free(v, n);
	if (!shown && !tk_opts.dry_run) {
		if (!n)
			tk_fail("%s has no USDT probes (no .note.stapsdt notes)", path);
		tk_fail("no USDT probe of %s matches '%s'", path, env.glob);
	}
}

int main(int argc, char **argv)
{
	struct tk_func_pattern pat;
	char err[256];

	tk_parse_args(&tool, argc, argv);
	refuse_task_options();
	tk_init();
	if (tk_func_pattern_init(&pat, env.glob, false, err, sizeof(err)))
		tk_usage_error("%s", err);
	switch (env.mode) {
	case M_TRACEPOINTS:
		tracepoints();
		break;
	case M_KERNEL:
		kernel_functions(&pat);
		break;
	case M_USER:
		user_functions(&pat);
		break;
	case M_USDT:
		usdt_probes();
		break;
	}
	tk_func_pattern_free(&pat);
	if (fflush(stdout) || ferror(stdout))
		tk_fail("cannot write: %s", strerror(errno));
	return 0;
}
