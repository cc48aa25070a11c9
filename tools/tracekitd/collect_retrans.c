/* retrans: TCP retransmitted segments by remote address, with
 * tcpretrans' BPF (tcp:tcp_retransmit_skb) in its count mode (-c).
 *
 * The BPF side counts per flow. A daemon sees flows come and go without
 * end, so each scrape takes the flows out of the map (it never fills)
 * and adds them to the addresses' running totals here: at most
 * max_series addresses, the first seen; the rest add to the overflow
 * series, as every capped family does. */
#include "tracekitd.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "prom.h"
#include "tcpretrans.h"
#include "tcpretrans.skel.h"
#include "tracekit.h"

#define METRIC "tracekit_tcp_retransmits_total"
#define TAKE_MAX TCPRETRANS_MAX_FLOWS

struct flow {
	struct tk_sock_id id;
	struct tcpretrans_count n;
};

struct total {
	unsigned short ip;
	unsigned char addr[16];
	unsigned long long segments;
};

static struct total *totals;
static unsigned long n_totals;
static unsigned long long overflow;
static struct flow *taken;

static int configure(void *s, void *ctx)
{
	struct tcpretrans_bpf *sk = s;

	(void)ctx;
	sk->rodata->count_mode = true;
	sk->rodata->tp_has_err = tk_tp_nargs("tcp_retransmit_skb") >= 3;
	tk_programs_off(sk->obj, "tlp_");   /* -l's kernel-function probes */
	bpf_map__set_autocreate(sk->maps.tk_events, false);
	return 0;
}

COLLECTOR_SKELETON(tcpretrans_bpf, configure);

static int start(const struct config *c, char *err, size_t errlen)
{
	free(totals);
	free(taken);
	n_totals = 0;
	overflow = 0;
	totals = calloc(c->max_series ? c->max_series : 1, sizeof(*totals));
	taken = calloc(TAKE_MAX, sizeof(*taken));
	if (!totals || !taken) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return load_skel(err, errlen);
}

static void add(const struct tk_sock_id *id, unsigned long long segments)
{
	const struct config *c = current_config();
	size_t len = id->ip == 6 ? 16 : 4;
	unsigned long i;

	for (i = 0; i < n_totals; i++)
		if (totals[i].ip == id->ip && !memcmp(totals[i].addr, id->daddr, len))
			break;
	if (i == n_totals) {
		if (n_totals == c->max_series) {
			overflow += segments;
			return;
		}
		totals[i].ip = id->ip;
		memcpy(totals[i].addr, id->daddr, len);
		n_totals++;
	}
	totals[i].segments += segments;
}

static void write_metrics(FILE *f)
{
	static const char *const names[] = { "family", "raddr" };
	struct capped cap = { .metric = METRIC };
	char addr[INET6_ADDRSTRLEN];
	int i, n;

	n = tk_map_take_all(skel->maps.counts, taken, sizeof(*taken),
			    offsetof(struct flow, n), TAKE_MAX);
	for (i = 0; i < n; i++)
		add(&taken[i].id, taken[i].n.segments);
	tk_prom_family(f, METRIC, "counter",
		       "TCP segments retransmitted, by remote address (tcpretrans -c; as the kernel's TcpRetransSegs counts them).");
	for (unsigned long k = 0; k < n_totals; k++) {
		const char *labels[] = {
			"family", totals[k].ip == 6 ? "ipv6" : "ipv4",
			"raddr", inet_ntop(totals[k].ip == 6 ? AF_INET6 : AF_INET,
					   totals[k].addr, addr, sizeof(addr)),
		};

		capped_sample(f, &cap, totals[k].segments, labels, 2);
	}
	cap.overflow += overflow;
	capped_end(f, &cap, names, 2);
}

static void stop(void)
{
	unload_skel();
}

const struct collector collector_retrans = {
	.name = "retrans",
	.help = "TCP retransmitted segments by remote address (tcpretrans -c)",
	.start = start,
	.write = write_metrics,
	.stop = stop,
	.object = object,
};
