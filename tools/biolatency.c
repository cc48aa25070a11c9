/* biolatency: summarize block device I/O latency as a histogram. */
#include <bpf/bpf.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "biolatency.h"
#include "biolatency.skel.h"
#include "tracekit.h"

static struct {
	bool queued;
	bool millis;
	bool per_disk;
	bool per_flags;
	bool extension;
	unsigned int dev;
} env;

static const struct argp_option options[] = {
	{ "queued", 'Q', 0, 0, "Include OS queued time in I/O time", 0 },
	{ "milliseconds", 'm', 0, 0, "Millisecond histogram", 0 },
	{ "disks", 'D', 0, 0, "Print a histogram per disk device", 0 },
	{ "flags", 'F', 0, 0, "Print a histogram per set of I/O flags", 0 },
	{ "extension", 'e', 0, 0, "Summarize average, total and count", 0 },
	{ "disk", 'd', "DISK", 0, "Only this disk (sda, loop0, ...)", 0 },
	{ 0 },
};

static const char doc[] =
"Summarize block device I/O latency as a histogram.\n"
"\v"
"Latency is from a request's issue to the device to its completion; with\n"
"-Q from its making (the kernel's stamp, rq->start_time_ns; a request the\n"
"kernel did not stamp counts from its issue). Where the disk's queue keeps\n"
"I/O statistics (writeback throttling, on by default) the issue time is\n"
"the kernel's own stamp, rq->io_start_time_ns; since Linux 6.9 that can be\n"
"the time the submitting task's plug first took, earlier by the CPU time\n"
"it ran since without sleeping. -F names a request by its\n"
"operation and the flags Sync, Metadata, ForcedUnitAccess, Preflush and\n"
"ReadAhead, as bcc's (which also shows Priority, NoMerge, Idle,\n"
"Background and NoWait). Task filters (-p, -u, -n, -c, -- COMMAND) keep\n"
"the requests their tasks made (block:block_getrq).\n"
"\n"
"bcc's letters: -d is --disk here; the common -d is --duration.\n"
"\n"
"Examples:\n"
"  biolatency             # summarize block I/O latency until Ctrl-C\n"
"  biolatency 1 10        # print 1 second summaries, 10 times\n"
"  biolatency -mT 1       # 1s summaries, milliseconds, and timestamps\n"
"  biolatency -Q          # include OS queued time in I/O time\n"
"  biolatency -D          # show each disk device separately\n"
"  biolatency -F          # show I/O flags separately\n"
"  biolatency -d sdc      # only disk sdc\n"
"  biolatency -e          # with average, total and count\n"
"  biolatency -j 1 | jq .p99  # NDJSON\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'Q': env.queued = true; break;
	case 'm': env.millis = true; break;
	case 'D': env.per_disk = true; break;
	case 'F': env.per_flags = true; break;
	case 'e': env.extension = true; break;
	case 'd': env.dev = tk_disk_arg("--disk", arg); break;
	case ARGP_KEY_END:
		if (env.per_disk && env.per_flags)
			tk_usage_error("options -D/--disks and -F/--flags cannot be combined");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "biolatency",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "d",
	.periodic = true,
};

static const char *unit(void)
{
	return env.millis ? "msecs" : "usecs";
}

struct entry {
	struct biolat_key key;
	char label[64];
	struct biolat_hist h;
};

static void label_of(struct entry *e)
{
	if (env.per_disk)
		snprintf(e->label, sizeof(e->label), "%s", tk_disk_name(e->key.dev));
	else if (env.per_flags)
		tk_bio_flags_desc(e->key.flags, e->label, sizeof(e->label));
	else
		e->label[0] = 0;
}

static int by_label(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->label, ((const struct entry *)b)->label);
}

/* The latencies' sum in the histogram's unit (BPF keeps ns). */
static unsigned long long sum(const struct entry *e)
{
	return e->h.sum_ns / (env.millis ? 1000000 : 1000);
}

