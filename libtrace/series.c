#include "series.h"

#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#define KEY_MAX 64

struct slot {
	char key[KEY_MAX];  /* "" when free */
	unsigned long long count;
};

struct tk_series {
	struct slot *slots;
	size_t mask, used, cap;
	unsigned long long overflow;
};

/* FNV-1a */
static uint64_t hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h;
}

struct tk_series *tk_series_new(size_t cap)
{
	struct tk_series *s = calloc(1, sizeof(*s));
	size_t n = 8;

	if (!s || !cap)
		goto fail;
	while (n < cap * 2)  /* at most half full */
		n *= 2;
	if (!(s->slots = calloc(n, sizeof(*s->slots))))
		goto fail;
	s->mask = n - 1;
	s->cap = cap;
	return s;
fail:
	free(s);
	return NULL;
}

void tk_series_free(struct tk_series *s)
{
	if (!s)
		return;
	free(s->slots);
	free(s);
}

void tk_series_add(struct tk_series *s, const char *key, unsigned long long n)
{
	char k[KEY_MAX];
	size_t i;

	/* An empty key would look like a free slot. */
	snprintf(k, sizeof(k), "%s", *key ? key : "\x01");
	for (i = hash(k) & s->mask; s->slots[i].key[0]; i = (i + 1) & s->mask)
		if (!strcmp(s->slots[i].key, k)) {
			s->slots[i].count += n;
			return;
		}
	if (s->used == s->cap) {
		s->overflow += n;
		return;
	}
	memcpy(s->slots[i].key, k, sizeof(k));
	s->slots[i].count = n;
	s->used++;
}

void tk_series_foreach(const struct tk_series *s, tk_series_fn fn, void *ctx)
{
	size_t i;

	for (i = 0; i <= s->mask; i++)
		if (s->slots[i].key[0])
			fn(strcmp(s->slots[i].key, "\x01") ? s->slots[i].key : "",
			   s->slots[i].count, ctx);
}

size_t tk_series_size(const struct tk_series *s)
{
	return s->used;
}

unsigned long long tk_series_overflow(const struct tk_series *s)
{
	return s->overflow;
}
