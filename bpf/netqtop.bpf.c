// SPDX-License-Identifier: GPL-2.0
/* netqtop: every packet a network device receives (net:netif_receive_skb)
 * or is handed to send (net:net_dev_start_xmit, as bcc), counted per
 * device, queue and direction with its length (skb->len) and its size
 * bucket. -n DEV keeps one device by name (in any namespace, as bcc). */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "netqtop.h"
#include "tk_loss.bpf.h"

const volatile char netqtop_dev[NETQTOP_IFNAMSIZ] = {};   /* "": every device */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, NETQTOP_MAX_KEYS);
	__type(key, struct netqtop_key);
	__type(value, struct netqtop_val);
} counts SEC(".maps");

static struct netqtop_val zero_val;

static __always_inline bool dev_wanted(const char *name)
{
	int i;

	if (!netqtop_dev[0])
		return true;
	for (i = 0; i < NETQTOP_IFNAMSIZ; i++) {
		if (name[i] != netqtop_dev[i])
			return false;
		if (!name[i])
			break;
	}
	return true;
}

static __always_inline int count(struct sk_buff *skb, int tx)
{
	struct netqtop_key key = {};
	struct net_device *dev = BPF_CORE_READ(skb, dev);
	struct netqtop_val *v;
	unsigned int len;
	u16 qm;
	int slot;

	if (!dev)
		return 0;
	bpf_probe_read_kernel_str(key.dev, sizeof(key.dev), &dev->name);
	if (!dev_wanted(key.dev))
		return 0;
	key.ifindex = BPF_CORE_READ(dev, ifindex);
	key.netns = BPF_CORE_READ(dev, nd_net.net, ns.inum);
	qm = BPF_CORE_READ(skb, queue_mapping);
	/* Received: queue_mapping is the RX queue + 1 (skb_record_rx_queue),
	 * 0 when the driver recorded none (queue 0, as bcc). */
	key.queue = tx ? qm : (qm ? qm - 1 : 0);
	key.tx = tx;
	len = BPF_CORE_READ(skb, len);
	slot = len < 64 ? 0 : len < 512 ? 1 : len < 2048 ? 2 : len < 16384 ? 3 :
	       len < 65536 ? 4 : 5;
	v = tk_lookup_or_init(&counts, &key, &zero_val);
	if (!v)
		return 0;
	__sync_fetch_and_add(&v->packets, 1);
	__sync_fetch_and_add(&v->bytes, len);
	__sync_fetch_and_add(&v->sizes[slot], 1);
	return 0;
}

SEC("tp_btf/netif_receive_skb")
int BPF_PROG(rx_tp_btf, struct sk_buff *skb)
{
	return count(skb, 0);
}

SEC("raw_tp/netif_receive_skb")
int BPF_PROG(rx_raw_tp, struct sk_buff *skb)
{
	return count(skb, 0);
}

SEC("tp/net/netif_receive_skb")
int rx_tp(struct trace_event_raw_net_dev_template *args)
{
	return count((struct sk_buff *)args->skbaddr, 0);
}

SEC("tp_btf/net_dev_start_xmit")
int BPF_PROG(tx_tp_btf, struct sk_buff *skb)
{
	return count(skb, 1);
}

SEC("raw_tp/net_dev_start_xmit")
int BPF_PROG(tx_raw_tp, struct sk_buff *skb)
{
	return count(skb, 1);
}

SEC("tp/net/net_dev_start_xmit")
int tx_tp(struct trace_event_raw_net_dev_start_xmit *args)
{
	return count((struct sk_buff *)args->skbaddr, 1);
}

char LICENSE[] SEC("license") = "GPL";
