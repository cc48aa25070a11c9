/* Tracepoint format files (tpformat.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "setup.h"
#include "tpformat.h"

/* "field:char prev_comm[16];" has type "char", name "prev_comm", array
 * "[16]"; "field:__data_loc char[] name;" keeps "char[]" in its type. */
bool tk_tp_field_parse(const char *line, struct tk_tp_field *f)
{
	const char *decl = strstr(line, "field:"), *end, *sp, *p;
	size_t len;

	if (!decl)
		return false;
	decl += 6;
	end = strchr(decl, ';');
	if (!end)
		return false;
	memset(f, 0, sizeof(*f));
	for (sp = end; sp > decl && sp[-1] != ' ' && sp[-1] != '\t'; sp--)
		;
	len = (size_t)(end - sp);
	p = memchr(sp, '[', len);
	snprintf(f->name, sizeof(f->name), "%.*s", (int)((p ? p : end) - sp), sp);
	if (p)
		snprintf(f->array, sizeof(f->array), "%.*s", (int)(end - p), p);
	while (sp > decl && (sp[-1] == ' ' || sp[-1] == '\t'))
		sp--;
	snprintf(f->type, sizeof(f->type), "%.*s", (int)(sp - decl), decl);
	if ((p = strstr(end, "offset:")))
		f->offset = strtol(p + 7, NULL, 10);
	if ((p = strstr(end, "size:")))
		f->size = strtol(p + 5, NULL, 10);
	if ((p = strstr(end, "signed:")))
		f->is_signed = p[7] == '1';
	return f->name[0] && f->type[0];
}

int tk_tp_fields(const char *category, const char *event, struct tk_tp_field **fields)
{
	char name[PATH_MAX], path[PATH_MAX], line[1024];
	struct tk_tp_field f, *v = NULL, *nv;
	int n = 0;
	FILE *fp;

	*fields = NULL;
	snprintf(name, sizeof(name), "events/%s/%s/format", category, event);
	if (!tk_tracefs_file(name, path, sizeof(path)))
		return -ENOENT;
	if (!(fp = fopen(path, "re")))
		return -errno;
	while (fgets(line, sizeof(line), fp)) {
		if (!tk_tp_field_parse(line, &f) || !strncmp(f.name, "common_", 7))
			continue;
		if (!(nv = realloc(v, (size_t)(n + 1) * sizeof(*v)))) {
			free(v);
			fclose(fp);
			return -ENOMEM;
		}
		v = nv;
		v[n++] = f;
	}
	fclose(fp);
	*fields = v;
	return n;
}
