/* netdev: packets and bytes by network namespace, device, queue and
 * direction, with netqtop's BPF (net:netif_receive_skb received,
 * net:net_dev_start_xmit sent; bytes are skb->len: with the link-layer
 * header when sent, without it when received). */
#include "tracekitd.h"

#include <bpf/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netqtop.h"
#include "netqtop.skel.h"
#include "prom.h"
#include "tracekit.h"

COLLECTOR_SKELETON(netqtop_bpf, NULL);

static int start(const struct config *c, char *err, size_t errlen)
{
	(void)c;
	return load_skel(err, errlen);
}

struct row {
	struct netqtop_key k;
	struct netqtop_val v;
};

static struct row rows[NETQTOP_MAX_KEYS];

/* By the labels: a device's ifindex is none of them (a device made
 * again under its name is the same series). */
static int cmp(const void *a, const void *b)
{
	const struct netqtop_key *x = &((const struct row *)a)->k;
	const struct netqtop_key *y = &((const struct row *)b)->k;
	int d;

	if (x->netns != y->netns)
		return x->netns < y->netns ? -1 : 1;
	if ((d = strncmp(x->dev, y->dev, NETQTOP_IFNAMSIZ)))
		return d;
	if (x->queue != y->queue)
		return x->queue < y->queue ? -1 : 1;
	return (int)x->tx - (int)y->tx;
}

/* The map's rows, those of one series summed; how many. */
static int read_rows(void)
{
	int fd = bpf_map__fd(skel->maps.counts), more, n = 0, i, out;
	struct netqtop_key key, prev;

	for (more = !bpf_map_get_next_key(fd, NULL, &key); more && n < NETQTOP_MAX_KEYS;
	     more = !bpf_map_get_next_key(fd, &prev, &key)) {
		prev = key;
		if (bpf_map_lookup_elem(fd, &key, &rows[n].v))
			continue;
		rows[n].k = key;
		rows[n].k.dev[NETQTOP_IFNAMSIZ - 1] = 0;
		n++;
	}
	qsort(rows, n, sizeof(rows[0]), cmp);
	for (i = 0, out = 0; i < n; i++) {
		if (out && !cmp(&rows[out - 1], &rows[i])) {
			rows[out - 1].v.packets += rows[i].v.packets;
			rows[out - 1].v.bytes += rows[i].v.bytes;
			continue;
		}
		rows[out++] = rows[i];
	}
	return out;
}

static void write_family(FILE *f, const char *metric, const char *help, int n, bool bytes)
{
	static const char *const names[] = { "netns", "device", "queue", "direction" };
	struct capped cap = { .metric = metric };
	char ns[16], q[8];
	int i;

	tk_prom_family(f, metric, "counter", help);
	for (i = 0; i < n; i++) {
		const char *labels[] = {
			"netns", ns, "device", rows[i].k.dev, "queue", q,
			"direction", rows[i].k.tx ? "tx" : "rx",
		};

		snprintf(ns, sizeof(ns), "%u", rows[i].k.netns);
		snprintf(q, sizeof(q), "%u", rows[i].k.queue);
		capped_sample(f, &cap, bytes ? rows[i].v.bytes : rows[i].v.packets, labels, 4);
	}
	capped_end(f, &cap, names, 4);
}

static void write_metrics(FILE *f)
{
	int n = read_rows();

	write_family(f, "tracekit_net_packets_total",
		     "Packets received (netif_receive_skb) and handed to the driver to send (net_dev_start_xmit), by network namespace (inode), device, queue and direction (netqtop).",
		     n, false);
	write_family(f, "tracekit_net_bytes_total",
		     "Bytes of those packets (skb->len: sent with the link-layer header, received without), by network namespace (inode), device, queue and direction (netqtop).",
		     n, true);
}

static void stop(void)
{
	unload_skel();
}

const struct collector collector_netdev = {
	.name = "netdev",
	.help = "packets and bytes by network namespace, device, queue and direction (netqtop)",
	.start = start,
	.write = write_metrics,
	.stop = stop,
	.object = object,
	.off_by_default = true,
};
