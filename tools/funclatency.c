/* funclatency: time a kernel or user function, as a log2 histogram. */
#include <bpf/bpf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "funclatency.h"
#include "functarget.h"
#include "tracekit.h"
#include "funclatency.skel.h"

static struct {
	const char *spec;    /* FUNC as given */
	bool micros, millis;
} env;

static struct tk_func_target target;

static const struct argp_option options[] = {
	{ "microseconds", 'u', 0, 0, "Microsecond histogram (default: ns)", 0 },
	{ "milliseconds", 'm', 0, 0, "Millisecond histogram (default: ns)", 0 },
	{ "interval", 'i', "SEC", 0,
	  "Print every SEC seconds (as [interval])", 0 },
	{ 0 },
};

static const char doc[] =
"Time a kernel or user function: a histogram of its latency.\n"
"\v"
"FUNC is one of:\n"
"  vfs_read             a kernel function (fentry/fexit, else kprobes)\n"
"  c:malloc             a library function (uprobes): c is libc.so.*,\n"
"                       pthread libpthread.so.*, or a file name such as\n"
"                       libssl.so.3; with -p, the one the process maps\n"
"  /usr/bin/bash:readline, ./a.out:work   a function of an ELF file\n"
"  bash:readline        a function of a program in PATH\n"
"\n"
"The latency of a call is the time from its entry to its return. A call\n"
"made while another is running on the same thread (recursion) is timed\n"
"too, up to 16 deep (deeper calls count as failed map inserts in the loss\n"
"report). Filters are judged at the call's entry. With -p (or --tid) a\n"
"user function is probed in that process only. A FUNC that names nothing\n"
"(no such file, library or function) is a usage error. Since -u is\n"
"--microseconds here (as in bcc), --uid has no short letter.\n"
"\n"
"Examples:\n"
"  funclatency vfs_read             # kernel vfs_read() latency, in ns\n"
"  funclatency -u -p 181 c:malloc   # malloc() of process 181, in us\n"
"  funclatency -m do_nanosleep 1 5  # every second, 5 times, in ms\n"
"  funclatency -T -i 2 ./a.out:work # every 2 s with a time line\n"
"  funclatency -j c:getpid          # NDJSON\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'u': env.micros = true; break;
	case 'm': env.millis = true; break;
	case 'i':
		tk_opts.interval = tk_arg_long("--interval", arg, 1, 86400);
		break;
	case ARGP_KEY_ARG:
		if (env.spec)
			return ARGP_ERR_UNKNOWN;  /* [interval [count]] */
		env.spec = arg;
		break;
	case ARGP_KEY_END:
		if (env.micros && env.millis)
			tk_usage_error("options -u/--microseconds and -m/--milliseconds cannot be combined");
		if (!env.spec)
			tk_usage_error("missing FUNC: a kernel function (vfs_read), LIB:FUNC (c:malloc) or PATH:FUNC");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "funclatency",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "u",
	.periodic = true,
	.args_doc = "FUNC [interval [count]]",
};

static const char *unit(void)
{
	return env.millis ? "msecs" : env.micros ? "usecs" : "nsecs";
}

static unsigned long long unit_ns(void)
{
	return env.millis ? 1000000 : env.micros ? 1000 : 1;
}

/* FUNC must name something that exists, and a user function's process
 * must exist: a usage error (exit 2) otherwise. */
static void resolve(void)
{
	pid_t pid = tk_filter_attach_pid() > 0 ? tk_filter_attach_pid() : 0;
	char err[PATH_MAX + 256];

	if (tk_func_target_resolve(env.spec, pid, &target, err, sizeof(err)))
		tk_usage_error("invalid FUNC '%s': %s", env.spec, err);
	if (target.binary[0] && pid && kill(pid, 0) && errno == ESRCH)
		tk_usage_error("invalid --%s value '%d': no such process",
			       tk_opts.filter.tgid > 0 ? "pid" : "tid", (int)pid);
}

