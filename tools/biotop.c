/* biotop: top processes by block device I/O, per interval. */
#include <bpf/bpf.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "biotop.h"
#include "biotop.skel.h"
#include "tracekit.h"

static struct {
	bool noclear;
	long maxrows;
	unsigned int dev;
} env = { .maxrows = 20 };

static const struct argp_option options[] = {
	{ "noclear", 'C', 0, 0, "Don't clear the screen", 0 },
	{ "maxrows", 'r', "ROWS", 0, "Rows to print per interval (default 20)", 0 },
	{ "disk", 'd', "DISK", 0, "Only this disk (sda, loop0, ...)", 0 },
	{ 0 },
};

static const char doc[] =
"Top processes by block device I/O, per interval (default 1 second).\n"
"\v"
"A row per process, disk and direction (D: W write, R anything else),\n"
"sorted by bytes: I/O the requests completed, Kbytes their size, AVGms\n"
"their mean latency from issue to completion. The process is the one that\n"
"made the request (block:block_getrq): PID 0 and COMM '?' for a request\n"
"the kernel made itself. The screen is cleared before each interval on a\n"
"terminal, unless -C. JSON: one record per row, all rows, with a \"seq\"\n"
"per interval.\n"
"\n"
"bcc's letters: -d is --disk here; the common -d is --duration.\n"
"\n"
"Examples:\n"
"  biotop                 # block device I/O top, 1 second refresh\n"
"  biotop -C              # don't clear the screen\n"
"  biotop -p 181          # only I/O made by PID 181\n"
"  biotop 5               # 5 second summaries\n"
"  biotop 5 10            # 5 second summaries, 10 times only\n"
"  biotop -d sdc -r 5     # only disk sdc, top 5 rows\n"
"  biotop -j 5 | jq .kbytes  # NDJSON\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'C': env.noclear = true; break;
	case 'r': env.maxrows = tk_arg_long("--maxrows", arg, 1, 1000000); break;
	case 'd': env.dev = tk_disk_arg("--disk", arg); break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "biotop",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "dC",
	.periodic = true,
};

struct row {
	struct biotop_key key;
	struct biotop_val val;
};

static int by_bytes(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->val.bytes != y->val.bytes)
		return x->val.bytes > y->val.bytes ? -1 : 1;
	return x->key.pid < y->key.pid ? -1 : x->key.pid > y->key.pid;
}

static void print_header(void)
{
	tk_top_heading(!env.noclear, true);
	printf("%-7s %-16s %1s %-3s %-3s %-8s %5s %7s %6s\n", "PID", "COMM", "D",
	       "MAJ", "MIN", "DISK", "I/O", "Kbytes", "AVGms");
}

static void print_row(const struct row *r, int seq)
{
	const char *disk = tk_disk_name(r->key.dev);
	size_t clen = strnlen(r->key.comm, sizeof(r->key.comm));
	double avg_ms = r->val.io ? r->val.ns / 1e6 / r->val.io : 0;
	struct tk_json j;

	if (tk_opts.json) {
		tk_json_begin(&j, stdout);
		tk_json_str(&j, "type", "biotop");
		tk_json_time(&j);
		tk_json_int(&j, "seq", seq);
		tk_json_uint(&j, "pid", r->key.pid);
		tk_json_strn(&j, "comm", r->key.comm, clen);
		tk_json_str(&j, "direction", r->key.write ? "W" : "R");
		tk_json_uint(&j, "major", TK_KDEV_MAJOR(r->key.dev));
		tk_json_uint(&j, "minor", TK_KDEV_MINOR(r->key.dev));
		tk_json_str(&j, "disk", disk);
		tk_json_uint(&j, "io", r->val.io);
		tk_json_uint(&j, "bytes", r->val.bytes);
		tk_json_double(&j, "avg_ms", avg_ms);
		tk_json_end(&j);
		return;
	}
	printf("%-7u ", r->key.pid);
	tk_print_safe_padded(stdout, r->key.comm, clen, 16);
	printf(" %1s %-3u %-3u ", r->key.write ? "W" : "R",
	       TK_KDEV_MAJOR(r->key.dev), TK_KDEV_MINOR(r->key.dev));
	tk_print_safe_padded(stdout, disk, strlen(disk), 8);
	printf(" %5llu %7llu %6.2f\n", r->val.io, r->val.bytes / 1024, avg_ms);
}

static void print_interval(void *arg, int seq)
{
	static struct row rows[BIOTOP_MAX_KEYS];
	struct biotop_bpf *skel = arg;
	int n, i;

	n = tk_map_take_all(skel->maps.counts, rows, sizeof(rows[0]),
			    offsetof(struct row, val), BIOTOP_MAX_KEYS);
	qsort(rows, n, sizeof(rows[0]), by_bytes);
	if (!tk_opts.json)
		print_header();
	for (i = 0; i < n && (tk_opts.json || i < env.maxrows); i++)
		print_row(&rows[i], seq);
	fflush(stdout);
}

static int configure(void *s, void *ctx)
{
	struct biotop_bpf *skel = s;

	(void)ctx;
	return tk_block_configure(skel->obj, env.dev, true);
}

TK_SKEL_OPS(biotop_bpf);

int main(int argc, char **argv)
{
	struct biotop_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	if (!tk_opts.interval)
		tk_opts.interval = 1;   /* bcc's default */
	tk_init();
	skel = tk_load(&biotop_bpf_ops, configure, NULL);
	tk_ready();
	tk_print_intervals(print_interval, skel);
	tk_losses_report(skel->obj);
	biotop_bpf__destroy(skel);
	return tk_exit_status();
}
