#include "events.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf.h"
#include "json.h"
#include "opts.h"
#include "setup.h"
#include "tk_shared.h"

static int transport = -1;
static unsigned long default_kb = 4096;
static struct ring_buffer *ringbuf;
static struct perf_buffer *perfbuf;
static tk_event_fn event_fn;
static void *event_ctx;
static unsigned long long perf_lost;
static struct bpf_object *events_obj;
static bool draining;
static int stop_rc;

void tk_events_default_kb(unsigned long kb)
{
	default_kb = kb;
}

const char *tk_events_transport_name(void)
{
	return transport == TK_TRANSPORT_PERFBUF ? "perf buffer" : "ring buffer";
}

const char *tk_events_transport_id(void)
{
	return transport == TK_TRANSPORT_PERFBUF ? "perf" : "ringbuf";
}

static int choose_transport(void)
{
	const char *env = getenv("TRACEKIT_TRANSPORT");

	if (env && !strcmp(env, "perf"))
		return TK_TRANSPORT_PERFBUF;
	if (env && *env && strcmp(env, "ringbuf"))
		tk_fail("TRACEKIT_TRANSPORT=%s: unknown transport (ringbuf, perf)", env);
	if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1)
		return TK_TRANSPORT_RINGBUF;
	if (env && *env)
		tk_fail("this kernel has no BPF ring buffer (Linux 5.8+); use TRACEKIT_TRANSPORT=perf");
	return TK_TRANSPORT_PERFBUF;
}

static unsigned long buffer_kb(void)
{
	return tk_opts.buffer_kb ? tk_opts.buffer_kb : default_kb;
}

int tk_events_prepare(struct bpf_object *obj)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, "tk_events");
	unsigned long bytes, size = getpagesize();
	int err;

	if (!map)
		return 0;  /* a tool without events */
	if (transport < 0)
		transport = choose_transport();
	err = tk_set_rodata(obj, "tk_transport", &transport, sizeof(transport));
	if (err)
		return err;
	if (transport == TK_TRANSPORT_RINGBUF) {
		bytes = buffer_kb() * 1024;
		while (size < bytes)  /* a power of two pages */
			size <<= 1;
		return bpf_map__set_max_entries(map, size);
	}
	err = bpf_map__set_type(map, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	if (!err)
		err = bpf_map__set_key_size(map, sizeof(int));
	if (!err)
		err = bpf_map__set_value_size(map, sizeof(int));
	if (!err)
		err = bpf_map__set_max_entries(map, 0);  /* libbpf: one per CPU */
	return err;
}

static int on_ringbuf(void *ctx, void *data, size_t size)
{
	int rc;

	(void)ctx;
	rc = event_fn(event_ctx, data, size);
	if (rc)
		return rc;
	/* libbpf reads the ring until it is empty, which a storm faster than
	 * the reader never lets happen: stop at once on a signal to exit.
	 * (This event was read; libbpf has moved past it.) */
	return tk_exiting() && !draining ? -EINTR : 0;
}

static void on_perf(void *ctx, int cpu, void *data, __u32 size)
{
	(void)ctx;
	(void)cpu;
	if (!stop_rc)
		stop_rc = event_fn(event_ctx, data, size);
}

static void on_perf_lost(void *ctx, int cpu, __u64 n)
{
	(void)ctx;
	(void)cpu;
	perf_lost += n;
}

void tk_events_open(struct bpf_object *obj, tk_event_fn fn, void *ctx)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, "tk_events");
	int fd = bpf_map__fd(map);
	static char outbuf[1 << 14];

	event_fn = fn;
	event_ctx = ctx;
	events_obj = obj;
	draining = false;
	/* One write per batch of events (tk_events_poll flushes), not one per
	 * line: a pipe is line-buffered by tk_init, and in a storm a write
	 * for every event costs the reader more than the event. */
	fflush(stdout);
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	if (transport == TK_TRANSPORT_RINGBUF) {
		ringbuf = ring_buffer__new(fd, on_ringbuf, NULL, NULL);
	} else {
		unsigned long pages = 1, want = buffer_kb() * 1024 / getpagesize();

		while (pages < want)  /* per CPU, a power of two */
			pages <<= 1;
		perfbuf = perf_buffer__new(fd, pages, on_perf, on_perf_lost,
					   NULL, NULL);
	}
	if (!ringbuf && !perfbuf)
		tk_fail("cannot open the %s: %s", tk_events_transport_name(),
			strerror(errno));
}

