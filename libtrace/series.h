/* Counters keyed by one label value (a comm), with a cap on how many
 * distinct values are kept: a daemon's memory must not grow with the
 * names that ever appeared. Past the cap, counts go to one overflow
 * counter and are counted as dropped; a key already kept stays exact. */
#ifndef TK_SERIES_H
#define TK_SERIES_H

#include <stddef.h>

struct tk_series;

/* A table keeping at most cap keys (cap >= 1). NULL without memory. */
struct tk_series *tk_series_new(size_t cap);
void tk_series_free(struct tk_series *s);

/* Add n to key's count (keys longer than 63 bytes are cut). */
void tk_series_add(struct tk_series *s, const char *key, unsigned long long n);

/* Keys kept, in no particular order, with their counts. */
typedef void (*tk_series_fn)(const char *key, unsigned long long count,
			     void *ctx);
void tk_series_foreach(const struct tk_series *s, tk_series_fn fn, void *ctx);

size_t tk_series_size(const struct tk_series *s);
/* Counts that arrived for keys past the cap. */
unsigned long long tk_series_overflow(const struct tk_series *s);

#endif
