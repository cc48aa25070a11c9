/* llcstat: last-level cache references and misses by process and CPU,
 * from hardware counters sampled every -c events. */
#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "llcstat.h"
#include "mapread.h"
#include "perfevent.h"
#include "tracekit.h"
#include "llcstat.skel.h"

static struct {
	long period;       /* -c */
	bool per_thread;   /* -t */
} env = { .period = 100 };

static const struct argp_option options[] = {
	{ "sample_period", 'c', "SAMPLE_PERIOD", 0,
	  "Sample one in this many cache reference / miss events (default 100)", 0 },
	{ "sample-period", 0x1000, "SAMPLE_PERIOD", OPTION_ALIAS, 0, 0 },
	{ "per-thread", 't', 0, 0, "Summarize cache references and misses by PID/TID", 0 },
	{ 0 },
};

static const char doc[] =
"Summarize last-level cache references and misses by PID and CPU.\n"
"\v"
"Each CPU counts cache references and cache misses with its hardware\n"
"counters (PERF_COUNT_HW_CACHE_REFERENCES and PERF_COUNT_HW_CACHE_MISSES);\n"
"every SAMPLE_PERIOD events (-c, default 100, as bcc) the counter\n"
"interrupts the task that runs and adds SAMPLE_PERIOD to its process's\n"
"(-t: thread's) counts on that CPU: counts are multiples of -c, and a\n"
"task that makes fewer events than that between two interrupts may show\n"
"none. HIT% is (REFERENCE - MISS) / REFERENCE. Runs for [duration]\n"
"seconds (default 10, as bcc; until COMMAND ends with -- COMMAND) or\n"
"until Ctrl-C. Needs a CPU PMU: without one (a VM without a virtual PMU)\n"
"it exits 1 saying so. As in bcc, -c is the sample period and -t per\n"
"thread, so --cgroup and --tid have no short letter.\n"
"\n"
"Examples:\n"
"  llcstat              # summarize for 10 seconds\n"
"  llcstat 20           # for 20 seconds\n"
"  llcstat -c 5000 10   # sample one in 5000 events\n"
"  llcstat -t           # by thread\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'c':
	case 0x1000:
		env.period = tk_arg_long("-c/--sample_period", arg, 1, INT_MAX);
		break;
	case 't': env.per_thread = true; break;
	case ARGP_KEY_ARG:
		tk_arg_duration(arg);
		break;
	case ARGP_KEY_END:
		if (!tk_arg_duration(NULL) && !tk_opts.duration && !tk_opts.command)
			tk_opts.duration = 10;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "llcstat",
	.no_print_cgroup = true,
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "ct",
	.args_doc = "[duration]",
};

/* Without a CPU PMU the kernel has no hardware events at all: say so
 * once, naming both counters, rather than failing on the first CPU. */
static void check_pmu(void)
{
	static const char *const names[] = { "cache-references", "cache-misses" };
	static const unsigned long long configs[] = {
		PERF_COUNT_HW_CACHE_REFERENCES, PERF_COUNT_HW_CACHE_MISSES,
	};
	int i, err = 0;

	for (i = 0; i < 2; i++) {
		struct perf_event_attr attr = {
			.size = sizeof(attr),
			.type = PERF_TYPE_HARDWARE,
			.config = configs[i],
			.disabled = 1,
		};
		int fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1,
				 PERF_FLAG_FD_CLOEXEC);

		if (fd >= 0) {
			close(fd);
			continue;
		}
		if (errno != ENOENT && errno != EOPNOTSUPP)
			return;  /* another cause: tk_load's attach names it */
		err = errno;
		if (i == 0)
			break;
		tk_fail("no hardware counter for %s (perf_event_open: %s): the CPU's PMU has it not",
			names[i], strerror(err));
	}
	if (err)
		tk_fail("no hardware cache counters (cache-references, cache-misses): perf_event_open of PERF_TYPE_HARDWARE fails with %s: this machine gives the kernel no CPU PMU (%s), as in a VM without a virtual PMU; run on bare metal or in a VM with one",
			strerror(err),
			access("/sys/bus/event_source/devices/cpu", F_OK) ?
			"/sys/bus/event_source/devices/cpu is absent" :
			"the cpu PMU lacks these events");
}

struct row {
	struct llcstat_key key;
	struct llcstat_val val;
};

