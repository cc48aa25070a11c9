/* What tcpdrop and tracekitd's drops collector name alike: the kernel's
 * packet drop reasons (enum skb_drop_reason, from its BTF) and IP
 * protocols. */
#ifndef TK_DROPREASON_H
#define TK_DROPREASON_H

#include <stddef.h>

/* The kernel's drop reasons, read from its BTF once. The name of reason
 * r without SKB_DROP_REASON_ ("NO_SOCKET", "SKB_CONSUMED"); "-" when r
 * is negative (the kernel gives none, before 5.17); "UNKNOWN" for a
 * value its BTF does not name. */
const char *tk_drop_reason_name(int r, char *buf, size_t len);

/* The values of SKB_CONSUMED and SKB_DROP_REASON_NOT_SPECIFIED, which
 * are no drop and a drop of no stated reason; -1 when the kernel has no
 * such reason. */
int tk_drop_reason_consumed(void);
int tk_drop_reason_unspecified(void);

/* Arguments of the kernel's skb:kfree_skb tracepoint, from its BTF: 2
 * before 5.17, 3 with the reason, 4 with rx_sk (6.11); -1 unknown. */
int tk_kfree_skb_nargs(void);

/* "tcp", "udp", "icmp", "icmp6", "sctp", else the number in buf. */
const char *tk_ip_proto_name(int p, char *buf, size_t len);

#endif
