/* libFuzzer harness for tk_dns_parse_reply and the address cache
 * (libtrace/dns.c): any bytes, as a DNS reply seen on the wire.
 *
 * The parser must not read outside the input (ASan) and must report only
 * A (4 bytes) and AAAA (16 bytes) addresses with a NUL-terminated name of
 * at most NS_MAXDNAME bytes; it returns -1 or the number it reported.
 * Every address reported goes into a cache of 8 entries and must be found
 * there under that name at once; the cache never holds more than 8.
 * Any violation abort()s.
 *
 *   make fuzz FUZZ_TIME=60
 */
#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dns.h"

#define CACHE_MAX 8

struct state {
	struct tk_dns_cache *cache;
	int reported;
	uint64_t ts;
};

static void check(const char *qname, int family, const void *addr, void *ctx)
{
	struct state *s = ctx;
	size_t alen = family == AF_INET ? 4 : 16;
	unsigned char copy[16];
	const char *got;

	if (family != AF_INET && family != AF_INET6)
		abort();
	if (strnlen(qname, NS_MAXDNAME) >= NS_MAXDNAME)
		abort();
	memcpy(copy, addr, alen);   /* ASan: addr has alen bytes */
	s->reported++;
	if (tk_dns_cache_put(s->cache, family, copy, qname, ++s->ts))
		abort();
	got = tk_dns_cache_get(s->cache, family, copy, s->ts, NULL);
	if (!got || strcmp(got, qname))
		abort();
	if (tk_dns_cache_size(s->cache) > CACHE_MAX)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct state s = { 0 };
	uint8_t *msg;
	int n;

	/* An exact-size copy, so a read one past the end is caught. */
	msg = malloc(size ? size : 1);
	if (!msg)
		return 0;
	memcpy(msg, data, size);
	s.cache = tk_dns_cache_new(CACHE_MAX, 1000);
	if (!s.cache)
		abort();
	n = tk_dns_parse_reply(msg, size, check, &s);
	if (n != -1 && n != s.reported)
		abort();
	if (n == -1 && s.reported)
		abort();
	tk_dns_cache_free(s.cache);
	free(msg);
	return 0;
}
