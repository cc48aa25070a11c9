/* tcpstates: TCP state changes by network namespace, old and new state,
 * with tcpstates' BPF (sock:inet_sock_set_state) in its count mode. */
#include "tracekitd.h"

#include <bpf/bpf.h>
#include <stdio.h>

#include "prom.h"
#include "tcpstates.h"
#include "tcpstates.skel.h"
#include "tracekit.h"

static int configure(void *s, void *ctx)
{
	struct tcpstates_bpf *sk = s;

	(void)ctx;
	sk->rodata->tcpstates_count = true;
	/* The event path's map and buffer: dead code in count mode. */
	bpf_map__set_autocreate(sk->maps.last, false);
	bpf_map__set_autocreate(sk->maps.tk_events, false);
	return 0;
}

COLLECTOR_SKELETON(tcpstates_bpf, configure);

static int start(const struct config *c, char *err, size_t errlen)
{
	(void)c;
	return load_skel(err, errlen);
}

#define METRIC "tracekit_tcp_state_changes_total"

static void write_metrics(FILE *f)
{
	static const char *const names[] = { "netns", "oldstate", "newstate" };
	struct capped cap = { .metric = METRIC };
	struct tcpstates_count_key key, prev;
	int fd = bpf_map__fd(skel->maps.state_counts), more;
	char ns[16], o[16], n[16];
	unsigned long long v;

	tk_prom_family(f, METRIC, "counter",
		       "TCP state changes, by network namespace (inode) and old and new state (tcpstates).");
	for (more = !bpf_map_get_next_key(fd, NULL, &key); more;
	     more = !bpf_map_get_next_key(fd, &prev, &key)) {
		prev = key;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;
		snprintf(ns, sizeof(ns), "%u", key.netns);
		{
			const char *labels[] = {
				"netns", ns,
				"oldstate", tk_tcp_state_name(key.oldstate, o, sizeof(o)),
				"newstate", tk_tcp_state_name(key.newstate, n, sizeof(n)),
			};

			capped_sample(f, &cap, v, labels, 3);
		}
	}
	capped_end(f, &cap, names, 3);
}

static void stop(void)
{
	unload_skel();
}

const struct collector collector_tcpstates = {
	.name = "tcpstates",
	.help = "TCP state changes by network namespace, old and new state (tcpstates)",
	.start = start,
	.write = write_metrics,
	.stop = stop,
	.object = object,
};
