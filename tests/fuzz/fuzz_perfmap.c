/* libFuzzer harness for tk_parse_perfmap_line (libtrace/symparse.c).
 *
 * For any bytes: no read outside them (ASan); an accepted line has a
 * non-empty name inside the line that does not start with a blank, a
 * size > 0 whose range does not wrap, and printing "START SIZE NAME"
 * back (as JITs write it) parses to the same fields. Any violation
 * abort()s.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Ilibtrace \
 *     tests/fuzz/fuzz_perfmap.c libtrace/symparse.c -o fuzz_perfmap
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *d = (const char *)data;
	struct tk_perfmap_line l, r;
	char *buf;
	size_t len;

	if (tk_parse_perfmap_line(d, size, &l))
		return 0;
	if (!l.name_len || l.name < d || l.name + l.name_len > d + size ||
	    l.name[0] == ' ' || l.name[0] == '\t' || !l.size || l.start + l.size < l.start)
		abort();
	len = 64 + l.name_len;
	if (!(buf = malloc(len)))
		abort();
	/* memcpy, not %.*s: the bytes may hold NULs. */
	len = (size_t)sprintf(buf, "%llx %llx ", l.start, l.size);
	memcpy(buf + len, l.name, l.name_len);
	len += l.name_len;
	buf[len++] = '\n';
	if (tk_parse_perfmap_line(buf, len, &r) || r.start != l.start || r.size != l.size ||
	    r.name_len != l.name_len || memcmp(r.name, l.name, l.name_len))
		abort();
	free(buf);
	return 0;
}
