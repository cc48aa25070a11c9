/* biosnoop: trace block device I/O, one line per request. */
#include <stdio.h>
#include <string.h>

#include "biosnoop.h"
#include "biosnoop.skel.h"
#include "tracekit.h"

static struct {
	bool queued;
	bool pattern;
	const char *disk;
	unsigned int dev;
	double min_ms;
} env;

static const struct argp_option options[] = {
	{ "queue", 'Q', 0, 0, "Print QUE(ms), the time a request waited before issue", 0 },
	{ "disk", 'd', "DISK", 0, "Only this disk (sda, loop0, ...)", 0 },
	{ "pattern", 'P', 0, 0, "Print P: S sequential, R random (per disk)", 0 },
	{ "min", 'm', "MS", 0, "Only I/O slower than MS milliseconds", 0 },
	{ 0 },
};

static const char doc[] =
"Trace block device I/O: one line per request, at its completion.\n"
"\v"
"COMM and PID are the task that made the request (block:block_getrq),\n"
"not the one on CPU at its issue or completion; a request the kernel made\n"
"itself (a flush, a passthrough command) has PID 0 and COMM '?'. T is the\n"
"operation: R read, W write, F flush, D discard, N other (JSON \"rwbs\":\n"
"with its flags, as blktrace: S sync, F FUA, A readahead, M metadata).\n"
"SECTOR is in 512-byte units. LAT(ms) is from issue to the device to\n"
"completion; QUE(ms) (-Q) from the request's making to its issue (JSON\n"
"null when the kernel did not stamp it: no I/O accounting on its queue).\n"
"TIME(s) is seconds since the first request printed.\n"
"\n"
"-d DISK: the disk's name in /sys/block (a partition's I/O is its disk's).\n"
"Task filters (-p, -u, -n, -c, -- COMMAND) keep the requests their tasks\n"
"made. -P: a request is sequential when it starts where the disk's last\n"
"request (in issue order) ended.\n"
"\n"
"bcc's letters: -d is --disk here; the common -d is --duration.\n"
"\n"
"Examples:\n"
"  biosnoop              # trace all block I/O\n"
"  biosnoop -Q           # with the time queued before issue\n"
"  biosnoop -d sdc       # only disk sdc\n"
"  biosnoop -P           # with the I/O pattern (sequential or random)\n"
"  biosnoop -m 10        # only I/O slower than 10 ms\n"
"  biosnoop -p 185       # only I/O made by PID 185\n"
"  biosnoop -j | jq .latency_ns  # NDJSON\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'Q': env.queued = true; break;
	case 'P': env.pattern = true; break;
	case 'd':
		env.disk = arg;
		env.dev = tk_disk_arg("--disk", arg);
		break;
	case 'm': env.min_ms = tk_arg_double("--min", arg, 0, 1e9); break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "biosnoop",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "dP",
};

static unsigned long long first_ns;

static const char *pattern_name(unsigned int p)
{
	return p == BIO_PATTERN_SEQ ? "sequential" :
	       p == BIO_PATTERN_RANDOM ? "random" : NULL;
}

/* Queue time in ns, or -1 when the request was not stamped. */
static long long queue_ns(const struct tk_bio_start *s)
{
	if (!s->queued_ns || s->queued_ns > s->issue_ns)
		return -1;
	return s->issue_ns - s->queued_ns;
}

