/* DNS replies and an address-to-name cache (dns.h). The wire format is
 * glibc's libresolv's to read: ns_initparse checks every section against
 * the message's end, ns_parserr and ns_name_uncompress expand names
 * (compression pointers, loops) within it. */
#include "dns.h"

#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <resolv.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Names followed from the question through CNAMEs; real chains are a few
 * long, and a longer one in a reply is more likely a loop or a trick. */
#define CHAIN_MAX 16

struct chain {
	int n;
	char name[CHAIN_MAX][NS_MAXDNAME];
};

static bool in_chain(const struct chain *c, const char *name)
{
	int i;

	for (i = 0; i < c->n; i++)
		if (!strcasecmp(c->name[i], name))
			return true;
	return false;
}

/* One pass over the answers: add the target of each CNAME whose owner is
 * in the chain. Returns how many were added, or -1 on a malformed record. */
static int follow_cnames(ns_msg *h, struct chain *c)
{
	int i, an = ns_msg_count(*h, ns_s_an), added = 0;
	char target[NS_MAXDNAME];
	ns_rr rr;

	for (i = 0; i < an; i++) {
		if (ns_parserr(h, ns_s_an, i, &rr) < 0)
			return -1;
		if (ns_rr_type(rr) != ns_t_cname || ns_rr_class(rr) != ns_c_in ||
		    !in_chain(c, ns_rr_name(rr)))
			continue;
		if (ns_name_uncompress(ns_msg_base(*h), ns_msg_end(*h),
				       ns_rr_rdata(rr), target, sizeof(target)) < 0)
			return -1;
		if (in_chain(c, target) || c->n == CHAIN_MAX)
			continue;
		strcpy(c->name[c->n++], target);  /* both NS_MAXDNAME */
		added++;
	}
	return added;
}

int tk_dns_parse_reply(const void *msg, size_t len, tk_dns_answer_fn fn,
		       void *ctx)
{
	struct chain *c;
	int i, an, n, found = -1;
	ns_msg h;
	ns_rr rr;

	if (len > NS_MAXMSG || ns_initparse(msg, (int)len, &h) < 0)
		return -1;
	if (!ns_msg_getflag(h, ns_f_qr) || ns_msg_count(h, ns_s_qd) != 1 ||
	    ns_parserr(&h, ns_s_qd, 0, &rr) < 0)
		return -1;
	c = malloc(sizeof(*c));  /* 16 KB: not for the stack */
	if (!c)
		return -1;
	c->n = 1;
	strcpy(c->name[0], ns_rr_name(rr));
	/* Answers may come in any order: pass until the chain stops growing
	 * (each pass adds a name, or it ends). */
	while ((n = follow_cnames(&h, c)) > 0)
		;
	if (n < 0)
		goto out;
	found = 0;
	an = ns_msg_count(h, ns_s_an);
	for (i = 0; i < an; i++) {
		int family;

		if (ns_parserr(&h, ns_s_an, i, &rr) < 0) {
			found = -1;  /* cannot happen: follow_cnames read them */
			break;
		}
		if (ns_rr_class(rr) != ns_c_in)
			continue;
		if (ns_rr_type(rr) == ns_t_a && ns_rr_rdlen(rr) == 4)
			family = AF_INET;
		else if (ns_rr_type(rr) == ns_t_aaaa && ns_rr_rdlen(rr) == 16)
			family = AF_INET6;
		else
			continue;
		if (!in_chain(c, ns_rr_name(rr)))
			continue;
		fn(c->name[0], family, ns_rr_rdata(rr), ctx);
		found++;
	}
out:
	free(c);
	return found;
}

/* The cache: entries in a ring (the next insert takes the slot after the
 * last one, so the oldest insert makes room), found through a chained
 * hash table of indices. */
struct entry {
	unsigned char addr[16];
	int family;       /* 0: slot free */
	uint64_t ts;
	char *name;
	int32_t next;     /* next index in its bucket, -1 at the end */
};

