/* syscount: count syscalls per syscall or per process, with errors and
 * latency; libbpf-tools' layout, or strace -c's summary table. */
#include <bpf/bpf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syscount.h"
#include "syscount.skel.h"
#include "tracekit.h"

static struct {
	bool process, latency, millis, failures, list, summary;
	int errno_filter;
	bool syscall_filter;  /* --syscall: only those in syscall_set */
	unsigned long long syscall_set[SYSCOUNT_SLOTS / 64];
	bool top_set;
	long top;          /* 0: all rows (-S without -T) */
} env = { .top = 10 };

enum { K_SYSCALL = 0x2000 };

static const struct argp_option options[] = {
	{ "syscall", K_SYSCALL, "NAME", 0,
	  "Count only these syscalls: names or numbers, NAME[,NAME...] (-l lists them)", 0 },
	{ "process", 'P', 0, 0, "Count by process, not by syscall", 0 },
	{ "latency", 'L', 0, 0, "Also measure the time spent in syscalls", 0 },
	{ "milliseconds", 'm', 0, 0, "Show -L times in ms (default: us)", 0 },
	{ "failures", 'x', 0, 0, "Count only failed syscalls", 0 },
	{ "errno", 'e', "ERRNO", 0,
	  "Count only syscalls failing with ERRNO (ENOENT, or a number)", 0 },
	{ "top", 'T', "N", 0, "Print the top N rows (default 10; -S: all)", 0 },
	{ "interval", 'i', "SEC", 0,
	  "Print every SEC seconds (0: at exit; as [interval])", 0 },
	{ "summary", 'S', 0, 0, "strace -c style table, by time (implies -L)", 0 },
	{ "list", 'l', 0, 0, "List the syscalls known by name and exit", 0 },
	{ 0 },
};

/* bcc's letters: -c is --ppid, -t is --tid; --cgroup keeps its name. */
static const struct tk_letter letters[] = {
	{ 'c', "ppid" }, { 't', "tid" }, { 0 },
};

static const char doc[] =
"Count syscalls, by syscall or by process, with errors and latency.\n"
"\v"
"Counts go into per-CPU maps in the kernel and are read at each interval\n"
"(or at exit). Rows are sorted by count, or by time with -L and -S.\n"
"Syscall -1 is rt_sigreturn (which resets the number it exits with) or a\n"
"syscall skipped by seccomp or ptrace; [other] counts ids above 1021.\n"
"--print-cgroup counts by cgroup v2 too: rows per cgroup and syscall (or\n"
"process, -P) with a CGROUP column last, \"cgroup\" in JSON; with -S one\n"
"table per cgroup, the one with the most time first, -T rows each.\n"
"The common --time option (long only: -T is --top) prints [HH:MM:SS]\n"
"before a block that would otherwise have none. As in bcc, -c is --ppid\n"
"and -t is --tid; the cgroup filter is --cgroup PATH.\n"
"\n"
"Examples:\n"
"  syscount                 # top 10 syscalls by count, at Ctrl-C\n"
"  syscount 1 5             # every second, five times\n"
"  syscount -p 181 -L       # one process, with time spent (us)\n"
"  syscount -P -T 20        # top 20 processes\n"
"  syscount -x -i 5         # only failed syscalls, every 5 seconds\n"
"  syscount -e ENOENT       # only syscalls failing with ENOENT\n"
"  syscount --syscall openat,read  # only these two syscalls\n"
"  syscount -c 181          # only children of process 181\n"
"  syscount -S -p 181 -d 10 # strace -c style table, for 10 seconds\n"
"  syscount --print-cgroup -T 20  # top 20 of cgroup and syscall\n"
"  syscount -S --print-cgroup -d 5  # strace -c table per cgroup\n"
"  syscount -j -i 1         # NDJSON, one record per row\n";

/* One item of --syscall: a name of this architecture, or a number. */
static void add_syscall(const char *item, void *ctx)
{
	long nr;

	(void)ctx;
	if (*item >= '0' && *item <= '9')
		nr = tk_arg_long("--syscall", item, 0, SYSCOUNT_NONE - 1);
	else
		nr = tk_syscall_nr(tk_arch_native(), item);
	if (nr < 0)
		tk_usage_error("invalid --syscall value '%s': no syscall of that name here (syscount -l lists them)",
			       item);
	env.syscall_set[nr / 64] |= 1ULL << (nr % 64);
}