static void print_one(const struct entry *e)
{
	const char *name = env.per_disk ? "disk" : env.per_flags ? "flags" : NULL;
	struct tk_json j;

	if (tk_opts.json) {
		tk_json_begin(&j, stdout);
		tk_json_str(&j, "type", "histogram");
		tk_json_time(&j);
		if (name)
			tk_json_str(&j, name, e->label);
		if (env.per_disk) {
			tk_json_uint(&j, "major", TK_KDEV_MAJOR(e->key.dev));
			tk_json_uint(&j, "minor", TK_KDEV_MINOR(e->key.dev));
		}
		tk_hist_json_log2(&j, e->h.slots, BIOLAT_SLOTS, unit());
		tk_json_uint(&j, "sum", sum(e));
		tk_json_end(&j);
		return;
	}
	if (name) {
		printf("\n%s = ", name);
		tk_print_safe(stdout, e->label, strlen(e->label));
		putchar('\n');
	}
	tk_hist_print_log2(stdout, e->h.slots, BIOLAT_SLOTS, unit());
	if (env.extension && e->h.count)
		printf("\navg = %llu %s, total: %llu %s, count: %llu\n",
		       sum(e) / e->h.count, unit(), sum(e), unit(), e->h.count);
}

/* The interval's one histogram (no -D, -F): hist_total's per-CPU
 * counts summed, less their sums at the last interval (BPF's counts
 * only grow: none lost between a read and a reset). */
static void take_total(struct biolatency_bpf *skel, struct biolat_hist *out)
{
	static struct biolat_hist last;
	struct biolat_hist now = { 0 };
	int ncpu = libbpf_num_possible_cpus(), c, i;
	struct biolat_hist *per = calloc(ncpu, sizeof(*per));
	unsigned int zero = 0;

	if (!per || bpf_map__lookup_elem(skel->maps.hist_total, &zero, sizeof(zero), per,
					 ncpu * sizeof(*per), 0))
		tk_fail("reading biolatency's histogram: %s", strerror(errno));
	for (c = 0; c < ncpu; c++) {
		for (i = 0; i < BIOLAT_SLOTS; i++)
			now.slots[i] += per[c].slots[i];
		now.count += per[c].count;
		now.sum_ns += per[c].sum_ns;
	}
	free(per);
	for (i = 0; i < BIOLAT_SLOTS; i++)
		out->slots[i] = now.slots[i] - last.slots[i];
	out->count = now.count - last.count;
	out->sum_ns = now.sum_ns - last.sum_ns;
	last = now;
}

/* Every histogram of the interval, by label; read ones are deleted. */
static void print_interval(void *arg, int seq)
{
	static struct entry entries[BIOLAT_MAX_KEYS];
	struct biolatency_bpf *skel = arg;
	int n, i;
	char buf[16];

	(void)seq;
	if (!tk_opts.json) {
		putchar('\n');
		if (tk_opts.time)
			printf("%-8s\n", tk_time_str(buf, sizeof(buf)));
	}
	if (!env.per_disk && !env.per_flags) {
		struct entry total = { 0 };

		take_total(skel, &total.h);
		print_one(&total);   /* an empty interval is still one histogram */
		fflush(stdout);
		return;
	}
	n = tk_map_take_all(skel->maps.hists, entries, sizeof(entries[0]),
			    offsetof(struct entry, h), BIOLAT_MAX_KEYS);
	for (i = 0; i < n; i++)
		label_of(&entries[i]);
	qsort(entries, n, sizeof(entries[0]), by_label);
	for (i = 0; i < n; i++)
		print_one(&entries[i]);
	fflush(stdout);
}

static int configure(void *s, void *ctx)
{
	struct biolatency_bpf *skel = s;

	(void)ctx;
	skel->rodata->queued = env.queued;
	skel->rodata->millis = env.millis;
	skel->rodata->per_disk = env.per_disk;
	skel->rodata->per_flags = env.per_flags;
	/* Read at issue only what the histograms are keyed or timed by. */
	skel->rodata->tk_block_need = (env.per_disk ? TK_BLOCK_NEED_DEV : 0) |
				      (env.per_flags ? TK_BLOCK_NEED_FLAGS : 0) |
				      (env.queued ? TK_BLOCK_NEED_QUEUED : 0);
	return tk_block_configure(skel->obj, env.dev, false);
}

TK_SKEL_OPS(biolatency_bpf);

int main(int argc, char **argv)
{
	struct biolatency_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	skel = tk_load(&biolatency_bpf_ops, configure, NULL);
	tk_ready();
	tk_print_intervals(print_interval, skel);
	tk_losses_report(skel->obj);
	biolatency_bpf__destroy(skel);
	return tk_exit_status();
}
