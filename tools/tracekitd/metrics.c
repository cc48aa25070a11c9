/* What /metrics serves: each running collector's metrics, then
 * tracekitd's own health (collectors up, probes and their attach method,
 * losses, map fullness, series the caps turned away, BPF run time when
 * kernel.bpf_stats_enabled is on) and the process's. Called with the
 * state lock held. */
#include "tracekitd.h"

#include <bpf/bpf.h>
#include <dirent.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "prom.h"
#include "tracekit.h"

#define MAX_PROBES 16
#define MAX_DROPPED 16

struct probe {
	char name[64];
	char method[16];
};

static struct health {
	enum { STOPPED, RUNNING, FAILED } state;
	char why[256];
	struct probe probes[MAX_PROBES];
	int n_probes;
} health[N_COLLECTORS];

static struct {
	const char *metric;
	unsigned long long n;
} dropped[MAX_DROPPED];
static int n_dropped;

void health_record(enum collector_id id, struct bpf_object *obj)
{
	struct health *h = &health[id];
	struct bpf_program *prog;

	memset(h, 0, sizeof(*h));
	h->state = RUNNING;
	bpf_object__for_each_program(prog, obj) {
		const char *name = bpf_program__name(prog);
		const char *method = tk_prog_method(prog);
		size_t nl = strlen(name), ml = strlen(method);
		struct probe *p;

		if (!bpf_program__autoload(prog) || h->n_probes == MAX_PROBES)
			continue;
		p = &h->probes[h->n_probes++];
		/* The probe is the program's name without its method. */
		if (nl > ml + 1 && !strcmp(name + nl - ml, method) &&
		    name[nl - ml - 1] == '_')
			nl -= ml + 1;
		snprintf(p->name, sizeof(p->name), "%.*s", (int)nl, name);
		snprintf(p->method, sizeof(p->method), "%s", method);
	}
}

void health_failed(enum collector_id id, const char *why)
{
	memset(&health[id], 0, sizeof(health[id]));
	health[id].state = FAILED;
	snprintf(health[id].why, sizeof(health[id].why), "%s", why);
}

void health_stopped(enum collector_id id)
{
	memset(&health[id], 0, sizeof(health[id]));
}

void metrics_note_dropped(const char *metric, unsigned long long n)
{
	int i;

	for (i = 0; i < n_dropped; i++)
		if (!strcmp(dropped[i].metric, metric)) {
			dropped[i].n = n;
			return;
		}
	if (n_dropped < MAX_DROPPED) {
		dropped[n_dropped].metric = metric;
		dropped[n_dropped++].n = n;
	}
}

static bool bpf_stats_enabled(void)
{
	return tk_read_sysctl("/proc/sys/kernel/bpf_stats_enabled", 0) == 1;
}

/* Entries in a hash map: its keys walked (maps here hold at most tens of
 * thousands; a scrape every few seconds can afford it). */
static unsigned long long map_entries(struct bpf_map *map)
{
	int fd = bpf_map__fd(map);
	unsigned long long n = 0, max = bpf_map__max_entries(map);
	char key[256], prev[256];
	size_t ksize = bpf_map__key_size(map);
	bool first = true;

	if (ksize > sizeof(key))
		return 0;
	while (n < max && !bpf_map_get_next_key(fd, first ? NULL : prev, key)) {
		memcpy(prev, key, ksize);
		first = false;
		n++;
	}
	return n;
}

static bool is_hash(struct bpf_map *map)
{
	switch (bpf_map__type(map)) {
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
		return true;
	default:
		return false;
	}
}

