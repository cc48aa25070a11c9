/* runqlen: the run queue length, sampled on every CPU 99 times a second
 * (runqlen's BPF on a cpu-clock perf event: the tasks waiting on the
 * sampled CPU's CFS run queue, the running one not counted), as one
 * Prometheus histogram of all CPUs' samples: a label per CPU would grow
 * with the machine. */
#include "tracekitd.h"

#include <string.h>

#include "perfevent.h"
#include "prom.h"
#include "runqlen.h"
#include "tracekit.h"
#include "runqlen.skel.h"  /* after tracekit.h: its rodata holds a tk_filter */

#define RUNQLEN_HZ 99   /* bcc's runqlen's default; off step with timers */

COLLECTOR_SKELETON(runqlen_bpf, NULL);

static int start(const struct config *c, char *err, size_t errlen)
{
	(void)c;
	tk_set_perf_event_hz(RUNQLEN_HZ, NULL);
	return load_skel(err, errlen);
}

static void add(const void *key, const char *vals, int ncpu, size_t vsize,
		void *ctx)
{
	struct runqlen_slots *sum = ctx;
	int c, b;

	(void)key;
	for (c = 0; c < ncpu; c++) {
		const struct runqlen_slots *v = (const void *)(vals + c * vsize);

		for (b = 0; b < RUNQLEN_SLOTS; b++)
			sum->slots[b] += v->slots[b];
	}
}

static void write_metrics(FILE *f)
{
	/* The bucket bounds written (lengths): a few, all below the last
	 * slot, which holds RUNQLEN_SLOTS - 1 and longer. */
	static const int les[] = { 0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 30 };
	static const char *const name = "tracekit_runqueue_length";
	struct runqlen_slots sum;
	unsigned long long cum = 0, total = 0;
	double len_sum = 0;
	char le[16], series[64];
	size_t i;
	int b, err;

	memset(&sum, 0, sizeof(sum));
	err = tk_percpu_map_read(skel->maps.hist, add, &sum);
	if (err) {
		tk_warn("runqlen: cannot read map hist: %s", strerror(-err));
		return;
	}
	for (b = 0; b < RUNQLEN_SLOTS; b++) {
		total += sum.slots[b];
		len_sum += (double)b * sum.slots[b];
	}
	tk_prom_family(f, name, "histogram",
		       "Tasks waiting on a CPU's run queue, not counting the running one, sampled on every CPU 99 times a second; _sum counts a length of 31 or more as 31 (runqlen).");
	snprintf(series, sizeof(series), "%s_bucket", name);
	for (i = 0, b = 0; i < sizeof(les) / sizeof(les[0]); i++) {
		for (; b <= les[i]; b++)
			cum += sum.slots[b];
		snprintf(le, sizeof(le), "%d", les[i]);
		tk_prom_sample(f, series, cum, "le", le, NULL);
	}
	tk_prom_sample(f, series, total, "le", "+Inf", NULL);
	snprintf(series, sizeof(series), "%s_sum", name);
	tk_prom_sample(f, series, len_sum, NULL);
	snprintf(series, sizeof(series), "%s_count", name);
	tk_prom_sample(f, series, total, NULL);
}

static void stop(void)
{
	unload_skel();
}

const struct collector collector_runqlen = {
	.name = "runqlen",
	.help = "run queue length histogram, sampled (runqlen)",
	.start = start,
	.write = write_metrics,
	.stop = stop,
	.object = object,
};