static struct row *rows;
static int n_rows;

static void add_row(const void *key, const char *val, void *ctx)
{
	(void)ctx;
	if (n_rows == LLCSTAT_MAX_KEYS)
		return;
	memcpy(&rows[n_rows].key, key, sizeof(rows[n_rows].key));
	memcpy(&rows[n_rows].val, val, sizeof(rows[n_rows].val));
	n_rows++;
}

static double hit_pct(unsigned long long ref, unsigned long long miss)
{
	return ref ? 100.0 * (ref > miss ? ref - miss : 0) / ref : 0;
}

static int by_key(const void *a, const void *b)
{
	const struct llcstat_key *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

static void print_rows(void)
{
	unsigned long long ref = 0, miss = 0;
	struct tk_json j;
	int i;

	qsort(rows, n_rows, sizeof(*rows), by_key);
	if (!tk_opts.json) {
		printf("%-8s ", "PID");
		if (env.per_thread)
			printf("%-8s ", "TID");
		printf("%-16s %-4s %12s %12s %7s\n", "NAME", "CPU", "REFERENCE", "MISS", "HIT%");
	}
	for (i = 0; i < n_rows; i++) {
		const struct row *r = &rows[i];
		double hit = hit_pct(r->val.ref, r->val.miss);

		ref += r->val.ref;
		miss += r->val.miss;
		if (tk_opts.json) {
			tk_json_begin(&j, stdout);
			tk_json_str(&j, "type", "llc");
			tk_json_uint(&j, "pid", r->key.pid);
			if (env.per_thread)
				tk_json_uint(&j, "tid", r->key.tid);
			tk_json_str(&j, "comm", r->val.comm);
			tk_json_uint(&j, "cpu", r->key.cpu);
			tk_json_uint(&j, "references", r->val.ref);
			tk_json_uint(&j, "misses", r->val.miss);
			tk_json_double(&j, "hit_percent", hit);
			tk_json_end(&j);
			continue;
		}
		printf("%-8u ", r->key.pid);
		if (env.per_thread)
			printf("%-8u ", r->key.tid);
		printf("%-16s %-4u %12llu %12llu %6.2f%%\n", r->val.comm, r->key.cpu,
		       r->val.ref, r->val.miss, hit);
	}
	if (tk_opts.json) {
		tk_json_begin(&j, stdout);
		tk_json_str(&j, "type", "total");
		tk_json_uint(&j, "references", ref);
		tk_json_uint(&j, "misses", miss);
		tk_json_double(&j, "hit_percent", hit_pct(ref, miss));
		tk_json_end(&j);
	} else {
		printf("Total References: %llu Total Misses: %llu Hit Rate: %.2f%%\n",
		       ref, miss, hit_pct(ref, miss));
	}
	fflush(stdout);
}

static int configure(void *s, void *ctx)
{
	struct llcstat_bpf *skel = s;

	(void)ctx;
	skel->rodata->per_thread = env.per_thread;
	return 0;
}

TK_SKEL_OPS(llcstat_bpf);

int main(int argc, char **argv)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_HARDWARE,
		.config = PERF_COUNT_HW_CACHE_REFERENCES,
	};
	static char describe_ref[64], describe_miss[64];
	struct llcstat_bpf *skel;
	int err;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	check_pmu();
	attr.sample_period = env.period;
	snprintf(describe_ref, sizeof(describe_ref), "cache-references every %ld events", env.period);
	snprintf(describe_miss, sizeof(describe_miss), "cache-misses every %ld events", env.period);
	tk_set_perf_event(&attr, NULL, describe_ref);
	attr.config = PERF_COUNT_HW_CACHE_MISSES;
	tk_set_perf_event_prog("llcstat_miss_perf_event", &attr, describe_miss);
	skel = tk_load(&llcstat_bpf_ops, configure, NULL);
	tk_ready();
	tk_sleep_until(-1);
	tk_detach();
	rows = calloc(LLCSTAT_MAX_KEYS, sizeof(*rows));
	if (!rows)
		tk_fail("out of memory");
	err = tk_map_read(skel->maps.counts, add_row, NULL);
	if (err)
		tk_fail("cannot read the counts: %s", strerror(-err));
	print_rows();
	tk_losses_report(skel->obj);
	llcstat_bpf__destroy(skel);
	return tk_exit_status();
}
