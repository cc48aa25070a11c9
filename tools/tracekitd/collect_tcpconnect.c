/* tcpconnect: tcpconnect's counting mode (-c), as counters by
 * destination address and port, at most max_series of them. */
#include "tracekitd.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <string.h>

#include "prom.h"
#include "tcpconnect.h"
#include "tcpconnect.skel.h"
#include "tracekit.h"

static int configure(void *s, void *ctx)
{
	struct tcpconnect_bpf *sk = s;

	(void)ctx;
	sk->rodata->count_mode = true;
	bpf_map__set_autocreate(sk->maps.tk_events, false);
	tk_programs_off(sk->obj, "dns_reply_");  /* tcpconnect -d's */
	/* The kernel functions only, as before tcpconnect had its
	 * tracepoint way (the collector's own move is issue 18's next
	 * slice): both at once would count each connect twice. */
	tk_programs_off(sk->obj, "tp_");
	bpf_map__set_autocreate(sk->maps.pending, false);
	return 0;
}

COLLECTOR_SKELETON(tcpconnect_bpf, configure);

static int start(const struct config *c, char *err, size_t errlen)
{
	(void)c;
	return load_skel(err, errlen);
}

static void write_metrics(FILE *f)
{
	const struct config *c = current_config();
	struct tcpconnect_key key, prev;
	int fd = bpf_map__fd(skel->maps.counts), more;
	unsigned long long n, overflow = 0, series = 0;
	char addr[INET6_ADDRSTRLEN], port[8];

	tk_prom_family(f, "tracekit_tcp_connects_total", "counter",
		       "Active TCP connects (tcp_v4_connect, tcp_v6_connect), by destination address and port (tcpconnect -c).");
	for (more = !bpf_map_get_next_key(fd, NULL, &key); more;
	     more = !bpf_map_get_next_key(fd, &prev, &key)) {
		prev = key;
		if (bpf_map_lookup_elem(fd, &key, &n))
			continue;
		if (series == c->max_series) {
			overflow += n;
			continue;
		}
		series++;
		inet_ntop(key.ip == 6 ? AF_INET6 : AF_INET, key.daddr, addr, sizeof(addr));
		snprintf(port, sizeof(port), "%u", key.dport);
		tk_prom_sample(f, "tracekit_tcp_connects_total", n,
			       "family", key.ip == 6 ? "ipv6" : "ipv4",
			       "daddr", addr, "dport", port, NULL);
	}
	if (overflow)
		tk_prom_sample(f, "tracekit_tcp_connects_total", overflow,
			       "family", TRACEKITD_OVERFLOW_LABEL,
			       "daddr", TRACEKITD_OVERFLOW_LABEL,
			       "dport", TRACEKITD_OVERFLOW_LABEL, NULL);
	metrics_note_dropped("tracekit_tcp_connects_total", overflow);
}

static void stop(void)
{
	unload_skel();
}

const struct collector collector_tcpconnect = {
	.name = "tcpconnect",
	.help = "active TCP connects by destination (tcpconnect -c; kernel functions)",
	.start = start,
	.write = write_metrics,
	.stop = stop,
	.object = object,
};
