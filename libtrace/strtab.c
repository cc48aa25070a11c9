/* Interned names (strtab.h). */
#include "strtab.h"

#include <stdlib.h>
#include <string.h>

long tk_strtab_intern(struct tk_strtab *t, const char *m, size_t len)
{
	char **strs;

	for (size_t i = t->n; i-- > 0;)
		if (!strncmp(t->strs[i], m, len) && !t->strs[i][len])
			return (long)i;
	if (!(strs = realloc(t->strs, (t->n + 1) * sizeof(*strs))))
		return -1;
	t->strs = strs;
	if (!(strs[t->n] = strndup(m, len)))
		return -1;
	return (long)t->n++;
}

void tk_strtab_free(struct tk_strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->strs[i]);
	free(t->strs);
	t->strs = NULL;
	t->n = 0;
}