struct tk_dns_cache {
	struct entry *e;
	size_t max, size, ring;   /* ring: the slot the next insert takes */
	int32_t *bucket;
	size_t nbuckets;          /* a power of two, at least 2 * max */
	uint64_t ttl;
};

static size_t addr_len(int family)
{
	return family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
}

static size_t hash(const struct tk_dns_cache *c, int family, const void *addr)
{
	const unsigned char *p = addr;
	uint64_t h = 14695981039346656037ULL ^ (unsigned)family;
	size_t i;

	for (i = 0; i < addr_len(family); i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h & (c->nbuckets - 1);
}

struct tk_dns_cache *tk_dns_cache_new(size_t max, uint64_t ttl_ns)
{
	struct tk_dns_cache *c = calloc(1, sizeof(*c));
	size_t i;

	if (!c || !max || max > INT32_MAX / 2)
		goto fail;
	c->max = max;
	c->ttl = ttl_ns;
	for (c->nbuckets = 1; c->nbuckets < 2 * max; c->nbuckets <<= 1)
		;
	c->e = calloc(max, sizeof(*c->e));
	c->bucket = malloc(c->nbuckets * sizeof(*c->bucket));
	if (!c->e || !c->bucket)
		goto fail;
	for (i = 0; i < c->nbuckets; i++)
		c->bucket[i] = -1;
	return c;
fail:
	tk_dns_cache_free(c);
	return NULL;
}

void tk_dns_cache_free(struct tk_dns_cache *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; c->e && i < c->max; i++)
		free(c->e[i].name);
	free(c->e);
	free(c->bucket);
	free(c);
}

/* The link that points at addr's entry (a bucket head or an entry's
 * next), or at the -1 ending its bucket. */
static int32_t *find(struct tk_dns_cache *c, int family, const void *addr)
{
	int32_t *link = &c->bucket[hash(c, family, addr)];

	while (*link >= 0) {
		struct entry *e = &c->e[*link];

		if (e->family == family && !memcmp(e->addr, addr, addr_len(family)))
			return link;
		link = &e->next;
	}
	return link;
}

/* Free the entry at *link and unlink it. */
static void drop(struct tk_dns_cache *c, int32_t *link)
{
	struct entry *e = &c->e[*link];

	*link = e->next;
	free(e->name);
	memset(e, 0, sizeof(*e));
	c->size--;
}

int tk_dns_cache_put(struct tk_dns_cache *c, int family, const void *addr,
		     const char *name, uint64_t ts)
{
	struct entry *e;
	int32_t *link;
	char *copy;

	if (!addr_len(family) || !(copy = strdup(name)))
		return -1;
	link = find(c, family, addr);
	if (*link >= 0)
		drop(c, link);
	e = &c->e[c->ring];
	if (e->family)
		drop(c, find(c, e->family, e->addr));
	e->family = family;
	memcpy(e->addr, addr, addr_len(family));
	e->name = copy;
	e->ts = ts;
	link = find(c, family, addr);  /* the end of its bucket */
	e->next = -1;
	*link = (int32_t)c->ring;
	c->size++;
	c->ring = (c->ring + 1) % c->max;
	return 0;
}

const char *tk_dns_cache_get(struct tk_dns_cache *c, int family,
			     const void *addr, uint64_t now, uint64_t *ts)
{
	int32_t *link;
	struct entry *e;

	if (!addr_len(family))
		return NULL;
	link = find(c, family, addr);
	if (*link < 0)
		return NULL;
	e = &c->e[*link];
	/* now before ts: events read out of order; the entry is fresh */
	if (now > e->ts && now - e->ts > c->ttl)
		return NULL;
	if (ts)
		*ts = e->ts;
	return e->name;
}

size_t tk_dns_cache_size(const struct tk_dns_cache *c)
{
	return c->size;
}
