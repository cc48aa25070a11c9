/* softirqs: summarize softirq time (or runs) per vector. */
#include <stdio.h>

#include "irqstat.h"
#include "softirqs.skel.h"
#include "tracekit.h"

static const struct argp_option options[] = {
	{ "events", 'C', 0, 0, "Show the number of soft irq events", 0 },
	{ "dist", 'd', 0, 0, "Show distributions as histograms", 0 },
	{ "nanoseconds", 'N', 0, 0, "Output in nanoseconds", 0 },
	{ "cpu", 'c', "CPU", 0, "Trace this CPU only", 0 },
	{ 0 },
};

static const char doc[] =
"Summarize soft irq event time: the time in each softirq vector.\n"
"\v"
"Per softirq vector (hi, timer, net_tx, net_rx, block, irq_poll,\n"
"tasklet, sched, hrtimer, rcu: the rows of /proc/softirqs, as bcc names\n"
"them): the total time spent in it (default), its runs (-C, counted where\n"
"/proc/softirqs counts them, at irq:softirq_entry) or a histogram of its\n"
"run times (-d), from the tracepoints irq:softirq_entry and\n"
"irq:softirq_exit. Softirqs are no task's (they run after an interrupt,\n"
"or in ksoftirqd for whoever raised them): there are no task filters (-p,\n"
"-u, --cgroup, -- COMMAND, ...); -c CPU keeps one CPU's. JSON: a record\n"
"per vector and interval (\"type\":\"softirq\", \"softirq\", \"vec\",\n"
"\"count\", \"total_ns\"; with -d \"type\":\"histogram\" and its buckets).\n"
"\n"
"Examples:\n"
"  softirqs            # sum soft irq event time until Ctrl-C\n"
"  softirqs -C         # show the number of soft irq events\n"
"  softirqs -d         # show soft irq event time as histograms\n"
"  softirqs 1 10       # print 1 second summaries, 10 times\n"
"  softirqs -NT 1      # 1 s summaries, nanoseconds, and timestamps\n"
"  softirqs -c 1       # sum soft irq event time on CPU 1 only\n";

static const struct tk_tool tool = {
	.name = "softirqs",
	.doc = doc,
	.options = options,
	.parser = tk_irq_parse,
	.periodic = true,
	.bcc_missing = tk_irq_bcc_missing,
};

static void name(const void *key, char *buf, size_t len)
{
	tk_softirq_name(*(const unsigned *)key, buf, len);
}

static int by_vec(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

static void json_vec(struct tk_json *j, const void *key)
{
	tk_json_uint(j, "vec", *(const unsigned *)key);
}

static const struct tk_irq_kind kind = {
	.what = "soft irq", .count_off = "softirq_exit",   /* -C: counted at the other end */
	.count_option = "-C/--events",
	.column = "SOFTIRQ", .width = 16, .section = "softirq",
	.key_size = sizeof(unsigned), .name = name, .cmp = by_vec,
	.json_key = json_vec,
};

TK_SKEL_OPS(softirqs_bpf);

int main(int argc, char **argv)
{
	return tk_irq_main(&tool, argc, argv, &softirqs_bpf_ops, &kind);
}
