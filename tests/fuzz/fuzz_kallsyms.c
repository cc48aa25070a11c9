/* libFuzzer harness for tk_parse_kallsyms_line (libtrace/symparse.c).
 *
 * For any bytes: the parser never reads outside them (ASan), and when it
 * accepts a line, name and module lie inside it, the name is non-empty
 * without blanks, the address is the line's
 * leading hex number, and printing the fields back in kallsyms' format
 * parses to the very same fields. Any violation abort()s.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Ilibtrace \
 *     tests/fuzz/fuzz_kallsyms.c libtrace/symparse.c -o fuzz_kallsyms
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symparse.h"

static void check_inside(const uint8_t *d, size_t n, const char *p, size_t len)
{
	if (len && (p < (const char *)d || p + len > (const char *)d + n))
		abort();
}

static int blank(char c)
{
	return c == ' ' || c == '\t';
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tk_ksym_line l, r;
	unsigned long long ref = 0;
	char *buf;
	size_t i, len;

	if (tk_parse_kallsyms_line((const char *)data, size, &l))
		return 0;
	check_inside(data, size, l.name, l.name_len);
	check_inside(data, size, l.mod, l.mod_len);
	if (!l.name_len || (l.mod && !l.mod_len) || (!l.mod && l.mod_len))
		abort();
	for (i = 0; i < l.name_len; i++)
		if (blank(l.name[i]))
			abort();
	/* Every leading hex digit (an accepted line cannot overflow). */
	for (i = 0; i < size && isxdigit(data[i]); i++)
		ref = ref << 4 | (unsigned)(isdigit(data[i]) ? data[i] - '0' : (data[i] | 0x20) - 'a' + 10);
	if (ref != l.addr)
		abort();
	/* memcpy, not %.*s: the bytes may hold NULs. */
	if (!(buf = malloc(64 + l.name_len + l.mod_len)))
		abort();
	len = (size_t)sprintf(buf, "%llx %c ", l.addr, l.type);
	memcpy(buf + len, l.name, l.name_len);
	len += l.name_len;
	if (l.mod) {
		memcpy(buf + len, "\t[", 2);
		len += 2;
		memcpy(buf + len, l.mod, l.mod_len);
		len += l.mod_len;
		buf[len++] = ']';
	}
	buf[len++] = '\n';
	if (tk_parse_kallsyms_line(buf, len, &r) || r.addr != l.addr || r.type != l.type ||
	    r.name_len != l.name_len || memcmp(r.name, l.name, l.name_len) ||
	    r.mod_len != l.mod_len || (l.mod && memcmp(r.mod, l.mod, l.mod_len)))
		abort();
	free(buf);
	return 0;
}
