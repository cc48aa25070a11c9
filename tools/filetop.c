/* filetop: top files by reads and writes, per thread, per interval. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "filetop.h"
#include "filetop.skel.h"
#include "kfunc_or_tp.h"
#include "tracekit.h"

enum sort_key { SORT_ALL, SORT_READS, SORT_WRITES, SORT_RBYTES, SORT_WBYTES };
static const char *const sort_names[] = { "all", "reads", "writes", "rbytes", "wbytes" };

static struct {
	bool all_files;
	bool noclear;
	long maxrows;
	enum sort_key sort;
	bool read_only;
	bool write_only;
} env = { .maxrows = 20 };

static const struct argp_option options[] = {
	{ "all-files", 'a', 0, 0, "Include non-regular files (sockets, FIFOs, ...)", 0 },
	{ "noclear", 'C', 0, 0, "Do not clear the screen", 0 },
	{ "maxrows", 'r', "ROWS", 0, "Rows to print per interval (default 20)", 0 },
	{ "sort", 's', "KEY", 0, "Sort by all (default), reads, writes, rbytes or wbytes", 0 },
	{ "read-only", 1001, 0, 0, "Count reads only", 0 },
	{ "write-only", 1002, 0, 0, "Count writes only", 0 },
	{ 0 },
};

static const char doc[] =
"Top files by reads and writes, per thread, every interval (default 1 s).\n"
"\v"
"Columns as bcc: TID, COMM, READS and WRITES (calls), R_Kb and W_Kb\n"
"(KiB, rounded down), T the file's type (R regular, S socket, O other;\n"
"only R without -a), FILE its name (the last component; a name longer\n"
"than 31 bytes ends in \"...\"). Rows are sorted by -s (all: the sum of\n"
"the four counts), largest first; -r rows at most. The screen is cleared\n"
"before each interval when stdout is a terminal and -C is not given.\n"
"JSON: a record per row (\"type\":\"filetop\", \"file_type\", \"rbytes\",\n"
"\"wbytes\" in bytes, \"dev\" as \"major:minor\", \"ino\"), every row, not only -r of them.\n"
"\n"
"Kernel functions are traced where the kernel allows it (fentry, else\n"
"kprobes), as bcc: vfs_read and vfs_write, with the bytes asked for\n"
"(read, write, pread64, pwrite64; not readv or writev). On a kernel\n"
"without either (-v says), the syscall tracepoints of read, write,\n"
"pread64, pwrite64, readv, writev, preadv, pwritev, preadv2 and pwritev2\n"
"are used, with the bytes done (a failed call counts, with 0 bytes);\n"
"they do not see the kernel's own I/O, sendfile, splice, io_uring or\n"
"mmap. TRACEKIT_ATTACH=tp chooses them on any kernel.\n"
"Counts are kept per CPU in the kernel (up to 10240 thread and file\n"
"pairs; more are counted as map insert failures) and read each interval;\n"
"a pair idle for a whole interval is removed (a call it makes between the\n"
"read and the removal is lost).\n"
"\n"
"Examples:\n"
"  filetop                # every second, 20 rows\n"
"  filetop -C 5 3         # every 5 s, 3 times, without clearing\n"
"  filetop -a -s wbytes   # all file types, by bytes written\n"
"  filetop -p 181 -j      # only PID 181, NDJSON\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'a': env.all_files = true; break;
	case 'C': env.noclear = true; break;
	case 'r': env.maxrows = tk_arg_long("--maxrows", arg, 1, 1000000); break;
	case 's':
		env.sort = tk_arg_choice("--sort", arg, sort_names,
					 sizeof(sort_names) / sizeof(sort_names[0]));
		break;
	case 1001: env.read_only = true; break;
	case 1002: env.write_only = true; break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "filetop",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "a",
	.periodic = true,
};

static const char *tp_blind =
	"the kernel's own reads and writes, sendfile, splice, io_uring or mmap";

struct row {
	struct filetop_key k;
	struct filetop_counts c;
};

static int by_key(const void *a, const void *b)
{
	return memcmp(&((const struct row *)a)->k, &((const struct row *)b)->k,
		      sizeof(struct filetop_key));
}

static void sum(void *row, const char *vals, int ncpu, size_t vsize)
{
	struct row *r = row;
	int cpu;

	for (cpu = 0; cpu < ncpu; cpu++) {
		const struct filetop_counts *v = (const void *)(vals + cpu * vsize);

		r->c.reads += v->reads;
		r->c.writes += v->writes;
		r->c.rbytes += v->rbytes;
		r->c.wbytes += v->wbytes;
	}
}

static bool minus(void *row, const void *prev)
{
	struct row *r = row;
	const struct row *p = prev;

	if (p) {
		r->c.reads -= p->c.reads;
		r->c.writes -= p->c.writes;
		r->c.rbytes -= p->c.rbytes;
		r->c.wbytes -= p->c.wbytes;
	}
	return r->c.reads || r->c.writes;
}

static struct tk_deltas deltas = {
	.key_size = sizeof(struct filetop_key), .row_size = sizeof(struct row),
	.sum = sum, .minus = minus,
};

static unsigned long long sort_value(const struct filetop_counts *c)
{
	switch (env.sort) {
	case SORT_READS: return c->reads;
	case SORT_WRITES: return c->writes;
	case SORT_RBYTES: return c->rbytes;
	case SORT_WBYTES: return c->wbytes;
	default: return c->reads + c->writes + c->rbytes + c->wbytes;
	}
}

static int by_sort(const void *a, const void *b)
{
	unsigned long long x = sort_value(&((const struct row *)a)->c);
	unsigned long long y = sort_value(&((const struct row *)b)->c);

	return x < y ? 1 : x > y ? -1 : by_key(a, b);
}

static void print_row(const struct row *r, long seq)
{
	size_t len = strnlen(r->k.name, sizeof(r->k.name));
	bool cut = r->k.name_len > len;
	char type[2] = { r->k.type, 0 }, dev[24];
	struct tk_json j;

	if (tk_opts.json) {
		tk_json_begin(&j, stdout);
		tk_json_str(&j, "type", "filetop");
		tk_json_time(&j);
		tk_json_int(&j, "interval", seq);
		tk_json_int(&j, "pid", r->k.pid);
		tk_json_int(&j, "tid", r->k.tid);
		tk_json_strn(&j, "comm", r->k.comm, strnlen(r->k.comm, sizeof(r->k.comm)));
		tk_json_uint(&j, "reads", r->c.reads);
		tk_json_uint(&j, "writes", r->c.writes);
		tk_json_uint(&j, "rbytes", r->c.rbytes);
		tk_json_uint(&j, "wbytes", r->c.wbytes);
		tk_json_str(&j, "file_type", type);
		tk_json_strn(&j, "file", r->k.name, len);
		tk_json_bool(&j, "file_truncated", cut);
		/* the kernel's dev_t: major << 20 | minor */
		snprintf(dev, sizeof(dev), "%u:%u", r->k.dev >> 20, r->k.dev & 0xfffff);
		tk_json_str(&j, "dev", dev);
		tk_json_uint(&j, "ino", r->k.ino);
		tk_json_end(&j);
		return;
	}
	printf("%-7d ", r->k.tid);
	tk_print_safe_padded(stdout, r->k.comm, strnlen(r->k.comm, sizeof(r->k.comm)), 16);
	printf(" %-6llu %-6llu %-7llu %-7llu %1s ", r->c.reads, r->c.writes,
	       r->c.rbytes / 1024, r->c.wbytes / 1024, type);
	/* bcc: a cut name's last 3 bytes become "..." */
	tk_print_safe(stdout, r->k.name, cut && len > 3 ? len - 3 : len);
	if (cut)
		fputs("...", stdout);
	putchar('\n');
}