/* --syscall NAME[,NAME...] */
static void parse_syscalls(const char *arg)
{
	tk_arg_list("--syscall", arg,
		    "syscall names or numbers, NAME[,NAME...] (syscount -l lists them)",
		    add_syscall, NULL);
	env.syscall_filter = true;
}

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'P': env.process = true; break;
	case 'L': env.latency = true; break;
	case 'm': env.millis = true; break;
	case 'x': env.failures = true; break;
	case 'S': env.summary = env.latency = true; break;
	case 'l': env.list = true; break;
	case K_SYSCALL: parse_syscalls(arg); break;
	case 'e':
		env.errno_filter = tk_errno_parse(arg);
		if (env.errno_filter < 0)
			tk_usage_error("invalid --errno value '%s': expected an errno name like ENOENT or a number from 1 to 4095",
				       arg);
		break;
	case 'T':
		env.top = tk_arg_long("--top", arg, 1, LONG_MAX);
		env.top_set = true;
		break;
	case 'i':
		tk_opts.interval = tk_arg_long("--interval", arg, 0, 86400);
		break;
	case ARGP_KEY_END:
		if (env.summary && env.process)
			tk_usage_error("--summary counts by syscall: it cannot be combined with --process");
		if (env.summary && !env.top_set)
			env.top = 0;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "syscount",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "Tc",
	.letters = letters,
	.periodic = true,
};

/* One row: a syscall slot or a tgid, and a cgroup id with
 * --print-cgroup (else 0); counts summed over CPUs. */
struct row {
	unsigned key;
	unsigned long long cgroup;
	struct syscount_val v;
	char comm[TK_TASK_COMM_LEN];
};

static struct row *prev, *cur;  /* totals at the last print, and now */
static size_t n_prev, n_cur;

/* Counting in by_key (a hash) rather than in by_nr (an array). */
static bool keyed(void)
{
	return env.process || tk_opts.filter.cgroup_ids;
}

static int cmp_key(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->cgroup < y->cgroup ? -1 : x->cgroup > y->cgroup;
}

/* Append key's counts, summed over CPUs, to cur (when not zero). */
static void add_row(const void *key, const char *vals, int ncpu, size_t vsize,
		    void *ctx)
{
	struct row *r = &cur[n_cur];
	int c;

	(void)ctx;
	memset(r, 0, sizeof(*r));
	if (keyed()) {
		const struct syscount_key *k = key;

		r->key = k->id;
		r->cgroup = k->cgroup_id;
	} else {
		r->key = *(const unsigned *)key;
	}
	for (c = 0; c < ncpu; c++) {
		const struct syscount_proc_val *pv = (const void *)(vals + c * vsize);

		r->v.count += pv->v.count;
		r->v.errors += pv->v.errors;
		r->v.total_ns += pv->v.total_ns;
		if (env.process && !r->comm[0])
			memcpy(r->comm, pv->comm, sizeof(r->comm));
	}
	if (r->v.count)
		n_cur++;
}

/* Read every entry of map into cur, sorted by key. */
static void read_map(struct bpf_map *map)
{
	int err;

	cur = realloc(cur, bpf_map__max_entries(map) * sizeof(*cur));
	if (!cur)
		tk_fail("out of memory");
	n_cur = 0;
	err = tk_percpu_map_read(map, add_row, NULL);
	if (err)
		tk_fail("cannot read map %s: %s", bpf_map__name(map), strerror(-err));
	qsort(cur, n_cur, sizeof(*cur), cmp_key);
}

/* Turn cur into the counts since the last print; keep cur's totals as
 * the new prev. A key of by_key with nothing new is deleted from the map
 * so that the map holds live processes and cgroups only (a syscall made
 * between this read and the delete loses that one count). */
static void delta(struct bpf_map *map, struct row *out, size_t *n_out)
{
	size_t i, j = 0, n = 0, kept = 0;

	for (i = 0; i < n_cur; i++) {
		struct row r = cur[i];

		while (j < n_prev && cmp_key(&prev[j], &r) < 0)
			j++;
		if (j < n_prev && !cmp_key(&prev[j], &r)) {
			r.v.count -= prev[j].v.count;
			r.v.errors -= prev[j].v.errors;
			r.v.total_ns -= prev[j].v.total_ns;
		}
		if (r.v.count)
			out[n++] = r;
		if (!r.v.count && keyed()) {
			struct syscount_key k = { .cgroup_id = r.cgroup, .id = r.key };

			bpf_map__delete_elem(map, &k, sizeof(k), 0);
		} else {
			cur[kept++] = cur[i];
		}
	}
	*n_out = n;
	free(prev);
	prev = cur;
	n_prev = kept;
	cur = NULL;
}

