/* libFuzzer harness for tk_parse_maps_line (libtrace/symparse.c).
 *
 * For any bytes: no read outside them (ASan); an accepted line has
 * start <= end, a path inside the line that does not start with a blank
 * and (when deleted is set) was followed by " (deleted)"; and printing the
 * fields back in /proc/PID/maps' format parses to the same fields. Any
 * violation abort()s.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Ilibtrace \
 *     tests/fuzz/fuzz_maps.c libtrace/symparse.c -o fuzz_maps
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symparse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *d = (const char *)data;
	struct tk_maps_line l, r;
	char *buf;
	size_t len;

	if (tk_parse_maps_line(d, size, &l))
		return 0;
	if (l.start > l.end || (!l.path && l.path_len) || (l.path && !l.path_len && !l.deleted))
		abort();
	if (l.path && (l.path < d || l.path + l.path_len > d + size))
		abort();
	if (l.path_len && (l.path[0] == ' ' || l.path[0] == '\t'))
		abort();
	if (l.deleted && (l.path + l.path_len + 10 > d + size ||
			  memcmp(l.path + l.path_len, " (deleted)", 10)))
		abort();
	len = 128 + l.path_len;
	if (!(buf = malloc(len)))
		abort();
	/* memcpy, not %s: the bytes may hold NULs. */
	len = (size_t)sprintf(buf, "%llx-%llx ", l.start, l.end);
	memcpy(buf + len, l.perms, 4);
	len += 4;
	len += (size_t)sprintf(buf + len, " %08llx %02x:%02x %llu", l.pgoff,
			       l.dev_major, l.dev_minor, l.ino);
	if (l.path) {
		memcpy(buf + len, "   ", 3);
		memcpy(buf + len + 3, l.path, l.path_len);
		len += 3 + l.path_len;
	}
	if (l.deleted) {
		memcpy(buf + len, " (deleted)", 10);
		len += 10;
	}
	buf[len++] = '\n';
	if (tk_parse_maps_line(buf, len, &r) || r.start != l.start || r.end != l.end ||
	    memcmp(r.perms, l.perms, 4) || r.pgoff != l.pgoff ||
	    r.dev_major != l.dev_major || r.dev_minor != l.dev_minor || r.ino != l.ino ||
	    r.path_len != l.path_len || r.deleted != l.deleted ||
	    (l.path_len && memcmp(r.path, l.path, l.path_len)))
		abort();
	free(buf);
	return 0;
}
