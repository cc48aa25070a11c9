/* cachestat: page cache hits, misses and dirtied buffers per interval. */
#include <bpf/btf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cachestat.h"
#include "cachestat.skel.h"
#include "kbtf.h"
#include "tracekit.h"

static const char doc[] =
"Page cache hits and misses per interval, as bcc's cachestat.\n"
"\v"
"Counted at kernel functions (fentry, else kprobe): pages marked accessed\n"
"(folio_mark_accessed or mark_page_accessed: each read or write of a\n"
"cached page), pages added to the page cache (filemap_add_folio or\n"
"add_to_page_cache_lru: a miss, or a new page written), pages dirtied\n"
"(folio_account_dirtied or account_page_dirtied; where the kernel has\n"
"neither, the writeback_dirty_folio or _page tracepoint) and buffers\n"
"dirtied (mark_buffer_dirty). As bcc: MISSES = added - dirtied pages,\n"
"HITS = accessed pages - dirtied buffers - MISSES (0 when negative:\n"
"readahead can add pages that are never read), HITRATIO = HITS over\n"
"HITS + MISSES, DIRTIES = dirtied buffers. Large folios count their\n"
"pages. BUFFERS_MB and CACHED_MB are /proc/meminfo's Buffers and Cached\n"
"at the end of the interval, in MiB. There is no tracepoint where a\n"
"cached page is accessed: on a kernel without kprobes that refuses\n"
"fentry, cachestat cannot run (exit 1). The task filters keep the\n"
"accesses and additions made by those tasks (readahead runs in the\n"
"reader; writeback by the kernel's threads is not theirs).\n"
"\n"
"Examples:\n"
"  cachestat              # every second, until Ctrl-C\n"
"  cachestat -T 5 3       # every five seconds, three times, with the time\n"
"  cachestat -p 181       # only the page cache use of process 181\n"
"  cachestat -j 10        # NDJSON, every ten seconds\n";

static const struct tk_tool tool = {
	.name = "cachestat",
	.doc = doc,
	.periodic = true,
};

/* The functions each probe can use, newest name first. */
struct target {
	const char *family;
	const char *names[2];
	const char *folio;  /* the rodata flag saying names[0] was taken */
};

static const struct target targets[] = {
	{ "add", { "filemap_add_folio", "add_to_page_cache_lru" }, "add_folio" },
	{ "access", { "folio_mark_accessed", "mark_page_accessed" }, "access_folio" },
	{ "dirty", { "folio_account_dirtied", "account_page_dirtied" }, "dirty_folio" },
};

static const char *dirty_tp;  /* the tracepoint for "dirty", when used */

static int configure(void *s, void *ctx)
{
	struct cachestat_bpf *skel = s;
	size_t i;

	(void)ctx;
	for (i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
		const struct target *t = &targets[i];
		bool folio = tk_kernel_has_func(t->names[0]);

		if (!folio && !tk_kernel_has_func(t->names[1]) && !strcmp(t->family, "dirty")) {
			tk_programs_off(skel->obj, "dirty_fentry");
			tk_programs_off(skel->obj, "dirty_kprobe");
			continue;
		}
		if (tk_set_rodata(skel->obj, t->folio, &folio, sizeof(folio)))
			return -ENOENT;
	}
	if (!dirty_tp)
		tk_programs_off(skel->obj, "dirty_tp_");
	return 0;
}

/* Point each probe at the function this kernel has (the page name when
 * neither is in BTF: tk_load then names it in its one-line failure). */
static void set_targets(void)
{
	size_t i;

	for (i = 0; i < sizeof(targets) / sizeof(targets[0]); i++) {
		const struct target *t = &targets[i];
		const char *name = tk_kernel_has_func(t->names[0]) ? t->names[0] : t->names[1];

		if (!strcmp(t->family, "dirty") && !tk_kernel_has_func(name)) {
			dirty_tp = tk_tracepoint_exists("writeback", "writeback_dirty_folio")
				   ? "writeback_dirty_folio" : "writeback_dirty_page";
			tk_set_target_tp("dirty_tp", "writeback", dirty_tp);
			continue;
		}
		tk_set_target(t->family, NULL, name, -1);
	}
}

/* Buffers and Cached of /proc/meminfo, in KiB. */
static void meminfo(unsigned long long *buffers, unsigned long long *cached)
{
	char line[256];
	FILE *f = fopen("/proc/meminfo", "r");
	int found = 0;

	if (!f)
		tk_fail("cannot open /proc/meminfo: %s", strerror(errno));
	while (found < 2 && fgets(line, sizeof(line), f))
		found += sscanf(line, "Buffers: %llu kB", buffers) == 1 ||
			 sscanf(line, "Cached: %llu kB", cached) == 1;
	fclose(f);
	if (found < 2)
		tk_fail("cannot read Buffers and Cached in /proc/meminfo");
}

