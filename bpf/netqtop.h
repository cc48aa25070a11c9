/* netqtop: packets and bytes per network device, queue and direction. */
#ifndef NETQTOP_H
#define NETQTOP_H

#define NETQTOP_MAX_KEYS 4096
/* Packet sizes: bcc's [0, 64) [64, 512) [512, 2K) [2K, 16K) [16K, 64K),
 * and [64K, inf) for GSO/GRO packets past 64 KiB, which bcc counts in no
 * bucket. */
#define NETQTOP_SLOTS 6
#define NETQTOP_IFNAMSIZ 16

struct netqtop_key {
	char dev[NETQTOP_IFNAMSIZ];
	unsigned int ifindex;
	unsigned int netns;     /* the device's network namespace (inode) */
	unsigned short queue;
	unsigned short tx;      /* 1: sent (net_dev_start_xmit), 0: received */
	unsigned int pad;
};

struct netqtop_val {
	unsigned long long packets;
	unsigned long long bytes;   /* skb->len */
	unsigned long long sizes[NETQTOP_SLOTS];
};

#endif