static void write_collector_health(FILE *f, const struct config *c)
{
	int i, j;

	tk_prom_family(f, "tracekit_collector_up", "gauge",
		       "1 when the collector is enabled and attached; 0 when it is enabled but could not start on this kernel (see the log).");
	for (i = 0; i < N_COLLECTORS; i++)
		if (c->enabled[i])
			tk_prom_sample(f, "tracekit_collector_up",
				       health[i].state == RUNNING,
				       "collector", collectors[i]->name, NULL);
	tk_prom_family(f, "tracekit_probe_attached", "gauge",
		       "Probes attached, by collector, probe and attach method (tp_btf, raw_tp, tp, fentry, kprobe, ...).");
	for (i = 0; i < N_COLLECTORS; i++)
		for (j = 0; j < health[i].n_probes; j++)
			tk_prom_sample(f, "tracekit_probe_attached", 1,
				       "collector", collectors[i]->name,
				       "probe", health[i].probes[j].name,
				       "method", health[i].probes[j].method, NULL);
}

/* The loss counters, one family each, by collector. */
static const struct {
	const char *name, *help;
	size_t off;   /* of the count in struct tk_losses */
} loss_families[] = {
	{ "tracekit_events_lost_total",
	  "Events the BPF side could not hand to tracekitd (buffer full).",
	  offsetof(struct tk_losses, events) },
	{ "tracekit_map_insert_failures_total",
	  "Map inserts that failed because a BPF map was full.",
	  offsetof(struct tk_losses, map_full) },
	{ "tracekit_probe_runs_missed_total",
	  "Runs of a collector's BPF programs the kernel skipped: the program was already running on that CPU (Linux 5.12+), or, noticed afterwards, an event the kernel did not deliver.",
	  offsetof(struct tk_losses, runs_missed) },
};

static void write_losses(FILE *f)
{
	struct tk_losses l[N_COLLECTORS];
	struct bpf_object *obj;
	size_t k;
	int i;

	for (i = 0; i < N_COLLECTORS; i++)
		if ((obj = collectors[i]->object()))
			tk_losses_read(obj, &l[i]);
	for (k = 0; k < sizeof(loss_families) / sizeof(loss_families[0]); k++) {
		tk_prom_family(f, loss_families[k].name, "counter", loss_families[k].help);
		for (i = 0; i < N_COLLECTORS; i++)
			if (collectors[i]->object())
				tk_prom_sample(f, loss_families[k].name,
					       *(const unsigned long long *)((const char *)&l[i] +
									     loss_families[k].off),
					       "collector", collectors[i]->name, NULL);
	}
}

static void write_maps(FILE *f)
{
	static const char *const names[2] = {
		"tracekit_map_entries", "tracekit_map_max_entries",
	};
	static const char *const helps[2] = {
		"Entries in each BPF hash map of a collector.",
		"Capacity of each BPF hash map of a collector.",
	};
	struct bpf_object *obj;
	struct bpf_map *map;
	int i, k;

	for (k = 0; k < 2; k++) {
		tk_prom_family(f, names[k], "gauge", helps[k]);
		for (i = 0; i < N_COLLECTORS; i++) {
			if (!(obj = collectors[i]->object()))
				continue;
			bpf_object__for_each_map(map, obj) {
				if (!is_hash(map) || bpf_map__fd(map) < 0)
					continue;
				tk_prom_sample(f, names[k],
					       k ? bpf_map__max_entries(map) : map_entries(map),
					       "collector", collectors[i]->name,
					       "map", bpf_map__name(map), NULL);
			}
		}
	}
}

