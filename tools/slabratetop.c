/* slabratetop: kernel slab allocations per cache, per interval. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kfunc_or_tp.h"
#include "slabratetop.h"
#include "slabratetop.skel.h"
#include "tracekit.h"

enum sort_key { SORT_SIZE, SORT_COUNT, SORT_NAME };
static const char *const sort_names[] = { "size", "count", "name" };

static struct {
	bool noclear;
	long maxrows;
	enum sort_key sort;
} env = { .maxrows = 20 };

static const struct argp_option options[] = {
	{ "noclear", 'C', 0, 0, "Do not clear the screen", 0 },
	{ "maxrows", 'r', "ROWS", 0, "Rows to print per interval (default 20)", 0 },
	{ "sort", 's', "KEY", 0, "Sort by size (bytes, default), count or name", 0 },
	{ 0 },
};

static const char doc[] =
"Kernel slab allocations per cache, every interval (default 1 s):\n"
"kmem_cache_alloc() calls, as bcc's slabratetop.\n"
"\v"
"Columns as bcc: CACHE the cache's name, ALLOCS the allocations from it,\n"
"BYTES those times its object size (the kernel's s->size, with padding\n"
"and metadata: /sys/kernel/slab/CACHE/slab_size). Rows are sorted by -s\n"
"(size: bytes, count: allocations, both largest first; name: A to Z),\n"
"-r rows at most. The screen is cleared before each interval when stdout\n"
"is a terminal and -C is not given. JSON: a record per cache per\n"
"interval (\"type\":\"slabratetop\", \"interval\", \"cache\", \"allocs\",\n"
"\"bytes\", \"object_size\"), every row, not only -r of them. With -p,\n"
"-c, -- COMMAND and the other task filters, the allocations made while\n"
"those tasks ran (interrupts that came meanwhile included, as bcc).\n"
"\n"
"Merged caches: the kernel merges a new cache into an existing one of\n"
"the same object size and flags (unless booted with slab_nomerge), and\n"
"its allocations are counted under the name of the cache it merged\n"
"into: the one of the aliases that /proc/slabinfo lists (ls -l\n"
"/sys/kernel/slab shows each name's link to the merged cache).\n"
"\n"
"The tracepoint kmem:kmem_cache_alloc is traced where it passes the\n"
"cache (6.1; tp_btf, else raw_tp): kmem_cache_alloc, _lru and _node.\n"
"Else the kernel functions (fentry, else kprobe; -v says which):\n"
"kmem_cache_alloc, kmem_cache_alloc_lru and kmem_cache_alloc_node (the\n"
"*_noprof names from 6.10), those the kernel has. Neither sees kmalloc()\n"
"(its kmalloc-* caches) nor kmem_cache_alloc_bulk(). Counts are kept per\n"
"CPU in the kernel (up to 4096 caches; more are counted as map insert\n"
"failures) and read each interval; a cache idle for a whole interval is\n"
"removed (an allocation between the read and the removal is lost).\n"
"\n"
"Examples:\n"
"  slabratetop            # every second, 20 rows\n"
"  slabratetop -C 5 3     # every 5 s, 3 times, without clearing\n"
"  slabratetop -s count   # by allocations\n"
"  slabratetop -p 181 -j  # only PID 181, NDJSON\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'C': env.noclear = true; break;
	case 'r': env.maxrows = tk_arg_long("--maxrows", arg, 1, 1000000); break;
	case 's':
		env.sort = tk_arg_choice("--sort", arg, sort_names,
					 sizeof(sort_names) / sizeof(sort_names[0]));
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_bcc_missing bcc_missing[] = {
	{ "--rows", "use -r ROWS or --maxrows ROWS (bcc's Python name)" },
	{ 0 },
};

static const struct tk_tool tool = {
	.name = "slabratetop",
	.doc = doc,
	.options = options,
	.parser = parse,
	.periodic = true,
	.bcc_missing = bcc_missing,
};

struct row {
	unsigned long long cache;   /* the struct kmem_cache's address */
	unsigned long long allocs;
	unsigned long long bytes;
	unsigned int size;
	char name[SLABRATETOP_NAME_LEN + 1];
};

static void sum(void *row, const char *vals, int ncpu, size_t vsize)
{
	struct row *r = row;
	int cpu;

	for (cpu = 0; cpu < ncpu; cpu++) {
		const struct slabratetop_val *v = (const void *)(vals + cpu * vsize);

		r->allocs += v->allocs;
		if (v->name[0] && !r->name[0]) {
			r->size = v->size;
			memcpy(r->name, v->name, SLABRATETOP_NAME_LEN);
		}
	}
}

static bool minus(void *row, const void *prev)
{
	struct row *r = row;

	if (prev)
		r->allocs -= ((const struct row *)prev)->allocs;
	r->bytes = r->allocs * r->size;
	return r->allocs;
}

static struct tk_deltas deltas = {
	.key_size = sizeof(unsigned long long), .row_size = sizeof(struct row),
	.sum = sum, .minus = minus,
};

