/* hardirqs: time in, and runs of, each hard interrupt handler by its
 * action's name, with hardirqs' BPF (irq:irq_handler_entry/exit). */
#include "tracekitd.h"

#include "hardirqs.skel.h"
#include "tracekit.h"

COLLECTOR_SKELETON(hardirqs_bpf, NULL);

static int start(const struct config *c, char *err, size_t errlen)
{
	(void)c;
	return load_skel(err, errlen);
}

static void write_metrics(FILE *f)
{
	irqs_write(f, skel->maps.irqs, skel->maps.irq_names, "hardirqs", "irq",
		   "tracekit_hardirq_seconds_total",
		   "Time in hard interrupt handlers, by the handler's name as /proc/interrupts shows it (hardirqs).",
		   "tracekit_hardirqs_total",
		   "Runs of hard interrupt handlers, by the handler's name; a shared line's every handler counts (hardirqs).");
}

static void stop(void)
{
	unload_skel();
}

const struct collector collector_hardirqs = {
	.name = "hardirqs",
	.help = "time in and runs of hard interrupt handlers (hardirqs)",
	.start = start,
	.write = write_metrics,
	.stop = stop,
	.object = object,
};
