/* "Did you mean": the names nearest to a misspelt one, for the errors
 * that name an unknown tracepoint, function, field or member. */
#ifndef TK_CLOSEST_H
#define TK_CLOSEST_H

#include <stddef.h>

struct tk_closest {
	const char *best[3];  /* nearest first; NULL-padded */
	int dist[3];
	const char *want;
};

void tk_closest_init(struct tk_closest *c, const char *want);
/* Considers name (kept by pointer: it must outlive c). */
void tk_closest_add(struct tk_closest *c, const char *name);
/* "; closest: a, b, c" into buf, or "" when nothing is near enough
 * (more edits than half the name's length). */
const char *tk_closest_text(const struct tk_closest *c, char *buf, size_t size);

#endif