static int by_sort(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int c;

	switch (env.sort) {
	case SORT_NAME:
		c = strcasecmp(x->name, y->name);
		if (c)
			return c;
		break;
	case SORT_COUNT:
		if (x->allocs != y->allocs)
			return x->allocs < y->allocs ? 1 : -1;
		break;
	default:
		if (x->bytes != y->bytes)
			return x->bytes < y->bytes ? 1 : -1;
	}
	return strcmp(x->name, y->name) ?: (x->cache < y->cache ? -1 : x->cache > y->cache);
}

static void print_row(const struct row *r, long seq)
{
	size_t len = strlen(r->name);
	struct tk_json j;

	if (tk_opts.json) {
		tk_json_begin(&j, stdout);
		tk_json_str(&j, "type", "slabratetop");
		tk_json_time(&j);
		tk_json_int(&j, "interval", seq);
		tk_json_strn(&j, "cache", r->name, len);
		tk_json_uint(&j, "allocs", r->allocs);
		tk_json_uint(&j, "bytes", r->bytes);
		tk_json_uint(&j, "object_size", r->size);
		tk_json_end(&j);
		return;
	}
	/* bcc: "%-32s %6d %10d" */
	tk_print_safe_padded(stdout, r->name, len, 32);
	printf(" %6llu %10llu\n", r->allocs, r->bytes);
}

/* The allocations since the last interval, sorted. */
static void print_interval(void *arg, int seq)
{
	static struct row rows[SLABRATETOP_MAX_ENTRIES];
	long i, n;

	deltas.map = ((struct slabratetop_bpf *)arg)->maps.counts;
	n = tk_deltas_read(&deltas, rows);
	if (n < 0)
		tk_fail("cannot read map counts: %s", strerror(-n));
	qsort(rows, n, sizeof(*rows), by_sort);
	if (!tk_opts.json) {
		tk_top_heading(!env.noclear, true);
		printf("%-32s %6s %10s\n", "CACHE", "ALLOCS", "BYTES");
	}
	for (i = 0; i < n && (tk_opts.json || i < env.maxrows); i++)
		print_row(&rows[i], seq);
	fflush(stdout);
}

/* The allocation functions this kernel has, by probe family. */
static const struct {
	const char *family;
	const char *func;
} funcs[] = {
	{ "kf_alloc", "kmem_cache_alloc" },
	{ "kf_lru", "kmem_cache_alloc_lru" },
	{ "kf_node", "kmem_cache_alloc_node" },
};
static bool has_func[sizeof(funcs) / sizeof(funcs[0])];
static bool tp_has_cache;   /* kmem_cache_alloc's third argument is the cache */

/* Decided before tk_load, which frees the kernel's BTF that these read. */
static void set_targets(void)
{
	char noprof[64];
	size_t i;

	tp_has_cache = tk_tp_arg_is_struct_ptr("kmem_cache_alloc", 2, "kmem_cache");
	for (i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		snprintf(noprof, sizeof(noprof), "%s_noprof", funcs[i].func);
		if (tk_kernel_has_func(noprof)) {
			tk_set_target(funcs[i].family, NULL, strdup(noprof), -1);
			has_func[i] = true;
			continue;
		}
		has_func[i] = tk_kernel_has_func(funcs[i].func);
		/* kmem_cache_alloc always: tk_load names it when it fails */
		if (has_func[i] || i == 0)
			tk_set_target(funcs[i].family, NULL, funcs[i].func, -1);
	}
}

static int configure(void *s, void *ctx)
{
	struct slabratetop_bpf *skel = s;
	const enum tk_way *way = ctx;
	char prefix[32];
	size_t i;

	if (*way == TK_WAY_TP) {
		if (!tp_has_cache)
			tk_fail("the tracepoint kmem:kmem_cache_alloc does not pass the cache on this kernel (it does from 6.1); kernel function tracing (fentry or kprobes) is needed");
		return 0;
	}
	for (i = 1; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		if (has_func[i])
			continue;
		snprintf(prefix, sizeof(prefix), "%s_", funcs[i].family);
		tk_programs_off(skel->obj, prefix);
	}
	return 0;
}

TK_SKEL_OPS(slabratetop_bpf);

int main(int argc, char **argv)
{
	static enum tk_way way;
	struct slabratetop_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	if (!tk_opts.interval)
		tk_opts.interval = 1;
	tk_init();
	set_targets();
	skel = tk_load_tp_or_kfunc(&slabratetop_bpf_ops, configure, &way, &way,
				   "kmem_cache_alloc_bulk or kmalloc (neither do the kernel functions)");
	if (!tk_opts.json)
		printf("Tracing... Output every %ld secs. Hit Ctrl-C to end\n", tk_opts.interval);
	tk_ready();
	tk_print_intervals(print_interval, skel);
	tk_losses_report(skel->obj);
	slabratetop_bpf__destroy(skel);
	return tk_exit_status();
}
