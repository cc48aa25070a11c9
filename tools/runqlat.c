/* runqlat: summarize run queue (scheduler) latency as a histogram. */
#include <bpf/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runqlat.h"
#include "runqlat.skel.h"
#include "tracekit.h"

static struct {
	bool millis;
	bool per_process;
	bool per_thread;
	bool per_pidns;
} env;

enum { K_PIDNSS = 0x2000 };

static const struct argp_option options[] = {
	{ "milliseconds", 'm', 0, 0, "Millisecond histogram", 0 },
	{ "pids", 'P', 0, 0, "Print a histogram per process ID", 0 },
	{ "tids", 'L', 0, 0, "Print a histogram per thread ID", 0 },
	{ "pidnss", K_PIDNSS, 0, 0,
	  "Print a histogram per PID namespace (its inode number)", 0 },
	{ 0 },
};

static const char doc[] =
"Summarize run queue (scheduler) latency as a histogram.\n"
"\v"
"Run queue latency is the time from a task becoming runnable (woken, or\n"
"preempted) to it running on a CPU. -u, -c and -n judge a task as it was\n"
"when it last left a CPU (a new task by its parent), since only then is it\n"
"the current task: the first wait of a task that was asleep when tracing\n"
"began is not seen. Up to 10240 processes (-P), threads (-L), PID\n"
"namespaces (--pidnss) or cgroups (--print-cgroup) per interval. --pidnss\n"
"files a wait under the namespace of the task that waited (as\n"
"libbpf-tools; bcc's Python tool: of the task it replaced on the CPU),\n"
"named by the inode of /proc/PID/ns/pid. --print-cgroup gives a histogram\n"
"per cgroup v2 of the task that waited, headed 'cgroup = PATH'; with -P,\n"
"-L or --pidnss, one per process, thread or namespace and cgroup.\n"
"\n"
"Examples:\n"
"  runqlat            # summarize run queue latency until Ctrl-C\n"
"  runqlat -m 5       # millisecond histogram every 5 seconds\n"
"  runqlat -T 1 10    # 1 second summaries with a time line, 10 times\n"
"  runqlat -p 185     # only process 185\n"
"  runqlat -P         # a histogram per process ID\n"
"  runqlat -L         # a histogram per thread ID\n"
"  runqlat --pidnss   # a histogram per PID namespace (containers)\n"
"  runqlat --print-cgroup   # a histogram per cgroup (systemd units)\n"
"  runqlat -c /sys/fs/cgroup/unified/system.slice  # only this cgroup\n"
"  runqlat -j 1 | jq .p99  # NDJSON\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)arg;
	switch (key) {
	case 'm': env.millis = true; break;
	case 'P': env.per_process = true; break;
	case 'L': env.per_thread = true; break;
	case K_PIDNSS: env.per_pidns = true; break;
	case ARGP_KEY_END:
		if (env.per_process + env.per_thread + env.per_pidns > 1)
			tk_usage_error("options -P/--pids, -L/--tids and --pidnss cannot be combined");
		(void)state;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "runqlat",
	.doc = doc,
	.options = options,
	.parser = parse,
	.periodic = true,
};

static const char *unit(void)
{
	return env.millis ? "msecs" : "usecs";
}

/* A histogram per process, thread, namespace or cgroup (in the map
 * hists), rather than one of all tasks (hist_all). */
static bool keyed(void)
{
	return env.per_process || env.per_thread || env.per_pidns ||
	       tk_opts.filter.cgroup_ids;
}

/* The name of a keyed histogram's own id: "pid", "tid", "pidns"; NULL
 * with --print-cgroup alone. */
static const char *id_name(void)
{
	return env.per_process ? "pid" : env.per_thread ? "tid" :
	       env.per_pidns ? "pidns" : NULL;
}

/* One histogram, of key k (NULL: of all tasks): bcc's star bars, or a
 * JSON record. comm: with -P and -L. */
