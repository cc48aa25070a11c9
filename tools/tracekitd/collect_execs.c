/* execs: execsnoop's events, counted by the exec'd program's comm (with a
 * cap on distinct comms), and failed execs by errno. */
#include "tracekitd.h"

#include <string.h>

#include "execsnoop.h"
#include "execsnoop.skel.h"
#include "prom.h"
#include "series.h"
#include "tracekit.h"

static struct tk_series *by_comm, *failed;

static int on_event(void *ctx, const void *data, size_t size)
{
	const struct exec_event *e = data;
	char comm[TK_TASK_COMM_LEN + 1];
	const char *name;

	(void)ctx;
	if (size < offsetof(struct exec_event, args))
		return 0;
	if (e->ret == 0) {
		memcpy(comm, e->comm, TK_TASK_COMM_LEN);
		comm[TK_TASK_COMM_LEN] = 0;
		tk_series_add(by_comm, comm, 1);
	} else {
		name = tk_errno_name(e->ret);
		tk_series_add(failed, name ? name : "unknown", 1);
	}
	return 0;
}

COLLECTOR_SKELETON(execsnoop_bpf, NULL);

static int start(const struct config *c, char *err, size_t errlen)
{
	tk_series_free(by_comm);
	tk_series_free(failed);
	by_comm = tk_series_new(c->max_series);
	failed = tk_series_new(c->max_series);
	if (!by_comm || !failed) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (load_skel(err, errlen))
		return -1;
	tk_events_open(skel->obj, on_event, NULL);
	return 0;
}

static void poll_events(void)
{
	if (skel)
		tk_events_poll(0);
}

struct emit {
	FILE *f;
	const char *metric, *label;
};

static void emit_one(const char *key, unsigned long long n, void *ctx)
{
	const struct emit *e = ctx;

	tk_prom_sample(e->f, e->metric, n, e->label, key, NULL);
}

static void write_series(FILE *f, const char *metric, const char *label,
			 const struct tk_series *s)
{
	struct emit e = { f, metric, label };

	tk_series_foreach(s, emit_one, &e);
	if (tk_series_overflow(s))
		tk_prom_sample(f, metric, tk_series_overflow(s), label,
			       TRACEKITD_OVERFLOW_LABEL, NULL);
	metrics_note_dropped(metric, tk_series_overflow(s));
}

static void write_metrics(FILE *f)
{
	tk_events_poll(0);  /* count what is already in the buffer */
	tk_prom_family(f, "tracekit_execs_total", "counter",
		       "Successful execs, by the comm of the program exec'd (execsnoop).");
	write_series(f, "tracekit_execs_total", "comm", by_comm);
	tk_prom_family(f, "tracekit_exec_failures_total", "counter",
		       "Failed execs, by errno.");
	write_series(f, "tracekit_exec_failures_total", "errno", failed);
}

static void stop(void)
{
	if (skel)
		tk_events_close();
	unload_skel();
}

const struct collector collector_execs = {
	.name = "execs",
	.help = "execs by the program's comm, failed execs by errno (execsnoop)",
	.start = start,
	.poll = poll_events,
	.write = write_metrics,
	.stop = stop,
	.object = object,
};