static int by_rank(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (env.latency && x->v.total_ns != y->v.total_ns)
		return x->v.total_ns > y->v.total_ns ? -1 : 1;
	if (x->v.count != y->v.count)
		return x->v.count > y->v.count ? -1 : 1;
	return cmp_key(a, b);
}

/* The syscall number of a slot; the slot of any other id is "[other]". */
static long nr_of(unsigned slot)
{
	return slot == SYSCOUNT_NONE ? -1 : (long)slot;
}

static const char *syscall_of(unsigned slot, char *buf, unsigned len)
{
	if (slot == SYSCOUNT_OTHER)
		return "[other]";
	return tk_syscall_name_or_nr(tk_arch_native(), nr_of(slot), buf, len);
}

/* The process's comm now, or as BPF saw it when it has exited. */
static void comm_of(struct row *r)
{
	char path[32], buf[TK_TASK_COMM_LEN + 1] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/comm", r->key);
	f = fopen(path, "r");
	if (f && fgets(buf, sizeof(buf), f) && buf[0]) {
		buf[strcspn(buf, "\n")] = 0;
		memcpy(r->comm, buf, sizeof(r->comm));
	}
	if (f)
		fclose(f);
}

static void print_json(const struct row *r, long seq)
{
	struct tk_json j;
	char buf[32];

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", env.process ? "process" : "syscall");
	if (tk_opts.interval) {
		tk_json_time(&j);
		tk_json_int(&j, "interval", seq);
	}
	if (tk_opts.filter.cgroup_ids)
		tk_json_cgroup(&j, r->cgroup);
	if (env.process) {
		tk_json_uint(&j, "pid", r->key);
		tk_json_strn(&j, "comm", r->comm, strnlen(r->comm, sizeof(r->comm)));
	} else {
		tk_json_str(&j, "syscall", syscall_of(r->key, buf, sizeof(buf)));
		if (r->key == SYSCOUNT_OTHER)
			tk_json_null(&j, "nr");
		else
			tk_json_int(&j, "nr", nr_of(r->key));
	}
	tk_json_uint(&j, "count", r->v.count);
	tk_json_uint(&j, "errors", r->v.errors);
	if (env.latency)
		tk_json_uint(&j, "total_ns", r->v.total_ns);
	tk_json_end(&j);
}

/* libbpf-tools' columns: "%-22s %8s %16s", "PID    COMM" in the first.
 * CGROUP comes last: a path of any length leaves the others aligned. */
static void print_table(const struct row *rows, size_t n)
{
	const bool cg = tk_opts.filter.cgroup_ids;
	const struct tk_col pid = { "PID", 6, 1 }, comm = { "COMM", 15, 1 },
		sc = { "SYSCALL", 22, 1 }, count = { "COUNT", 8, 0 },
		time = { env.millis ? "TIME (ms)" : "TIME (us)", 16, 0 },
		cgroup = { TK_CGROUP_HEADER, sizeof(TK_CGROUP_HEADER) - 1, 1 };
	struct tk_col cols[5];
	int nc = 0;
	char buf[32];
	size_t i;

	if (env.process) {
		cols[nc++] = pid;
		cols[nc++] = comm;
	} else {
		cols[nc++] = sc;
	}
	cols[nc++] = count;
	if (env.latency)
		cols[nc++] = time;
	if (cg)
		cols[nc++] = cgroup;
	tk_print_header(stdout, cols, nc);
	for (i = 0; i < n; i++) {
		const struct row *r = &rows[i];

		if (env.process) {
			tk_print_cell(stdout, &pid, 0, "%u", r->key);
			tk_print_safe_padded(stdout, r->comm,
					     strnlen(r->comm, sizeof(r->comm)),
					     comm.width);
			putchar(' ');
		} else {
			tk_print_cell(stdout, &sc, 0, "%s",
				      syscall_of(r->key, buf, sizeof(buf)));
		}
		tk_print_cell(stdout, &count, !env.latency && !cg, "%llu", r->v.count);
		if (env.latency)
			tk_print_cell(stdout, &time, !cg, "%.3f",
				      r->v.total_ns / (env.millis ? 1e6 : 1e3));
		if (cg)
			tk_print_cgroup(stdout, r->cgroup, 0);
		putchar('\n');
	}
}

