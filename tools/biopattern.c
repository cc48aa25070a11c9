/* biopattern: identify random and sequential block I/O per disk. */
#include <bpf/bpf.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "biopattern.h"
#include "biopattern.skel.h"
#include "tracekit.h"

static struct {
	unsigned int dev;
} env;

static const struct argp_option options[] = {
	{ "disk", 'd', "DISK", 0, "Only this disk (sda, loop0, ...)", 0 },
	{ 0 },
};

static const char doc[] =
"Show the share of random and sequential block I/O per disk, per interval.\n"
"\v"
"A completed request is sequential when it starts at the sector where the\n"
"disk's previous completed request ended, else random; the first request\n"
"seen on a disk counts as random (libbpf-tools' counts it in neither and\n"
"forgets the last sector each interval). COUNT is requests, KBYTES their\n"
"size. A disk without requests in an interval is not printed. Counted per\n"
"disk, not per process: the task filters do not apply.\n"
"\n"
"bcc's letters: -d is --disk here; the common -d is --duration.\n"
"\n"
"Examples:\n"
"  biopattern             # show block I/O pattern until Ctrl-C\n"
"  biopattern 1 10        # print 1 second summaries, 10 times\n"
"  biopattern -T 1        # 1s summaries with timestamps\n"
"  biopattern -d sdc      # only disk sdc\n"
"  biopattern -j 1 | jq .random  # NDJSON\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'd': env.dev = tk_disk_arg("--disk", arg); break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "biopattern",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "d",
	.periodic = true,
};

struct row {
	unsigned int dev;
	const char *name;
	struct biopattern_counts c;
};

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct row *)a)->name, ((const struct row *)b)->name);
}

static void print_row(const struct row *r)
{
	unsigned long long total = r->c.sequential + r->c.random;
	char buf[16];
	struct tk_json j;

	if (tk_opts.json) {
		tk_json_begin(&j, stdout);
		tk_json_str(&j, "type", "biopattern");
		tk_json_time(&j);
		tk_json_str(&j, "disk", r->name);
		tk_json_uint(&j, "major", TK_KDEV_MAJOR(r->dev));
		tk_json_uint(&j, "minor", TK_KDEV_MINOR(r->dev));
		tk_json_uint(&j, "random", r->c.random);
		tk_json_uint(&j, "sequential", r->c.sequential);
		tk_json_uint(&j, "count", total);
		tk_json_uint(&j, "bytes", r->c.bytes);
		tk_json_end(&j);
		return;
	}
	if (tk_opts.time)
		printf("%-9s ", tk_time_str(buf, sizeof(buf)));
	tk_print_safe_padded(stdout, r->name, strlen(r->name), 7);
	printf(" %5llu %5llu %8llu %10llu\n", r->c.random * 100 / total,
	       r->c.sequential * 100 / total, total, r->c.bytes / 1024);
}

static void print_interval(void *arg, int seq)
{
	static struct row rows[BIOPATTERN_MAX_DISKS];
	struct biopattern_bpf *skel = arg;
	int n, i;

	(void)seq;
	n = tk_map_take_all(skel->maps.counts, rows, sizeof(rows[0]),
			    offsetof(struct row, c), BIOPATTERN_MAX_DISKS);
	for (i = 0; i < n; i++)
		rows[i].name = tk_disk_name(rows[i].dev);
	qsort(rows, n, sizeof(rows[0]), by_name);
	for (i = 0; i < n; i++)
		if (rows[i].c.sequential + rows[i].c.random)
			print_row(&rows[i]);
	fflush(stdout);
}

static int configure(void *s, void *ctx)
{
	struct biopattern_bpf *skel = s;

	(void)ctx;
	return tk_block_configure(skel->obj, env.dev, false);
}

TK_SKEL_OPS(biopattern_bpf);

int main(int argc, char **argv)
{
	struct biopattern_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	if (tk_filter_any())
		tk_usage_error("biopattern counts per disk: the task filters (-p, --tid, -u, -c, -n, --ppid, -- COMMAND) do not apply");
	tk_init();
	skel = tk_load(&biopattern_bpf_ops, configure, NULL);
	if (!tk_opts.json) {
		if (tk_opts.time)
			printf("%-9s ", "TIME");
		printf("%-7s %5s %5s %8s %10s\n", "DISK", "%RND", "%SEQ", "COUNT", "KBYTES");
	}
	tk_ready();
	tk_print_intervals(print_interval, skel);
	tk_losses_report(skel->obj);
	biopattern_bpf__destroy(skel);
	return tk_exit_status();
}