static void print_json(const struct bio_event *e, const char *disk)
{
	const struct tk_bio_start *s = &e->s;
	struct tk_json j;
	char rwbs[8];

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "bio");
	tk_json_time(&j);
	tk_json_double(&j, "ts", (e->done_ns - first_ns) / 1e9);
	if (s->known) {
		tk_json_int(&j, "pid", s->who.pid);
		tk_json_int(&j, "tid", s->who.tid);
		tk_json_strn(&j, "comm", s->who.comm,
			     strnlen(s->who.comm, sizeof(s->who.comm)));
	} else {
		tk_json_null(&j, "pid");
		tk_json_null(&j, "tid");
		tk_json_null(&j, "comm");
	}
	tk_json_str(&j, "disk", disk);
	tk_json_uint(&j, "major", TK_KDEV_MAJOR(s->dev));
	tk_json_uint(&j, "minor", TK_KDEV_MINOR(s->dev));
	tk_json_str(&j, "rwbs", tk_bio_rwbs(s->flags, rwbs, sizeof(rwbs)));
	tk_json_uint(&j, "sector", s->sector);
	tk_json_uint(&j, "bytes", s->len);
	tk_json_uint(&j, "latency_ns", e->done_ns - s->issue_ns);
	if (env.queued) {
		if (queue_ns(s) >= 0)
			tk_json_int(&j, "queue_ns", queue_ns(s));
		else
			tk_json_null(&j, "queue_ns");
	}
	if (env.pattern && pattern_name(s->pattern))
		tk_json_str(&j, "pattern", pattern_name(s->pattern));
	tk_json_int(&j, "error", e->error);
	tk_json_end(&j);
}

static void print_text(const struct bio_event *e, const char *disk)
{
	const struct tk_bio_start *s = &e->s;
	char buf[16];

	if (tk_opts.time)
		printf("%-8s ", tk_time_str(buf, sizeof(buf)));
	printf("%-11.6f ", (e->done_ns - first_ns) / 1e9);
	if (s->known)
		tk_print_safe_padded(stdout, s->who.comm,
				     strnlen(s->who.comm, 14), 14);
	else
		printf("%-14s", "?");
	printf(" %-7u ", s->known ? s->who.pid : 0);
	tk_print_safe_padded(stdout, disk, strlen(disk), 9);
	printf(" %c %-10llu %-7u ", tk_bio_op_letter(s->flags), s->sector, s->len);
	if (env.pattern)
		printf("%c ", s->pattern == BIO_PATTERN_SEQ ? 'S' :
			      s->pattern == BIO_PATTERN_RANDOM ? 'R' : '?');
	if (env.queued) {
		if (queue_ns(s) >= 0)
			printf("%7.2f ", queue_ns(s) / 1e6);
		else
			printf("%7s ", "-");
	}
	printf("%7.2f\n", (e->done_ns - s->issue_ns) / 1e6);
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	const struct bio_event *e = data;
	const char *disk;

	(void)ctx;
	if (size < sizeof(*e))
		return 0;
	if (env.min_ms && e->done_ns - e->s.issue_ns < env.min_ms * 1e6)
		return 0;
	if (!first_ns)
		first_ns = e->done_ns;
	disk = tk_disk_name(e->s.dev);
	if (tk_opts.json)
		print_json(e, disk);
	else
		print_text(e, disk);
	return 0;
}

static int configure(void *s, void *ctx)
{
	struct biosnoop_bpf *skel = s;

	(void)ctx;
	skel->rodata->pattern = env.pattern;
	return tk_block_configure(skel->obj, env.dev, true);
}

TK_SKEL_OPS(biosnoop_bpf);

int main(int argc, char **argv)
{
	struct biosnoop_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	skel = tk_load(&biosnoop_bpf_ops, configure, NULL);
	tk_events_open(skel->obj, handle_event, NULL);
	if (!tk_opts.json) {
		if (tk_opts.time)
			printf("%-8s ", "TIME");
		printf("%-11s %-14s %-7s %-9s %-1s %-10s %-7s ", "TIME(s)", "COMM",
		       "PID", "DISK", "T", "SECTOR", "BYTES");
		if (env.pattern)
			printf("%-1s ", "P");
		if (env.queued)
			printf("%7s ", "QUE(ms)");
		printf("%7s\n", "LAT(ms)");
	}
	tk_ready();
	tk_events_loop();
	tk_losses_report(skel->obj);
	biosnoop_bpf__destroy(skel);
	return tk_exit_status();
}
