/* cpudist: the all-tasks on-CPU time histogram (each run, from switch in
 * to switch out; idle left out), as a Prometheus histogram in seconds. */
#include "tracekitd.h"

#include <string.h>

#include "cpudist.h"
#include "cpudist.skel.h"
#include "prom.h"
#include "tracekit.h"

static int configure(void *s, void *ctx)
{
	struct cpudist_bpf *sk = s;

	(void)ctx;
	bpf_map__set_max_entries(sk->maps.hists, 1);  /* not per process */
	TK_SCHED_CHOOSE_START_MAP(sk, sched_switch_tp_btf);
	/* On-CPU times are kept per CPU (cpu_run): the hash is unused. */
	bpf_map__set_max_entries(sk->maps.start, 1);
	return 0;
}

COLLECTOR_SKELETON(cpudist_bpf, configure);

static int start(const struct config *c, char *err, size_t errlen)
{
	(void)c;
	return load_skel(err, errlen);
}

static void add(const void *key, const char *vals, int ncpu, size_t vsize,
		void *ctx)
{
	struct cpudist_slots *sum = ctx;
	int c, b;

	(void)key;
	for (c = 0; c < ncpu; c++) {
		const struct cpudist_slots *v = (const void *)(vals + c * vsize);

		for (b = 0; b < CPUDIST_SLOTS; b++)
			sum->slots[b] += v->slots[b];
		sum->sum_ns += v->sum_ns;
	}
}

static void write_metrics(FILE *f)
{
	struct cpudist_slots sum;
	int err;

	memset(&sum, 0, sizeof(sum));
	err = tk_percpu_map_read(skel->maps.hist_all, add, &sum);
	if (err) {
		tk_warn("cpudist: cannot read map hist_all: %s", strerror(-err));
		return;
	}
	tk_prom_family(f, "tracekit_oncpu_seconds", "histogram",
		       "Time tasks ran on a CPU each time they ran, from switch in to switch out (cpudist).");
	/* Buckets of whole microseconds: le = 2^(b+1) us. */
	tk_prom_log2_histogram(f, "tracekit_oncpu_seconds", sum.slots,
			       CPUDIST_SLOTS, 1e-6, sum.sum_ns / 1e9, NULL, 0);
}

static void stop(void)
{
	unload_skel();
}

const struct collector collector_cpudist = {
	.name = "cpudist",
	.help = "on-CPU time per run histogram (cpudist)",
	.start = start,
	.write = write_metrics,
	.stop = stop,
	.object = object,
	.off_by_default = true,
};
