/* hardirqs: summarize hard interrupt handler time (or runs) per interrupt. */
#include <bpf/bpf.h>
#include <stdint.h>
#include <stdio.h>

#include "hardirqs.skel.h"
#include "irqstat.h"
#include "tk_irq.h"
#include "tracekit.h"

static const struct argp_option options[] = {
	{ "count", 'C', 0, 0, "Show event counts instead of timing", 0 },
	{ "dist", 'd', 0, 0, "Show distributions as histograms", 0 },
	{ "nanoseconds", 'N', 0, 0, "Output in nanoseconds", 0 },
	{ "cpu", 'c', "CPU", 0, "Trace this CPU only", 0 },
	{ 0 },
};

static const char doc[] =
"Summarize hard irq event time: the time in each interrupt's handler.\n"
"\v"
"Per interrupt handler, by its action's name (the last column of\n"
"/proc/interrupts): the total time spent in it (default), its runs (-C)\n"
"or a histogram of its run times (-d), from the tracepoints\n"
"irq:irq_handler_entry and irq:irq_handler_exit. Every run counts, also\n"
"one that returned IRQ_NONE (a shared line's other handlers: they ran;\n"
"bcc's Python tool leaves them out, libbpf-tools counts them). The\n"
"interrupts that the kernel handles without an irqaction are not seen:\n"
"the local timer (LOC), rescheduling and function call IPIs (RES, CAL),\n"
"IRQ work (IWI) and the other named rows at the end of /proc/interrupts;\n"
"on a VM the local timer is such an interrupt. Interrupts are no task's:\n"
"there are no task filters (-p, -u, --cgroup, -- COMMAND, ...); -c CPU\n"
"keeps one CPU's. Names are cut at 31 bytes, as bcc cuts them. JSON: a\n"
"record per interrupt and interval (\"type\":\"hardirq\", \"hardirq\",\n"
"\"count\", \"total_ns\"; with -d \"type\":\"histogram\" and its buckets).\n"
"\n"
"Examples:\n"
"  hardirqs            # sum hard irq event time until Ctrl-C\n"
"  hardirqs -d         # show hard irq event time as histograms\n"
"  hardirqs -C 1 10    # runs per interrupt, every second, 10 times\n"
"  hardirqs -NT 1      # 1 s summaries, nanoseconds, and timestamps\n"
"  hardirqs -c 1       # sum hard irq event time on CPU 1 only\n"
"  hardirqs -j 5       # NDJSON every 5 seconds\n";

static const struct tk_tool tool = {
	.name = "hardirqs",
	.doc = doc,
	.options = options,
	.parser = tk_irq_parse,
	.periodic = true,
	.bcc_missing = tk_irq_bcc_missing,
};

/* The map of each action's name, by its address (bpf/hardirqs.bpf.c). */
static int names_fd = -1;

static void loaded(struct bpf_object *obj)
{
	names_fd = bpf_object__find_map_fd_by_name(obj, "irq_names");
}

static void name(const void *key, char *buf, size_t len)
{
	char name[TK_IRQ_NAME_LEN + 1] = "";

	/* Written with the action's totals: always there. */
	if (bpf_map_lookup_elem(names_fd, key, name))
		snprintf(name, sizeof(name), "?");
	snprintf(buf, len, "%s", name);
}

static const struct tk_irq_kind kind = {
	.what = "hard irq", .count_off = "irq_handler_entry",   /* -C: counted at the other end */
	.count_option = "-C/--count",
	.column = "HARDIRQ", .width = 26, .section = "hardirq",
	.key_size = sizeof(uint64_t), .loaded = loaded, .name = name,
};

TK_SKEL_OPS(hardirqs_bpf);

int main(int argc, char **argv)
{
	return tk_irq_main(&tool, argc, argv, &hardirqs_bpf_ops, &kind);
}