/* strace -c: % time, seconds, usecs/call, calls, errors, syscall. */
static void summary_line(double pct, const struct syscount_val *v,
			 const char *name)
{
	char err[24] = "";

	if (v->errors)
		snprintf(err, sizeof(err), "%llu", v->errors);
	printf("%6.2f %11.6f %11llu %9llu %9s %s\n", pct, v->total_ns / 1e9,
	       v->count ? v->total_ns / v->count / 1000 : 0, v->count, err,
	       name);
}

static void print_summary(const struct row *rows, size_t n, size_t shown)
{
	struct syscount_val total = { 0 };
	char buf[32], dashes[64];
	size_t i, w = 16;

	for (i = 0; i < n; i++) {
		size_t len = strlen(syscall_of(rows[i].key, buf, sizeof(buf)));

		total.count += rows[i].v.count;
		total.errors += rows[i].v.errors;
		total.total_ns += rows[i].v.total_ns;
		if (i < shown && len > w)
			w = len;  /* strace widens the name column */
	}
	memset(dashes, '-', sizeof(dashes));
	dashes[w < sizeof(dashes) ? w : sizeof(dashes) - 1] = 0;
	printf("%6s %11s %11s %9s %9s %s\n", "% time", "seconds", "usecs/call",
	       "calls", "errors", "syscall");
	printf("------ ----------- ----------- --------- --------- %s\n", dashes);
	for (i = 0; i < shown; i++)
		summary_line(total.total_ns ? 100.0 * rows[i].v.total_ns /
					      total.total_ns : 0,
			     &rows[i].v, syscall_of(rows[i].key, buf, sizeof(buf)));
	printf("------ ----------- ----------- --------- --------- %s\n", dashes);
	summary_line(100, &total, "total");
}

/* The top rows of rows (ranked), as a table or as JSON records. */
static void print_rows(struct row *rows, size_t n, long seq)
{
	size_t i, shown = env.top && (size_t)env.top < n ? (size_t)env.top : n;

	/* Names first (/proc, a walk of the cgroup hierarchy for a new
	 * cgroup): the rows are then written together, at one time. */
	for (i = 0; i < shown; i++) {
		if (env.process)
			comm_of(&rows[i]);
		if (tk_opts.filter.cgroup_ids)
			tk_cgroup_path(rows[i].cgroup);
	}
	if (tk_opts.json) {
		for (i = 0; i < shown; i++)
			print_json(&rows[i], seq);
	} else if (env.summary) {
		print_summary(rows, n, shown);
	} else {
		print_table(rows, shown);
	}
}

/* -S --print-cgroup: a table per cgroup, since strace -c's percentages
 * and total are of one whole; the rows of a cgroup are rows[first..]. */
struct group {
	unsigned long long cgroup;
	struct syscount_val v;
	size_t first, n;
};

static int by_cgroup_then_rank(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->cgroup != y->cgroup)
		return x->cgroup < y->cgroup ? -1 : 1;
	return by_rank(a, b);
}

/* By time, as the rows of a table are; then by count, then by id. */
static int by_group_rank(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->v.total_ns != y->v.total_ns)
		return x->v.total_ns > y->v.total_ns ? -1 : 1;
	if (x->v.count != y->v.count)
		return x->v.count > y->v.count ? -1 : 1;
	return x->cgroup < y->cgroup ? -1 : x->cgroup > y->cgroup;
}

/* Each table under bcc's section line, "cgroup = PATH", and apart from
 * the next one by a blank line. */
static void print_summary_per_cgroup(struct row *rows, size_t n, long seq)
{
	struct group *g = calloc(n + 1, sizeof(*g));
	size_t i, ng = 0;

	if (!g)
		tk_fail("out of memory");
	qsort(rows, n, sizeof(*rows), by_cgroup_then_rank);
	for (i = 0; i < n; i++) {
		if (!i || rows[i].cgroup != rows[i - 1].cgroup)
			g[ng++] = (struct group){ .cgroup = rows[i].cgroup, .first = i };
		g[ng - 1].n++;
		g[ng - 1].v.count += rows[i].v.count;
		g[ng - 1].v.total_ns += rows[i].v.total_ns;
	}
	qsort(g, ng, sizeof(*g), by_group_rank);
	for (i = 0; i < ng; i++) {
		if (!tk_opts.json) {
			if (i)
				putchar('\n');
			printf("cgroup = ");
			tk_print_cgroup(stdout, g[i].cgroup, 0);
			putchar('\n');
		}
		print_rows(rows + g[i].first, g[i].n, seq);
	}
	free(g);
}

