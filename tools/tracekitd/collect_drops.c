/* drops: IP packets the kernel dropped, by network namespace, drop
 * reason (as tcpdrop names them: enum skb_drop_reason from the kernel's
 * BTF, without SKB_DROP_REASON_) and protocol, with tcpdrop's BPF
 * (skb:kfree_skb) in its count mode. As tcpdrop: SKB_CONSUMED and
 * NOT_SPECIFIED are no drops here; before 5.17 the kernel gives no
 * reason ("-"), and every kfree_skb() of an IP packet counts. */
#include "tracekitd.h"

#include <bpf/bpf.h>
#include <stdio.h>

#include "dropreason.h"
#include "prom.h"
#include "tcpdrop.h"
#include "tcpdrop.skel.h"
#include "tracekit.h"

static int configure(void *s, void *ctx)
{
	struct tcpdrop_bpf *sk = s;
	int nargs = tk_kfree_skb_nargs();

	(void)ctx;
	sk->rodata->tcpdrop_count = true;
	sk->rodata->tcpdrop_has_reason = nargs >= 3;
	sk->rodata->tcpdrop_has_rx_sk = nargs >= 4;
	sk->rodata->tcpdrop_skip1 = tk_drop_reason_consumed();
	sk->rodata->tcpdrop_skip2 = tk_drop_reason_unspecified();
	bpf_map__set_autocreate(sk->maps.scratch, false);
	bpf_map__set_autocreate(sk->maps.tk_events, false);
	return 0;
}

COLLECTOR_SKELETON(tcpdrop_bpf, configure);

static int start(const struct config *c, char *err, size_t errlen)
{
	(void)c;
	if (tk_kfree_skb_nargs() < 3 || tk_drop_reason_unspecified() < 0)
		tk_warn("collector drops: skb:kfree_skb gives no drop reason on this kernel "
			"(it does since 5.17): reason is \"-\" and every kfree_skb() of an IP "
			"packet counts, drop or not");
	return load_skel(err, errlen);
}

#define METRIC "tracekit_packet_drops_total"

static void write_metrics(FILE *f)
{
	static const char *const names[] = { "netns", "reason", "protocol" };
	struct capped cap = { .metric = METRIC };
	struct tcpdrop_count_key key, prev;
	int fd = bpf_map__fd(skel->maps.drop_counts), more;
	char ns[16], r[16], p[16];
	unsigned long long v;

	tk_prom_family(f, METRIC, "counter",
		       "IP packets the kernel dropped, by network namespace (inode), drop reason and protocol (tcpdrop).");
	for (more = !bpf_map_get_next_key(fd, NULL, &key); more;
	     more = !bpf_map_get_next_key(fd, &prev, &key)) {
		prev = key;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;
		snprintf(ns, sizeof(ns), "%u", key.netns);
		{
			const char *labels[] = {
				"netns", ns,
				"reason", tk_drop_reason_name(key.reason, r, sizeof(r)),
				"protocol", tk_ip_proto_name(key.proto, p, sizeof(p)),
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

const struct collector collector_drops = {
	.name = "drops",
	.help = "IP packet drops by network namespace, reason and protocol (tcpdrop)",
	.start = start,
	.write = write_metrics,
	.stop = stop,
	.object = object,
};
