/* tcpconnect: tcpconnect's counting mode (-c), as counters by
 * destination address and port, at most max_series of them. As
 * tcpconnect: its tracepoint way (sock:inet_sock_set_state) first, the
 * kernel functions (tcp_v4_connect, tcp_v6_connect) where the kernel
 * refuses it; one way only, or each connect would count twice. */
#include "tracekitd.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <string.h>

#include "kfunc_or_tp.h"
#include "prom.h"
#include "tcpconnect.h"
#include "tcpconnect.skel.h"
#include "tracekit.h"

static enum tk_way way;  /* set by tk_try_load_tp_or_kfunc before each try */

static int configure(void *s, void *ctx)
{
	struct tcpconnect_bpf *sk = s;

	(void)ctx;
	sk->rodata->count_mode = true;
	bpf_map__set_autocreate(sk->maps.tk_events, false);
	tk_programs_off(sk->obj, "dns_reply_");  /* tcpconnect -d's */
	bpf_map__set_autocreate(sk->maps.sockets, way == TK_WAY_KFUNC);
	bpf_map__set_autocreate(sk->maps.pending, way == TK_WAY_TP);
	return 0;
}

TK_SKEL_OPS(tcpconnect_bpf);
static struct tcpconnect_bpf *skel;

static const char *tp_blind = "a connect until its next state change (it is counted then)";

static int start(const struct config *c, char *err, size_t errlen)
{
	(void)c;
	skel = tk_try_load_tp_or_kfunc(&tcpconnect_bpf_ops, configure, NULL, &way,
				       tp_blind, err, errlen);
	if (!skel)
		return -1;
	tk_notice("collector tcpconnect: by %s", way == TK_WAY_TP ?
		"the tracepoint sock:inet_sock_set_state" :
		"the kernel functions tcp_v4_connect and tcp_v6_connect");
	return 0;
}

static void write_metrics(FILE *f)
{
	const struct config *c = current_config();
	struct tcpconnect_key key, prev;
	int fd = bpf_map__fd(skel->maps.counts), more;
	unsigned long long n, overflow = 0, series = 0;
	char addr[INET6_ADDRSTRLEN], port[8];

	tk_prom_family(f, "tracekit_tcp_connects_total", "counter",
		       "Active TCP connects whose SYN went out, by destination address and port (tcpconnect -c).");
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
	if (!skel)
		return;
	tk_detach_object(skel->obj);
	tcpconnect_bpf__destroy(skel);
	skel = NULL;
}

static struct bpf_object *object(void)
{
	return skel ? skel->obj : NULL;
}

const struct collector collector_tcpconnect = {
	.name = "tcpconnect",
	.help = "active TCP connects by destination (tcpconnect -c; its tracepoint, else kernel functions)",
	.start = start,
	.write = write_metrics,
	.stop = stop,
	.object = object,
};
