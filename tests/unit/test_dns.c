/* Unit tests of libtrace/dns.c: replies built byte by byte here. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dns.h"

/* A message under construction. */
struct msg {
	unsigned char b[2048];
	size_t n;
};

static void put(struct msg *m, const void *p, size_t n)
{
	assert_true(m->n + n <= sizeof(m->b));
	memcpy(m->b + m->n, p, n);
	m->n += n;
}

static void put16(struct msg *m, unsigned v)
{
	unsigned char b[2] = { v >> 8, v & 0xff };

	put(m, b, 2);
}

static void put32(struct msg *m, unsigned long v)
{
	put16(m, v >> 16);
	put16(m, v & 0xffff);
}

/* "a.b.c" as labels; "@" alone is a pointer to the question (offset 12). */
static void put_name(struct msg *m, const char *name)
{
	const char *p = name, *dot;

	if (!strcmp(name, "@")) {
		put16(m, 0xc00c);
		return;
	}
	while (*p) {
		unsigned char len;

		dot = strchr(p, '.');
		len = dot ? (size_t)(dot - p) : strlen(p);
		put(m, &len, 1);
		put(m, p, len);
		p += len + (dot != NULL);
	}
	put(m, "", 1);
}

static void header(struct msg *m, unsigned flags, int qd, int an)
{
	m->n = 0;
	put16(m, 0x1234);
	put16(m, flags);
	put16(m, qd);
	put16(m, an);
	put16(m, 0);
	put16(m, 0);
}

static void question(struct msg *m, const char *name, unsigned type)
{
	put_name(m, name);
	put16(m, type);
	put16(m, 1);
}

static void rr(struct msg *m, const char *owner, unsigned type,
	       const void *rdata, size_t len)
{
	put_name(m, owner);
	put16(m, type);
	put16(m, 1);
	put32(m, 60);
	put16(m, len);
	put(m, rdata, len);
}

static void rr_a(struct msg *m, const char *owner, const char *addr)
{
	unsigned char a[16];

	if (strchr(addr, ':')) {
		assert_int_equal(inet_pton(AF_INET6, addr, a), 1);
		rr(m, owner, 28, a, 16);
	} else {
		assert_int_equal(inet_pton(AF_INET, addr, a), 1);
		rr(m, owner, 1, a, 4);
	}
}

static void rr_cname(struct msg *m, const char *owner, const char *target)
{
	struct msg t = { .n = 0 };

	put_name(&t, target);
	rr(m, owner, 5, t.b, t.n);
}

/* What the parser reported: "name addr" lines. */
struct seen {
	char text[1024];
};

static void note(const char *qname, int family, const void *addr, void *ctx)
{
	struct seen *s = ctx;
	char a[INET6_ADDRSTRLEN];
	size_t n = strlen(s->text);

	inet_ntop(family, addr, a, sizeof(a));
	snprintf(s->text + n, sizeof(s->text) - n, "%s%s %s",
		 n ? "\n" : "", qname, a);
}

static int parse(const struct msg *m, struct seen *s)
{
	memset(s, 0, sizeof(*s));
	return tk_dns_parse_reply(m->b, m->n, note, s);
}

#define REPLY 0x8180   /* QR, RD, RA, NOERROR */

static void test_a_and_aaaa(void **state)
{
	struct msg m;
	struct seen s;

	(void)state;
	header(&m, REPLY, 1, 3);
	question(&m, "www.example.org", 1);
	rr_a(&m, "@", "192.0.2.7");
	rr_a(&m, "www.example.org", "2001:db8::7");
	rr_a(&m, "WWW.Example.ORG", "192.0.2.8");   /* names compare caseless */
	assert_int_equal(parse(&m, &s), 3);
	assert_string_equal(s.text, "www.example.org 192.0.2.7\n"
			    "www.example.org 2001:db8::7\n"
			    "www.example.org 192.0.2.8");
}

static void test_cname_chain(void **state)
{
	struct msg m;
	struct seen s;

	(void)state;
	/* Out of order: the chain is followed whatever the order. */
	header(&m, REPLY, 1, 5);
	question(&m, "alias.example.org", 1);
	rr_a(&m, "edge.cdn.example", "198.51.100.1");
	rr_cname(&m, "lb.example.net", "edge.cdn.example");
	rr_cname(&m, "@", "lb.example.net");
	rr_a(&m, "unrelated.example", "203.0.113.9");  /* not in the chain */
	rr_a(&m, "edge.cdn.example", "::ffff:198.51.100.2");
	assert_int_equal(parse(&m, &s), 2);
	assert_string_equal(s.text, "alias.example.org 198.51.100.1\n"
			    "alias.example.org ::ffff:198.51.100.2");
}

static void test_cname_loop_ends(void **state)
{
	struct msg m;
	struct seen s;

	(void)state;
	header(&m, REPLY, 1, 3);
	question(&m, "a.example", 1);
	rr_cname(&m, "a.example", "b.example");
	rr_cname(&m, "b.example", "a.example");
	rr_a(&m, "b.example", "192.0.2.1");
	assert_int_equal(parse(&m, &s), 1);
	assert_string_equal(s.text, "a.example 192.0.2.1");
}

