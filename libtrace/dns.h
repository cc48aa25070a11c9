/* DNS replies seen on the wire, and the names they resolved addresses to
 * (tcpconnect -d): a parser over glibc's libresolv (ns_initparse,
 * ns_parserr) and a bounded cache from addresses to names. */
#ifndef TK_DNS_H
#define TK_DNS_H

#include <stddef.h>
#include <stdint.h>

/* Called for each address a reply gives its question: qname as the
 * question spelt it (no trailing dot; dn_expand's escapes for unusual
 * bytes), family AF_INET (4 bytes at addr) or AF_INET6 (16). */
typedef void (*tk_dns_answer_fn)(const char *qname, int family,
				 const void *addr, void *ctx);

/* Parse msg[0..len) as a DNS reply with one question, and report each A
 * and AAAA answer whose owner is the question's name or a name it
 * reaches through the reply's CNAME records. Returns the number of
 * addresses reported, or -1 when msg is not a well-formed reply (a query,
 * no single question, cut short, a bad name). */
int tk_dns_parse_reply(const void *msg, size_t len, tk_dns_answer_fn fn,
		       void *ctx);

/* Addresses to names, at most max entries: when full, the oldest insert
 * makes room. An entry older than ttl_ns is not returned. */
struct tk_dns_cache;

struct tk_dns_cache *tk_dns_cache_new(size_t max, uint64_t ttl_ns);
void tk_dns_cache_free(struct tk_dns_cache *c);

/* Remember that addr (family AF_INET or AF_INET6) was name's at ts (ns,
 * any clock, the same as tk_dns_cache_get's now); replaces what the cache
 * had for addr. Returns 0, or -1 (bad family, out of memory). */
int tk_dns_cache_put(struct tk_dns_cache *c, int family, const void *addr,
		     const char *name, uint64_t ts);

/* The name last put for addr, not older than the ttl at now, or NULL;
 * *ts its time. The string lives until that entry is replaced. */
const char *tk_dns_cache_get(struct tk_dns_cache *c, int family,
			     const void *addr, uint64_t now, uint64_t *ts);

/* Entries held (expired ones included until they make room). */
size_t tk_dns_cache_size(const struct tk_dns_cache *c);

#endif