static void write_bpf_stats(FILE *f)
{
	bool on = bpf_stats_enabled();
	struct bpf_prog_info info;
	struct bpf_program *prog;
	struct bpf_object *obj;
	__u32 len;
	int i, k;

	tk_prom_family(f, "tracekit_bpf_stats_enabled", "gauge",
		       "1 when kernel.bpf_stats_enabled is on, and BPF run time is counted.");
	tk_prom_sample(f, "tracekit_bpf_stats_enabled", on, NULL);
	if (!on)
		return;
	for (k = 0; k < 2; k++) {
		tk_prom_family(f, k ? "tracekit_bpf_runs_total" : "tracekit_bpf_run_seconds_total",
			       "counter", k ? "Runs of each BPF program, while kernel.bpf_stats_enabled was on." :
			       "Time spent in each BPF program, while kernel.bpf_stats_enabled was on.");
		for (i = 0; i < N_COLLECTORS; i++) {
			if (!(obj = collectors[i]->object()))
				continue;
			bpf_object__for_each_program(prog, obj) {
				if (bpf_program__fd(prog) < 0)
					continue;
				memset(&info, 0, sizeof(info));
				len = sizeof(info);
				if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
					continue;
				tk_prom_sample(f, k ? "tracekit_bpf_runs_total" :
					       "tracekit_bpf_run_seconds_total",
					       k ? (double)info.run_cnt : info.run_time_ns / 1e9,
					       "collector", collectors[i]->name,
					       "program", bpf_program__name(prog), NULL);
			}
		}
	}
}

static void write_dropped(FILE *f, const struct config *c)
{
	int i;

	tk_prom_family(f, "tracekit_series_limit", "gauge",
		       "Series kept per labelled metric (max_series); the rest go to one series labelled " TRACEKITD_OVERFLOW_LABEL ".");
	tk_prom_sample(f, "tracekit_series_limit", c->max_series, NULL);
	tk_prom_family(f, "tracekit_series_dropped_total", "counter",
		       "Counts folded into the " TRACEKITD_OVERFLOW_LABEL " series because a metric had max_series series already.");
	for (i = 0; i < n_dropped; i++)
		tk_prom_sample(f, "tracekit_series_dropped_total", dropped[i].n,
			       "metric", dropped[i].metric, NULL);
}

static void write_process(FILE *f)
{
	struct rusage ru;
	unsigned long size, resident;
	long fds = 0;
	DIR *d;
	FILE *sf = fopen("/proc/self/statm", "re");

	if (sf) {
		if (fscanf(sf, "%lu %lu", &size, &resident) == 2) {
			tk_prom_family(f, "process_resident_memory_bytes", "gauge",
				       "Resident memory size in bytes.");
			tk_prom_sample(f, "process_resident_memory_bytes",
				       (double)resident * getpagesize(), NULL);
		}
		fclose(sf);
	}
	if (!getrusage(RUSAGE_SELF, &ru)) {
		tk_prom_family(f, "process_cpu_seconds_total", "counter",
			       "User and system CPU time spent in seconds.");
		tk_prom_sample(f, "process_cpu_seconds_total",
			       ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
			       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6, NULL);
	}
	if ((d = opendir("/proc/self/fd"))) {
		while (readdir(d))
			fds++;
		closedir(d);
		tk_prom_family(f, "process_open_fds", "gauge",
			       "Number of open file descriptors.");
		tk_prom_sample(f, "process_open_fds", fds - 3, NULL);  /* ., .., the dir */
	}
}

void metrics_write(FILE *f, const struct config *c)
{
	int i;

	for (i = 0; i < N_COLLECTORS; i++)
		if (collectors[i]->object())
			collectors[i]->write(f);
	write_collector_health(f, c);
	write_losses(f);
	write_maps(f);
	write_dropped(f, c);
	write_bpf_stats(f);
	write_process(f);
}

void capped_sample(FILE *f, struct capped *c, unsigned long long n,
		   const char *const *labels, int nlabels)
{
	if (c->series == current_config()->max_series) {
		c->overflow += n;
		return;
	}
	c->series++;
	tk_prom_sample_v(f, c->metric, n, labels, nlabels);
}

void capped_end(FILE *f, struct capped *c, const char *const *names, int nlabels)
{
	const char *labels[16];
	int i;

	if (c->overflow && nlabels <= 8) {
		for (i = 0; i < nlabels; i++) {
			labels[2 * i] = names[i];
			labels[2 * i + 1] = TRACEKITD_OVERFLOW_LABEL;
		}
		tk_prom_sample_v(f, c->metric, c->overflow, labels, nlabels);
	}
	metrics_note_dropped(c->metric, c->overflow);
}
