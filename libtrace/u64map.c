/* The table of u64map.h. A slot is a header (key, whether in use) and
 * the value, rounded up to 8 bytes so that every value is aligned as a
 * uint64_t. Keys are spread by Fibonacci hashing (the top bits of
 * key * 2^64/phi), which scatters runs of small keys such as tgids. */
#include "u64map.h"

#include <stdlib.h>
#include <string.h>

struct slot_head {
	uint64_t key;
	uint64_t used;
};

static size_t slot_size(const struct tk_u64map *m)
{
	return sizeof(struct slot_head) + ((m->value_size + 7) & ~(size_t)7);
}

static struct slot_head *slot_at(const struct tk_u64map *m, size_t i)
{
	return (struct slot_head *)(m->slots + i * slot_size(m));
}

/* key's slot, or the empty slot where it would go. m->cap > 0. */
static struct slot_head *find(const struct tk_u64map *m, uint64_t key)
{
	unsigned bits = (unsigned)__builtin_ctzll(m->cap);
	size_t i = bits ? (size_t)((key * 0x9e3779b97f4a7c15ULL) >> (64 - bits)) : 0;
	struct slot_head *s;

	while ((s = slot_at(m, i))->used && s->key != key)
		i = (i + 1) & (m->cap - 1);
	return s;
}

static bool grow(struct tk_u64map *m)
{
	struct tk_u64map old = *m;
	size_t size = slot_size(m);

	m->cap = old.cap ? old.cap * 2 : 64;
	if (!(m->slots = calloc(m->cap, size))) {
		*m = old;
		return false;
	}
	for (size_t i = 0; i < old.cap; i++) {
		struct slot_head *s = slot_at(&old, i);

		if (s->used)
			memcpy(find(m, s->key), s, size);
	}
	free(old.slots);
	return true;
}

void *tk_u64map_get(const struct tk_u64map *m, uint64_t key)
{
	struct slot_head *s;

	if (!m->cap)
		return NULL;
	s = find(m, key);
	return s->used ? s + 1 : NULL;
}

void *tk_u64map_put(struct tk_u64map *m, uint64_t key, bool *added)
{
	struct slot_head *s;

	if (added)
		*added = false;
	if (m->cap) {
		s = find(m, key);
		if (s->used)
			return s + 1;
	}
	if ((m->used + 1) * 2 > m->cap && !grow(m))
		return NULL;
	s = find(m, key);
	s->key = key;
	s->used = 1;
	m->used++;
	if (added)
		*added = true;
	return s + 1;
}

void *tk_u64map_next(const struct tk_u64map *m, size_t *pos, uint64_t *key)
{
	for (; *pos < m->cap; (*pos)++) {
		struct slot_head *s = slot_at(m, *pos);

		if (s->used) {
			(*pos)++;
			if (key)
				*key = s->key;
			return s + 1;
		}
	}
	return NULL;
}

size_t tk_u64map_count(const struct tk_u64map *m)
{
	return m->used;
}

void tk_u64map_free(struct tk_u64map *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = m->used = 0;
}
