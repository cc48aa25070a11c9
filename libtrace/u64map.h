/* A table from 64-bit keys to values of one fixed size, kept inline:
 * open addressing with linear probing, grown at half full. Any key is
 * allowed, 0 too. For the small lookup tables of the readers (stacks by
 * ring id, kernel names by address, processes by tgid), which each had
 * its own copy of this.
 *
 *   struct tk_u64map m = TK_U64MAP_INIT(struct thing);
 *   struct thing *t = tk_u64map_put(&m, key, &added);
 *
 * A value pointer holds until the next tk_u64map_put (which may move
 * every value); tk_u64map_get never moves one. */
#ifndef TK_U64MAP_H
#define TK_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tk_u64map {
	unsigned char *slots;
	size_t cap;          /* slots, a power of two (0 before the first put) */
	size_t used;
	size_t value_size;
};

#define TK_U64MAP_INIT(type) { .value_size = sizeof(type) }

/* key's value, or NULL when key is not in m. */
void *tk_u64map_get(const struct tk_u64map *m, uint64_t key);

/* key's value, added (zeroed, *added true) when key was not in m; NULL
 * when memory ran out (m unchanged). added may be NULL. */
void *tk_u64map_put(struct tk_u64map *m, uint64_t key, bool *added);

/* The entries in slot order: start with *pos = 0; the next value (its
 * key in *key when key is not NULL), or NULL after the last. */
void *tk_u64map_next(const struct tk_u64map *m, size_t *pos, uint64_t *key);

size_t tk_u64map_count(const struct tk_u64map *m);

/* Free the slots (not what values point to); m is empty again. */
void tk_u64map_free(struct tk_u64map *m);

#endif