int tk_events_fd(void)
{
	if (ringbuf)
		return ring_buffer__epoll_fd(ringbuf);
	if (perfbuf)
		return perf_buffer__epoll_fd(perfbuf);
	return -1;
}

void tk_events_close(void)
{
	ring_buffer__free(ringbuf);
	perf_buffer__free(perfbuf);
	ringbuf = NULL;
	perfbuf = NULL;
	perf_lost = 0;
	stop_rc = 0;
}

/* The BPF side sends most events of a burst without a wakeup
 * (TK_EVENTS_WAKE_MS in tk_shared.h): after a poll that found events,
 * wait no longer than that, and read the ring whether or not epoll said
 * so. Once a whole wait finds nothing, the next event wakes the reader. */
static int ringbuf_poll(int timeout_ms)
{
	static bool backlog;
	int n, m;

	if (backlog && (timeout_ms < 0 || timeout_ms > TK_EVENTS_WAKE_MS))
		timeout_ms = TK_EVENTS_WAKE_MS;
	n = ring_buffer__poll(ringbuf, timeout_ms);
	if (n < 0 && n != -EINTR)
		return n;
	m = ring_buffer__consume(ringbuf);
	if (m < 0)
		return m;
	n = (n > 0 ? n : 0) + m;
	backlog = n > 0;
	return n;
}

int tk_events_poll(int timeout_ms)
{
	int n;

	if (!ringbuf && !perfbuf)
		return 0;
	if (ringbuf)
		n = ringbuf_poll(timeout_ms);
	else
		n = perf_buffer__poll(perfbuf, timeout_ms);
	if (n > 0)
		fflush(stdout);
	if (perfbuf && stop_rc)
		return -1;  /* a callback asked to stop */
	if (n == -EINTR)
		return 0;   /* a signal: the caller checks tk_exiting() */
	return n;
}

void tk_events_loop(void)
{
	while (!tk_exiting()) {
		int n = tk_events_poll(tk_wait_ms(100));

		if (n < 0)
			break;
	}
	/* Drain what is already in the buffer before the final report; the
	 * probes go first, so that a storm cannot keep the drain going. */
	tk_detach_object(events_obj);
	draining = true;
	if (ringbuf)
		ring_buffer__consume(ringbuf);
	else if (perfbuf)
		perf_buffer__consume(perfbuf);
}

void tk_losses_read(struct bpf_object *obj, struct tk_losses *out)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, "tk_losses");

	memset(out, 0, sizeof(*out));
	if (map) {
		tk_percpu_sum(map, TK_LOSS_EVENT, &out->events);
		tk_percpu_sum(map, TK_LOSS_MAP_FULL, &out->map_full);
		tk_percpu_sum(map, TK_LOSS_UNSEEN, &out->unseen);
		tk_percpu_sum(map, TK_LOSS_RUN_UNSEEN, &out->runs_missed);
	}
	out->events += perf_lost;
	out->runs_missed += tk_runs_missed(obj);
}

void tk_losses_warn_missed(const struct tk_losses *l)
{
	if (l->runs_missed)
		fprintf(stderr, "%s: probe runs missed: %llu (the kernel skipped a program already running on that CPU, or ran none for an event it did not deliver); counts may be incomplete\n",
			tk_tool_name(), l->runs_missed);
}

void tk_losses_warn_events(const struct tk_losses *l)
{
	if (l->events)
		fprintf(stderr, "%s: lost %llu events: the %s was full; raise --buffer-kb (now %lu)\n",
			tk_tool_name(), l->events, tk_events_transport_name(),
			buffer_kb());
	if (l->map_full)
		fprintf(stderr, "%s: %llu map inserts failed: a map was full; counts are incomplete\n",
			tk_tool_name(), l->map_full);
}

void tk_losses_report(struct bpf_object *obj)
{
	struct tk_losses l;
	struct tk_json j;

	tk_losses_read(obj, &l);
	if (tk_opts.json) {
		tk_json_begin(&j, stdout);
		tk_json_str(&j, "type", "loss");
		tk_json_uint(&j, "events_lost", l.events);
		tk_json_uint(&j, "map_inserts_failed", l.map_full);
		tk_json_uint(&j, "runs_missed", l.runs_missed);
		tk_json_end(&j);
		fflush(stdout);
		return;
	}
	fflush(stdout);
	tk_losses_warn_events(&l);
	tk_losses_warn_missed(&l);
}