static void print_row(struct cachestat_bpf *skel, long seq, double secs)
{
	static unsigned long long prev[CACHESTAT_SLOTS];
	unsigned long long now[CACHESTAT_SLOTS], d[CACHESTAT_SLOTS], buffers = 0, cached = 0;
	long long total, misses, hits;
	double ratio;
	struct tk_json j;
	char hms[16];
	int i, err;

	for (i = 0; i < CACHESTAT_SLOTS; i++) {
		err = tk_percpu_sum(skel->maps.counts, i, &now[i]);
		if (err)
			tk_fail("cannot read map counts: %s", strerror(-err));
		d[i] = now[i] - prev[i];
		prev[i] = now[i];
	}
	meminfo(&buffers, &cached);
	/* bcc's formula: accesses other than buffer dirtying; additions
	 * other than those of pages being written. */
	total = (long long)(d[CACHESTAT_ACCESSED] - d[CACHESTAT_BUF_DIRTIED]);
	misses = (long long)(d[CACHESTAT_ADDED] - d[CACHESTAT_DIRTIED]);
	if (total < 0)
		total = 0;
	if (misses < 0)
		misses = 0;
	hits = total - misses;
	if (hits < 0) {  /* readahead added pages not (yet) read */
		misses = total;
		hits = 0;
	}
	ratio = total > 0 ? (double)hits / total : 0;
	if (tk_opts.json) {
		tk_json_begin(&j, stdout);
		tk_json_str(&j, "type", "cachestat");
		tk_json_time(&j);
		tk_json_int(&j, "interval", seq);
		tk_json_double(&j, "seconds", (long long)(secs * 1e6 + 0.5) / 1e6);
		tk_json_uint(&j, "hits", hits);
		tk_json_uint(&j, "misses", misses);
		tk_json_uint(&j, "dirties", d[CACHESTAT_BUF_DIRTIED]);
		tk_json_double(&j, "hit_ratio", (long long)(ratio * 1e6 + 0.5) / 1e6);
		tk_json_uint(&j, "buffers_kb", buffers);
		tk_json_uint(&j, "cached_kb", cached);
		tk_json_uint(&j, "pages_accessed", d[CACHESTAT_ACCESSED]);
		tk_json_uint(&j, "pages_added", d[CACHESTAT_ADDED]);
		tk_json_uint(&j, "pages_dirtied", d[CACHESTAT_DIRTIED]);
		tk_json_end(&j);
		return;
	}
	if (tk_opts.time)
		printf("%-8s ", tk_time_str(hms, sizeof(hms)));
	printf("%8lld %8lld %8llu %7.2f%% %12llu %10llu\n", hits, misses,
	       d[CACHESTAT_BUF_DIRTIED], 100 * ratio, buffers / 1024, cached / 1024);
}

TK_SKEL_OPS(cachestat_bpf);

int main(int argc, char **argv)
{
	struct cachestat_bpf *skel;
	char why[512];
	double start, next, now;
	long seq = 0;
	bool last;

	tk_parse_args(&tool, argc, argv);
	if (tk_opts.filter.cgroup_ids)
		tk_usage_error("--print-cgroup is not in cachestat: it counts for the whole system; use --cgroup PATH to count one cgroup's");
	if (!tk_opts.interval)
		tk_opts.interval = 1;
	tk_init();
	set_targets();
	skel = tk_try_load(&cachestat_bpf_ops, configure, NULL, why, sizeof(why));
	if (!skel)  /* no tracepoint way to offer: say why there is none */
		tk_fail("%s (no tracepoint sees a page cache hit: cachestat needs kernel functions)",
			why);
	if (!tk_opts.json) {
		if (tk_opts.time)
			printf("%-8s ", "TIME");
		printf("%8s %8s %8s %8s %12s %10s\n", "HITS", "MISSES", "DIRTIES",
		       "HITRATIO", "BUFFERS_MB", "CACHED_MB");
		fflush(stdout);
	}
	tk_ready();
	start = 0;  /* when tracing began: see vfsstat */
	next = tk_opts.interval;
	do {
		now = next - tk_elapsed();
		tk_sleep_ms(now > 0 ? (int)(now * 1000) + 1 : 0);
		last = tk_exiting();
		now = tk_elapsed();
		if (!last && now < next)
			continue;  /* woken early */
		print_row(skel, ++seq, now - start);
		fflush(stdout);
		start = now;
		next += tk_opts.interval;
		last = last || (tk_opts.count && seq >= tk_opts.count);
	} while (!last);
	tk_losses_report(skel->obj);
	cachestat_bpf__destroy(skel);
	return tk_exit_status();
}
