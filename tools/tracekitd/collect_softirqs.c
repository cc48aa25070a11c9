/* softirqs: time in, and runs of, each softirq vector, with softirqs'
 * BPF (irq:softirq_entry/exit). */
#include "tracekitd.h"

#include "softirqs.skel.h"
#include "tracekit.h"

COLLECTOR_SKELETON(softirqs_bpf, NULL);

static int start(const struct config *c, char *err, size_t errlen)
{
	(void)c;
	return load_skel(err, errlen);
}

static void write_metrics(FILE *f)
{
	irqs_write(f, skel->maps.irqs, NULL, "softirqs", "vector",
		   "tracekit_softirq_seconds_total",
		   "Time in softirqs, by vector as /proc/softirqs names them, lower case (softirqs).",
		   "tracekit_softirqs_total",
		   "Softirq runs whose start and end were seen, by vector (softirqs).");
}

static void stop(void)
{
	unload_skel();
}

const struct collector collector_softirqs = {
	.name = "softirqs",
	.help = "time in and runs of softirqs by vector (softirqs)",
	.start = start,
	.write = write_metrics,
	.stop = stop,
	.object = object,
};
