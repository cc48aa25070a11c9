/* The names nearest to a misspelt one (closest.h): Levenshtein distance,
 * with a prefix or substring match counted as near (the user typed part
 * of the name). */
#include <stdio.h>
#include <string.h>

#include "closest.h"

#define MAXLEN 64

static int distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j;
	int row[MAXLEN + 1];

	if (la > MAXLEN || lb > MAXLEN)
		return MAXLEN;
	for (j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (i = 1; i <= la; i++) {
		int diag = row[0], cur;

		row[0] = (int)i;
		for (j = 1; j <= lb; j++) {
			cur = row[j];
			row[j] = diag + (a[i - 1] != b[j - 1]);
			if (row[j - 1] + 1 < row[j])
				row[j] = row[j - 1] + 1;
			if (cur + 1 < row[j])
				row[j] = cur + 1;
			diag = cur;
		}
	}
	return row[lb];
}

void tk_closest_init(struct tk_closest *c, const char *want)
{
	memset(c, 0, sizeof(*c));
	c->want = want;
}

void tk_closest_add(struct tk_closest *c, const char *name)
{
	int d = distance(c->want, name), i, k;

	if (*c->want && strstr(name, c->want) && d > 1)
		d = 1 + (d > 8);  /* a part of the name: near */
	if (d * 2 > (int)strlen(c->want) + 1 && d > 1)
		return;
	for (i = 0; i < 3; i++)
		if (c->best[i] && !strcmp(c->best[i], name))
			return;
	for (i = 0; i < 3 && c->best[i] && c->dist[i] <= d; i++)
		;
	if (i == 3)
		return;
	for (k = 2; k > i; k--) {
		c->best[k] = c->best[k - 1];
		c->dist[k] = c->dist[k - 1];
	}
	c->best[i] = name;
	c->dist[i] = d;
}

const char *tk_closest_text(const struct tk_closest *c, char *buf, size_t size)
{
	size_t n = 0;

	if (size)
		buf[0] = 0;
	for (int i = 0; i < 3 && c->best[i] && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "; closest: ", c->best[i]);
	return buf;
}