static void print_header(void)
{
	tk_top_heading(!env.noclear, true);
	printf("%-7s %-16s %-6s %-6s %-7s %-7s %1s %s\n", "TID", "COMM", "READS",
	       "WRITES", "R_Kb", "W_Kb", "T", "FILE");
}

/* The counts since the last interval, sorted. */
static void print_interval(struct filetop_bpf *skel, long seq)
{
	static struct row rows[FILETOP_MAX_ENTRIES];
	long i, n;

	deltas.map = skel->maps.counts;
	n = tk_deltas_read(&deltas, rows);
	if (n < 0)
		tk_fail("cannot read map counts: %s", strerror(-n));
	qsort(rows, n, sizeof(*rows), by_sort);
	if (!tk_opts.json)
		print_header();
	for (i = 0; i < n && (tk_opts.json || i < env.maxrows); i++)
		print_row(&rows[i], seq);
	fflush(stdout);
}

static int configure(void *s, void *ctx)
{
	struct filetop_bpf *skel = s;
	const enum tk_way *way = ctx;
	const char *const optional[] = { "preadv2", "pwritev2" };
	char name[64];
	size_t i;

	skel->rodata->all_files = env.all_files;
	if (env.read_only)
		tk_programs_off(skel->obj, *way == TK_WAY_TP ? "tp_w_" : "kf_w_");
	if (env.write_only)
		tk_programs_off(skel->obj, *way == TK_WAY_TP ? "tp_r_" : "kf_r_");
	if (*way != TK_WAY_TP || tk_ensure_tracefs())
		return 0;
	for (i = 0; i < sizeof(optional) / sizeof(optional[0]); i++) {
		snprintf(name, sizeof(name), "sys_enter_%s", optional[i]);
		if (tk_tracepoint_exists("syscalls", name))
			continue;
		snprintf(name, sizeof(name), "tp_%c_%s_", optional[i][1] == 'r' ? 'r' : 'w',
			 optional[i]);
		tk_programs_off(skel->obj, name);
	}
	return 0;
}

TK_SKEL_OPS(filetop_bpf);

int main(int argc, char **argv)
{
	static enum tk_way way;
	struct filetop_bpf *skel;
	double next, now;
	long seq = 0;
	bool last;

	tk_parse_args(&tool, argc, argv);
	if (env.read_only && env.write_only)
		tk_usage_error("--read-only and --write-only exclude each other");
	if (!tk_opts.interval)
		tk_opts.interval = 1;
	tk_init();
	skel = tk_load_kfunc_or_tp(&filetop_bpf_ops, configure, &way, &way, tp_blind);
	if (!tk_opts.json)
		printf("Tracing... Output every %ld secs. Hit Ctrl-C to end\n", tk_opts.interval);
	tk_ready();
	next = tk_elapsed() + tk_opts.interval;
	do {
		now = next - tk_elapsed();
		tk_sleep_ms(now > 0 ? (int)(now * 1000) + 1 : 0);
		last = tk_exiting();
		now = tk_elapsed();
		if (!last && now < next)
			continue;  /* woken early */
		print_interval(skel, ++seq);
		next += tk_opts.interval;
		last = last || (tk_opts.count && seq >= tk_opts.count);
	} while (!last);
	tk_losses_report(skel->obj);
	filetop_bpf__destroy(skel);
	return tk_exit_status();
}
