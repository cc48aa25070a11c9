/* cpudist: summarize on- (or off-) CPU time per task run as a histogram. */
#include <bpf/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpudist.h"
#include "cpudist.skel.h"
#include "tracekit.h"

static struct {
	bool offcpu;
	bool millis;
	bool per_process;
	bool per_thread;
} env;

static const struct argp_option options[] = {
	{ "offcpu", 'O', 0, 0, "Measure off-CPU time", 0 },
	{ "milliseconds", 'm', 0, 0, "Millisecond histogram", 0 },
	{ "pids", 'P', 0, 0, "Print a histogram per process ID", 0 },
	{ "tids", 'L', 0, 0, "Print a histogram per thread ID", 0 },
	{ 0 },
};

static const struct tk_bcc_missing missing[] = {
	{ "--include-idle", "the CPUs' idle tasks (PID 0) are never measured" },
	{ "-I", "the CPUs' idle tasks (PID 0) are never measured" },
	{ "--extension", "-j gives each histogram's total and percentiles" },
	{ "-e", "-j gives each histogram's total and percentiles" },
	{ 0 },
};

static const char doc[] =
"Summarize on-CPU time per task as a histogram.\n"
"\v"
"On-CPU time is the time from a task's switch onto a CPU to its switch off\n"
"it (it blocked, or was preempted); with -O, off-CPU time, from its switch\n"
"off a CPU to its next switch on (blocked, then waiting to run). The CPUs'\n"
"idle tasks are left out. -u, -c and -n judge a task as it leaves a CPU,\n"
"since only then is it the current task. Up to 10240 processes (-P) or\n"
"threads (-L) per interval; -P names a process by its main thread's comm.\n"
"\n"
"Examples:\n"
"  cpudist              # summarize on-CPU time as a histogram\n"
"  cpudist -O           # summarize off-CPU time as a histogram\n"
"  cpudist 1 10         # print 1 second summaries, 10 times\n"
"  cpudist -mT 1        # 1s summaries, milliseconds, and timestamps\n"
"  cpudist -P           # show each PID separately\n"
"  cpudist -p 185       # trace PID 185 only\n"
"  cpudist -j -- make   # a build's on-CPU times, NDJSON\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)arg;
	(void)state;
	switch (key) {
	case 'O': env.offcpu = true; break;
	case 'm': env.millis = true; break;
	case 'P': env.per_process = true; break;
	case 'L': env.per_thread = true; break;
	case ARGP_KEY_END:
		if (env.per_process && env.per_thread)
			tk_usage_error("options -P/--pids and -L/--tids cannot be combined");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "cpudist",
	.no_print_cgroup = true,
	.doc = doc,
	.options = options,
	.parser = parse,
	.periodic = true,
	.bcc_missing = missing,
};

static const char *unit(void)
{
	return env.millis ? "msecs" : "usecs";
}

/* One histogram: bcc's star bars, or a JSON record. id: the process or
 * thread of -P or -L (then comm is its name), else 0. */
static void print_hist(const unsigned long long *slots, unsigned id, const char *comm)
{
	const char *name = env.per_process ? "pid" : env.per_thread ? "tid" : NULL;
	size_t clen = comm ? strnlen(comm, TK_TASK_COMM_LEN) : 0;
	struct tk_json j;

	if (!tk_opts.json) {
		if (name) {  /* bcc's section line */
			printf("\n%s = %u ", name, id);
			tk_print_safe(stdout, comm, clen);
			putchar('\n');
		}
		tk_hist_print_log2(stdout, slots, CPUDIST_SLOTS, unit());
		return;
	}
	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "histogram");
	tk_json_time(&j);
	tk_json_str(&j, "time_of", env.offcpu ? "off-cpu" : "on-cpu");
	if (name) {
		tk_json_uint(&j, name, id);
		tk_json_strn(&j, "comm", comm, clen);
	}
	tk_hist_json_log2(&j, slots, CPUDIST_SLOTS, unit());
	tk_json_end(&j);
}

/* All tasks: per-CPU slots summed; the counts since the last print are
 * the difference to the last sum, so no increment is lost to a clear. */
static void print_all(struct bpf_map *map)
{
	static unsigned long long last[CPUDIST_SLOTS];
	unsigned long long diff[CPUDIST_SLOTS];

	if (tk_percpu_slots_delta(map, 0, CPUDIST_SLOTS, false, last, diff))
		tk_fail("cannot read the histogram map");
	print_hist(diff, 0, NULL);
}

static int by_id(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

/* Per process or thread, by ID; printed entries are deleted. */
static void print_keyed(struct bpf_map *map)
{
	static unsigned keys[CPUDIST_MAX_KEYS];
	unsigned *prev = NULL, n = 0, i;
	struct cpudist_hist h;
	int fd = bpf_map__fd(map);

	while (n < CPUDIST_MAX_KEYS && !bpf_map_get_next_key(fd, prev, &keys[n]))
		prev = &keys[n++];
	qsort(keys, n, sizeof(keys[0]), by_id);
	for (i = 0; i < n; i++) {
		if (bpf_map_lookup_elem(fd, &keys[i], &h))
			continue;
		bpf_map_delete_elem(fd, &keys[i]);
		print_hist(h.slots, keys[i], h.comm);
	}
}

static void print_interval(void *arg, int seq)
{
	struct cpudist_bpf *skel = arg;
	char buf[16];

	(void)seq;
	if (!tk_opts.json) {
		putchar('\n');
		if (tk_opts.time)
			printf("%-8s\n", tk_time_str(buf, sizeof(buf)));
	}
	if (env.per_process || env.per_thread)
		print_keyed(skel->maps.hists);
	else
		print_all(skel->maps.hist_all);
	fflush(stdout);
}

static int configure(void *s, void *ctx)
{
	struct cpudist_bpf *skel = s;

	(void)ctx;
	skel->rodata->offcpu = env.offcpu;
	skel->rodata->millis = env.millis;
	skel->rodata->per_process = env.per_process;
	skel->rodata->per_thread = env.per_thread;
	TK_SCHED_CHOOSE_START_MAP(skel, sched_switch_tp_btf);
	/* Off-CPU, every sleeping task has a time in the hash; on-CPU
	 * keeps its times per CPU (cpu_run) and never uses it. */
	if (bpf_map__autocreate(skel->maps.start) &&
	    bpf_map__set_max_entries(skel->maps.start, env.offcpu ? 65536 : 1))
		return -1;
	return env.per_process || env.per_thread ? 0 :
	       bpf_map__set_max_entries(skel->maps.hists, 1);
}

TK_SKEL_OPS(cpudist_bpf);

int main(int argc, char **argv)
{
	struct cpudist_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	skel = tk_load(&cpudist_bpf_ops, configure, NULL);
	tk_ready();
	tk_print_intervals(print_interval, skel);
	tk_losses_report(skel->obj);
	cpudist_bpf__destroy(skel);
	return tk_exit_status();
}
