/* runqlat: the all-tasks run queue latency histogram, as a Prometheus
 * histogram in seconds. */
#include "tracekitd.h"

#include <string.h>

#include "prom.h"
#include "runqlat.h"
#include "runqlat.skel.h"
#include "tracekit.h"

static int configure(void *s, void *ctx)
{
	struct runqlat_bpf *sk = s;

	(void)ctx;
	bpf_map__set_max_entries(sk->maps.hists, 1);  /* not per process */
	RUNQLAT_CHOOSE_START_MAP(sk);
	return 0;
}

COLLECTOR_SKELETON(runqlat_bpf, configure);

static int start(const struct config *c, char *err, size_t errlen)
{
	(void)c;
	return load_skel(err, errlen);
}

static void add(const void *key, const char *vals, int ncpu, size_t vsize,
		void *ctx)
{
	struct runqlat_slots *sum = ctx;
	int c, b;

	(void)key;
	for (c = 0; c < ncpu; c++) {
		const struct runqlat_slots *v = (const void *)(vals + c * vsize);

		for (b = 0; b < RUNQLAT_SLOTS; b++)
			sum->slots[b] += v->slots[b];
		sum->sum_ns += v->sum_ns;
	}
}

static void write_metrics(FILE *f)
{
	struct runqlat_slots sum;
	int err;

	memset(&sum, 0, sizeof(sum));
	err = tk_percpu_map_read(skel->maps.hist_all, add, &sum);
	if (err) {
		tk_warn("runqlat: cannot read map hist_all: %s", strerror(-err));
		return;
	}
	tk_prom_family(f, "tracekit_runqueue_latency_seconds", "histogram",
		       "Time tasks waited on a CPU run queue, from wakeup or preemption to running (runqlat).");
	/* Buckets of whole microseconds: le = 2^(b+1) us. */
	tk_prom_log2_histogram(f, "tracekit_runqueue_latency_seconds", sum.slots,
			       RUNQLAT_SLOTS, 1e-6, sum.sum_ns / 1e9, NULL, 0);
}

static void stop(void)
{
	unload_skel();
}

const struct collector collector_runqlat = {
	.name = "runqlat",
	.help = "run queue latency histogram (runqlat)",
	.start = start,
	.write = write_metrics,
	.stop = stop,
	.object = object,
};
