#include "flagnames.h"

#include <stdio.h>
#include <string.h>

/* Append s to buf at *pos, with a '|' before it unless first. */
static void append(char *buf, size_t len, size_t *pos, const char *s)
{
	int n;

	if (*pos >= len)
		return;
	n = snprintf(buf + *pos, len - *pos, "%s%s", *pos ? "|" : "", s);
	if (n > 0)
		*pos += (size_t)n;
}

const char *tk_flags_str(char *buf, size_t len, unsigned long long v,
			 const struct tk_flag_name *names)
{
	unsigned long long left = v;
	char hex[24];
	size_t pos = 0;

	if (!len)
		return buf;
	buf[0] = 0;
	for (; names && names->name; names++) {
		if (!names->value || (left & names->mask) != names->value)
			continue;
		append(buf, len, &pos, names->name);
		left &= ~names->mask;
	}
	if (left || !pos) {
		snprintf(hex, sizeof(hex), "0x%llx", left);
		append(buf, len, &pos, hex);
	}
	return buf;
}

const char *tk_enum_name(unsigned long long v, const struct tk_flag_name *names)
{
	for (; names && names->name; names++)
		if (names->value == v)
			return names->name;
	return NULL;
}
