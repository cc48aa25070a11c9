/* bitesize: summarize block device I/O size as a histogram per process. */
#include <bpf/bpf.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bitesize.h"
#include "bitesize.skel.h"
#include "tracekit.h"

static struct {
	unsigned int dev;
} env;

static const struct argp_option options[] = {
	{ "disk", 'd', "DISK", 0, "Only this disk (sda, loop0, ...)", 0 },
	{ 0 },
};

static const char doc[] =
"Summarize block device I/O size as a histogram per process name.\n"
"\v"
"Each request is counted at its issue to the device, by its size in KiB,\n"
"under the name (comm) of the process that made it (block:block_getrq;\n"
"'?' for a request the kernel made itself). Requests merged from several\n"
"calls count once, with their total size. Up to 10240 names per interval.\n"
"\n"
"bcc's letters: -d is --disk here (the common -d is --duration);\n"
"libbpf-tools' -c COMM is -n COMM (-c is the cgroup filter).\n"
"\n"
"Examples:\n"
"  bitesize               # trace block I/O sizes until Ctrl-C\n"
"  bitesize 1 10          # print 1 second summaries, 10 times\n"
"  bitesize -T 1          # 1s summaries with timestamps\n"
"  bitesize -n fio        # only processes whose name contains fio\n"
"  bitesize -d sdc        # only disk sdc\n"
"  bitesize -j | jq .comm  # NDJSON\n";

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
	.name = "bitesize",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "d",
	.periodic = true,
};

struct entry {
	struct bitesize_key key;
	struct bitesize_hist h;
};

static int by_comm(const void *a, const void *b)
{
	return strncmp(((const struct entry *)a)->key.comm,
		       ((const struct entry *)b)->key.comm, TK_TASK_COMM_LEN);
}

static void print_one(const struct entry *e)
{
	size_t len = strnlen(e->key.comm, sizeof(e->key.comm));
	struct tk_json j;

	if (tk_opts.json) {
		tk_json_begin(&j, stdout);
		tk_json_str(&j, "type", "histogram");
		tk_json_time(&j);
		tk_json_strn(&j, "comm", e->key.comm, len);
		tk_hist_json_log2(&j, e->h.slots, BITESIZE_SLOTS, "kbytes");
		tk_json_end(&j);
		return;
	}
	fputs("\nProcess Name = '", stdout);
	tk_print_safe(stdout, e->key.comm, len);
	fputs("'\n", stdout);
	tk_hist_print_log2(stdout, e->h.slots, BITESIZE_SLOTS, "Kbytes");
}

/* Every name's histogram of the interval, by name; read ones are deleted. */
static void print_interval(void *arg, int seq)
{
	static struct entry entries[BITESIZE_MAX_KEYS];
	struct bitesize_bpf *skel = arg;
	int n, i;
	char buf[16];

	(void)seq;
	n = tk_map_take_all(skel->maps.hists, entries, sizeof(entries[0]),
			    offsetof(struct entry, h), BITESIZE_MAX_KEYS);
	qsort(entries, n, sizeof(entries[0]), by_comm);
	if (!tk_opts.json && tk_opts.time)
		printf("\n%-8s\n", tk_time_str(buf, sizeof(buf)));
	for (i = 0; i < n; i++)
		print_one(&entries[i]);
	fflush(stdout);
}

static int configure(void *s, void *ctx)
{
	struct bitesize_bpf *skel = s;

	(void)ctx;
	return tk_block_configure(skel->obj, env.dev, true);
}

TK_SKEL_OPS(bitesize_bpf);

int main(int argc, char **argv)
{
	struct bitesize_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	skel = tk_load(&bitesize_bpf_ops, configure, NULL);
	tk_ready();
	tk_print_intervals(print_interval, skel);
	tk_losses_report(skel->obj);
	bitesize_bpf__destroy(skel);
	return tk_exit_status();
}