static void print_hist(const unsigned long long *slots,
		       const struct runqlat_key *k, const char *comm)
{
	size_t clen = comm ? strnlen(comm, TK_TASK_COMM_LEN) : 0;
	const char *name = k ? id_name() : NULL;
	struct tk_json j;

	if (!tk_opts.json) {
		if (k) {  /* bcc's section line; pidns has no comm */
			putchar('\n');
			if (name)
				printf("%s = %u", name, k->id);
			if (comm) {
				putchar(' ');
				tk_print_safe(stdout, comm, clen);
			}
			if (tk_opts.filter.cgroup_ids)
				tk_hist_print_cgroup_label(stdout, name != NULL,
							   k->cgroup_id);
			putchar('\n');
		}
		tk_hist_print_log2(stdout, slots, RUNQLAT_SLOTS, unit());
		return;
	}
	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "histogram");
	tk_json_time(&j);
	if (name)
		tk_json_uint(&j, name, k->id);
	if (comm)
		tk_json_strn(&j, "comm", comm, clen);
	if (k && tk_opts.filter.cgroup_ids)
		tk_json_cgroup(&j, k->cgroup_id);
	tk_hist_json_log2(&j, slots, RUNQLAT_SLOTS, unit());
	tk_json_end(&j);
}

/* All tasks: per-CPU slots summed; the counts since the last print are
 * the difference to the last sum, so no increment is lost to a clear. */
static void print_all(struct bpf_map *map)
{
	static unsigned long long last[RUNQLAT_SLOTS];
	unsigned long long diff[RUNQLAT_SLOTS];

	if (tk_percpu_slots_delta(map, 0, RUNQLAT_SLOTS, false, last, diff))
		tk_fail("cannot read the histogram map");
	print_hist(diff, NULL, NULL);
}

/* By ID, then by cgroup path. */
static int by_key(const void *a, const void *b)
{
	const struct runqlat_key *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return tk_hist_cgroup_cmp(x->cgroup_id, y->cgroup_id);
}

/* Per process, thread, namespace and/or cgroup, in key order; printed
 * entries are deleted. */
static void print_keyed(struct bpf_map *map)
{
	static struct runqlat_key keys[RUNQLAT_MAX_KEYS];
	struct runqlat_key *prev = NULL;
	unsigned n = 0, i;
	struct runqlat_hist h;
	int fd = bpf_map__fd(map);

	while (n < RUNQLAT_MAX_KEYS && !bpf_map_get_next_key(fd, prev, &keys[n]))
		prev = &keys[n++];
	qsort(keys, n, sizeof(keys[0]), by_key);
	for (i = 0; i < n; i++) {
		if (bpf_map_lookup_elem(fd, &keys[i], &h))
			continue;
		bpf_map_delete_elem(fd, &keys[i]);
		print_hist(h.slots, &keys[i],
			   env.per_process || env.per_thread ? h.comm : NULL);
	}
}

static void print_interval(void *arg, int seq)
{
	struct runqlat_bpf *skel = arg;
	char buf[16];

	(void)seq;  /* tk_print_intervals' count: not printed */

	if (!tk_opts.json) {
		putchar('\n');
		if (tk_opts.time)
			printf("%-8s\n", tk_time_str(buf, sizeof(buf)));
	}
	if (keyed())
		print_keyed(skel->maps.hists);
	else
		print_all(skel->maps.hist_all);
	fflush(stdout);
}

static int configure(void *s, void *ctx)
{
	struct runqlat_bpf *skel = s;

	(void)ctx;
	skel->rodata->millis = env.millis;
	skel->rodata->per_process = env.per_process;
	skel->rodata->per_thread = env.per_thread;
	skel->rodata->per_pidns = env.per_pidns;
	RUNQLAT_CHOOSE_START_MAP(skel);
	return keyed() ? 0 : bpf_map__set_max_entries(skel->maps.hists, 1);
}

TK_SKEL_OPS(runqlat_bpf);

int main(int argc, char **argv)
{
	struct runqlat_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	skel = tk_load(&runqlat_bpf_ops, configure, NULL);
	tk_ready();
	tk_print_intervals(print_interval, skel);
	tk_losses_report(skel->obj);
	runqlat_bpf__destroy(skel);
	return tk_exit_status();
}