/* Counts since the last print: per-CPU sums, minus the sums then. */
static void read_hist(struct bpf_map *map, struct funclatency_hist *out)
{
	static struct funclatency_hist last;
	struct funclatency_hist now = { 0 }, *v;
	int ncpu = libbpf_num_possible_cpus(), c, s;
	unsigned key = 0;

	v = calloc(ncpu, sizeof(*v));
	if (!v || bpf_map__lookup_elem(map, &key, sizeof(key), v,
				       ncpu * sizeof(*v), 0))
		tk_fail("cannot read the histogram map");
	for (c = 0; c < ncpu; c++) {
		for (s = 0; s < FUNCLATENCY_SLOTS; s++)
			now.slots[s] += v[c].slots[s];
		now.sum_ns += v[c].sum_ns;
	}
	free(v);
	for (s = 0; s < FUNCLATENCY_SLOTS; s++)
		out->slots[s] = now.slots[s] - last.slots[s];
	out->sum_ns = now.sum_ns - last.sum_ns;
	last = now;
}

static void print_interval(struct funclatency_bpf *skel)
{
	struct funclatency_hist h;
	unsigned long long count = 0, total;
	struct tk_json j;
	char buf[16];
	int s;

	read_hist(skel->maps.hist, &h);
	for (s = 0; s < FUNCLATENCY_SLOTS; s++)
		count += h.slots[s];
	if (tk_opts.json) {
		tk_json_begin(&j, stdout);
		tk_json_str(&j, "type", "histogram");
		tk_json_time(&j);
		tk_json_str(&j, "function", target.func);
		if (target.binary[0])
			tk_json_str(&j, "binary", target.binary);
		tk_hist_json_log2(&j, h.slots, FUNCLATENCY_SLOTS, unit());
		tk_json_uint(&j, "sum_ns", h.sum_ns);
		if (count)
			tk_json_double(&j, "avg_ns", (double)h.sum_ns / count);
		else
			tk_json_null(&j, "avg_ns");
		tk_json_end(&j);
	} else {
		putchar('\n');
		if (tk_opts.time)
			printf("%-8s\n", tk_time_str(buf, sizeof(buf)));
		tk_hist_print_log2(stdout, h.slots, FUNCLATENCY_SLOTS, unit());
		/* bcc's summary: the total in the unit, its average per call */
		total = h.sum_ns / unit_ns();
		if (count)
			printf("\navg = %llu %s, total: %llu %s, count: %llu\n\n",
			       total / count, unit(), total, unit(), count);
	}
	fflush(stdout);
}

static int configure(void *s, void *ctx)
{
	struct funclatency_bpf *skel = s;

	(void)ctx;
	skel->rodata->unit_ns = unit_ns();
	return 0;
}

TK_SKEL_OPS(funclatency_bpf);

int main(int argc, char **argv)
{
	struct funclatency_bpf *skel;
	const char *binary;
	pid_t pid;
	double next = 0;
	long n = 0;

	tk_parse_args(&tool, argc, argv);
	resolve();
	tk_init();
	/* A user function is probed in the filtered process only. */
	binary = target.binary[0] ? target.binary : NULL;
	pid = tk_filter_attach_pid();
	tk_set_target("entry", binary, target.func, binary ? pid : -1);
	tk_set_target("exit", binary, target.func, binary ? pid : -1);
	skel = tk_load(&funclatency_bpf_ops, configure, NULL);
	tk_ready();
	if (tk_opts.interval)
		next = tk_elapsed();
	do {
		next += tk_opts.interval;
		tk_sleep_until(tk_opts.interval ? next : -1);
		print_interval(skel);
	} while (!tk_exiting() && (!tk_opts.count || ++n < tk_opts.count));
	tk_losses_report(skel->obj);
	funclatency_bpf__destroy(skel);
	return 0;
}
