/* fsdist: latency histograms of file system operations. Run as
 * ext4dist, xfsdist, btrfsdist or nfsdist, the file system is the
 * name's. */
#include <bpf/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fstypes.h"
#include "fsdist.skel.h"
#include "tracekit.h"

static struct {
	const struct tk_fs *fs;
	bool millis;
} env;

static const struct argp_option options[] = {
	{ "milliseconds", 'm', 0, 0, "Millisecond histograms", 0 },
	{ 0 },
};

static const char doc[] =
"Summarize ext4, xfs, btrfs or nfs operation latency as a histogram per\n"
"operation: read, write, open, fsync, getattr.\n"
"\v"
"bcc's histograms, one per operation that happened in the interval,\n"
"headed \"operation = NAME\". JSON: a record per operation with its\n"
"buckets. What is traced: as fsslower (see fsslower --help): the file\n"
"system's functions where the kernel allows it, else syscall tracepoints\n"
"(the whole system call; not mmap'd I/O, io_uring, aio, the kernel's own\n"
"I/O or stat by path).\n"
"\n"
"Examples:\n"
"  ext4dist               # ext4 latency until Ctrl-C\n"
"  fsdist -t xfs -m 5     # xfs, millisecond histograms every 5 s\n"
"  btrfsdist -p 181 1 10  # only PID 181, every second, 10 times\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)arg;
	(void)state;
	switch (key) {
	case 'm': env.millis = true; break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static struct tk_tool tool = {
	.name = "fsdist",
	.doc = doc,
	.options = options,
	.parser = parse,
	.periodic = true,
};

static void print_interval(void *arg, int seq)
{
	static unsigned long long last[FSOP_MAX][FSOP_SLOTS];
	struct fsdist_bpf *skel = arg;
	int ncpu = libbpf_num_possible_cpus(), c, s;
	struct fsdist_slots *v = calloc(ncpu, sizeof(*v));
	const char *unit = env.millis ? "msecs" : "usecs";
	unsigned op;
	char buf[16];

	(void)seq;
	if (!v)
		tk_fail("out of memory");
	if (!tk_opts.json && tk_opts.time)  /* each operation starts with a blank line */
		printf("\n%-8s\n", tk_time_str(buf, sizeof(buf)));
	for (op = 0; op < FSOP_MAX; op++) {
		unsigned long long now[FSOP_SLOTS] = { 0 }, diff[FSOP_SLOTS], total = 0;
		struct tk_json j;

		if (bpf_map__lookup_elem(skel->maps.hists, &op, sizeof(op), v,
					 ncpu * sizeof(*v), 0))
			tk_fail("cannot read the histogram map");
		/* counts since the last print: the difference to the last sum */
		for (c = 0; c < ncpu; c++)
			for (s = 0; s < FSOP_SLOTS; s++)
				now[s] += v[c].slots[s];
		for (s = 0; s < FSOP_SLOTS; s++) {
			diff[s] = now[s] - last[op][s];
			total += diff[s];
		}
		memcpy(last[op], now, sizeof(now));
		if (!total)
			continue;
		if (tk_opts.json) {
			tk_json_begin(&j, stdout);
			tk_json_str(&j, "type", "histogram");
			tk_json_time(&j);
			tk_json_str(&j, "fs", env.fs->type);
			tk_json_str(&j, "operation", tk_fsop_name(op));
			tk_hist_json_log2(&j, diff, FSOP_SLOTS, unit);
			tk_json_end(&j);
			continue;
		}
		printf("\noperation = %s\n", tk_fsop_name(op));
		tk_hist_print_log2(stdout, diff, FSOP_SLOTS, unit);
	}
	free(v);
	fflush(stdout);
}

static int configure(void *s, void *ctx)
{
	struct fsdist_bpf *skel = s;
	const enum tk_way *way = ctx;

	skel->rodata->unit_ns = env.millis ? 1000000 : 1000;
	tk_fs_configure(skel->obj, env.fs, *way);
	return 0;
}

TK_SKEL_OPS(fsdist_bpf);

int main(int argc, char **argv)
{
	static enum tk_way way;
	struct fsdist_bpf *skel;

	skel = tk_fs_start(&tool, &env.fs, "dist", argc, argv, &fsdist_bpf_ops, configure,
			   &way);
	if (!tk_opts.json)
		printf("Tracing %s operation latency... Hit Ctrl-C to end.\n", env.fs->type);
	tk_ready();
	tk_print_intervals(print_interval, skel);
	tk_losses_report(skel->obj);
	fsdist_bpf__destroy(skel);
	return tk_exit_status();
}