static void test_not_replies(void **state)
{
	struct msg m;
	struct seen s;

	(void)state;
	header(&m, 0x0100, 1, 1);   /* a query */
	question(&m, "q.example", 1);
	rr_a(&m, "@", "192.0.2.1");
	assert_int_equal(parse(&m, &s), -1);

	header(&m, REPLY, 2, 1);    /* two questions */
	question(&m, "q.example", 1);
	question(&m, "r.example", 1);
	rr_a(&m, "@", "192.0.2.1");
	assert_int_equal(parse(&m, &s), -1);

	header(&m, REPLY, 1, 0);    /* no answers: a reply, nothing in it */
	question(&m, "q.example", 1);
	assert_int_equal(parse(&m, &s), 0);

	assert_int_equal(tk_dns_parse_reply(m.b, 5, note, &s), -1);
	assert_int_equal(tk_dns_parse_reply(m.b, 0, note, &s), -1);
}

static void test_cut_short_and_bad_records(void **state)
{
	struct msg m;
	struct seen s;
	size_t full;
	unsigned char odd[3] = { 1, 2, 3 };

	(void)state;
	header(&m, REPLY, 1, 2);
	question(&m, "q.example", 1);
	rr_a(&m, "@", "192.0.2.1");
	rr_a(&m, "@", "192.0.2.2");
	full = m.n;
	for (m.n = 0; m.n < full; m.n++)   /* every prefix */
		assert_int_equal(parse(&m, &s), -1);

	/* An A record of 3 bytes is skipped, not read past. */
	header(&m, REPLY, 1, 2);
	question(&m, "q.example", 1);
	rr(&m, "@", 1, odd, sizeof(odd));
	rr_a(&m, "@", "192.0.2.3");
	assert_int_equal(parse(&m, &s), 1);
	assert_string_equal(s.text, "q.example 192.0.2.3");

	/* A compression pointer to itself. */
	header(&m, REPLY, 1, 1);
	question(&m, "q.example", 1);
	put16(&m, 0xc000 | m.n);
	put16(&m, 1);
	put16(&m, 1);
	put32(&m, 60);
	put16(&m, 4);
	put32(&m, 0xc0000201);
	assert_int_equal(parse(&m, &s), -1);
}

static void test_cache_get_put_ttl(void **state)
{
	struct tk_dns_cache *c = tk_dns_cache_new(4, 1000);
	unsigned char a4[4] = { 192, 0, 2, 1 }, a6[16] = { 0x20, 0x01, 0x0d, 0xb8 };
	uint64_t ts = 0;

	(void)state;
	assert_non_null(c);
	assert_null(tk_dns_cache_get(c, AF_INET, a4, 0, &ts));
	assert_int_equal(tk_dns_cache_put(c, AF_INET, a4, "four", 100), 0);
	assert_int_equal(tk_dns_cache_put(c, AF_INET6, a6, "six", 200), 0);
	/* The same first 4 bytes in the other family are another address. */
	assert_int_equal(tk_dns_cache_put(c, AF_INET6, a4, "other", 200), 0);
	assert_string_equal(tk_dns_cache_get(c, AF_INET, a4, 150, &ts), "four");
	assert_int_equal(ts, 100);
	assert_string_equal(tk_dns_cache_get(c, AF_INET6, a6, 1200, &ts), "six");
	assert_null(tk_dns_cache_get(c, AF_INET6, a6, 1201, &ts));   /* expired */
	assert_string_equal(tk_dns_cache_get(c, AF_INET, a4, 50, &ts), "four");
	/* Replaced, not added. */
	assert_int_equal(tk_dns_cache_put(c, AF_INET, a4, "again", 300), 0);
	assert_int_equal(tk_dns_cache_size(c), 3);
	assert_string_equal(tk_dns_cache_get(c, AF_INET, a4, 300, &ts), "again");
	assert_int_equal(ts, 300);
	assert_int_equal(tk_dns_cache_put(c, 99, a4, "bad", 0), -1);
	assert_null(tk_dns_cache_get(c, 99, a4, 0, &ts));
	tk_dns_cache_free(c);
}

/* Full: each insert evicts the oldest insert; lookups still find the
 * rest (buckets stay linked through evictions). */
static void test_cache_bounded(void **state)
{
	enum { MAX = 100, N = 1000 };
	struct tk_dns_cache *c = tk_dns_cache_new(MAX, UINT64_MAX);
	char name[32];
	unsigned i, k;

	(void)state;
	assert_non_null(c);
	for (i = 0; i < N; i++) {
		unsigned char a[4] = { 10, 0, i >> 8, i & 0xff };

		snprintf(name, sizeof(name), "n%u", i);
		assert_int_equal(tk_dns_cache_put(c, AF_INET, a, name, i), 0);
		assert_int_equal(tk_dns_cache_size(c), i < MAX ? i + 1 : MAX);
		for (k = 0; k <= i; k++) {
			unsigned char b[4] = { 10, 0, k >> 8, k & 0xff };
			const char *got = tk_dns_cache_get(c, AF_INET, b, i, NULL);

			if (k + MAX <= i) {
				assert_null(got);
			} else {
				snprintf(name, sizeof(name), "n%u", k);
				assert_non_null(got);
				assert_string_equal(got, name);
			}
		}
	}
	tk_dns_cache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_and_aaaa),
		cmocka_unit_test(test_cname_chain),
		cmocka_unit_test(test_cname_loop_ends),
		cmocka_unit_test(test_not_replies),
		cmocka_unit_test(test_cut_short_and_bad_records),
		cmocka_unit_test(test_cache_get_put_ttl),
		cmocka_unit_test(test_cache_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