static void print_block(struct syscount_bpf *skel, long seq)
{
	struct bpf_map *map = keyed() ? skel->maps.by_key : skel->maps.by_nr;
	struct row *rows;
	size_t n;
	char buf[16];

	read_map(map);
	rows = calloc(n_cur + 1, sizeof(*rows));
	if (!rows)
		tk_fail("out of memory");
	delta(map, rows, &n);
	if (!tk_opts.json && (tk_opts.interval || tk_opts.time))
		printf("[%s]\n", tk_time_str(buf, sizeof(buf)));
	if (env.summary && tk_opts.filter.cgroup_ids) {
		print_summary_per_cgroup(rows, n, seq);
	} else {
		qsort(rows, n, sizeof(*rows), by_rank);
		print_rows(rows, n, seq);
	}
	if (!tk_opts.json && tk_opts.interval)
		putchar('\n');
	fflush(stdout);
	free(rows);
}

static void list_syscalls(void)
{
	const struct tk_syscall_entry *t = tk_arch_native() == TK_ARCH_ARM64 ?
		tk_syscalls_arm64 : tk_syscalls_x86_64;
	struct tk_json j;

	for (; t->name; t++) {
		if (!tk_opts.json) {
			printf("%3d: %s\n", t->nr, t->name);
			continue;
		}
		tk_json_begin(&j, stdout);
		tk_json_str(&j, "type", "syscall_name");
		tk_json_int(&j, "nr", t->nr);
		tk_json_str(&j, "syscall", t->name);
		tk_json_end(&j);
	}
}

static int configure(void *s, void *ctx)
{
	struct syscount_bpf *skel = s;
	const struct tk_filter *f = &tk_opts.filter;
	bool task = bpf_program__autoload(skel->progs.sys_exit_tp_btf);
	bool plain = !env.process && !env.latency && !env.failures &&
		     !env.errno_filter && !env.syscall_filter && !f->tgid && !f->tid && f->uid < 0 &&
		     !f->use_cgroup && !f->comm[0] && !f->ppid && !f->cgroup_ids;

	(void)ctx;
	skel->rodata->by_process = env.process;
	skel->rodata->latency = env.latency;
	skel->rodata->failures_only = env.failures;
	skel->rodata->filter_errno = env.errno_filter;
	skel->rodata->filter_syscalls = env.syscall_filter;
	memcpy((void *)skel->rodata->syscall_set, env.syscall_set,
	       sizeof(env.syscall_set));
	tk_programs_off(skel->obj, plain ? "sys_exit_" : "count_");
	if (!env.latency)  /* counting needs sys_exit only */
		tk_programs_off(skel->obj, "sys_enter_");
	/* Create only the maps this run uses; libbpf turns references to
	 * the others into dead code the verifier never reaches. */
	bpf_map__set_autocreate(skel->maps.by_key, keyed());
	bpf_map__set_autocreate(skel->maps.by_nr, !keyed());
	bpf_map__set_autocreate(skel->maps.start_task, env.latency && task);
	bpf_map__set_autocreate(skel->maps.start_tid, env.latency && !task);
	return 0;
}

TK_SKEL_OPS(syscount_bpf);

int main(int argc, char **argv)
{
	struct syscount_bpf *skel;
	double next;
	long seq = 0;
	bool last;

	tk_parse_args(&tool, argc, argv);
	if (env.list) {
		list_syscalls();
		return 0;
	}
	tk_init();
	skel = tk_load(&syscount_bpf_ops, configure, NULL);
	tk_ready();
	next = tk_opts.interval;
	do {
		if (tk_opts.interval)
			tk_sleep_ms((int)((next - tk_elapsed()) * 1000) + 1);
		else
			tk_sleep_ms(1000);
		last = tk_exiting();
		if (!last && (!tk_opts.interval || tk_elapsed() < next))
			continue;  /* woken early, or no interval */
		print_block(skel, ++seq);
		next += tk_opts.interval;
		last = last || (tk_opts.count && seq >= tk_opts.count);
	} while (!last);
	tk_losses_report(skel->obj);
	syscount_bpf__destroy(skel);
	return tk_exit_status();
}
