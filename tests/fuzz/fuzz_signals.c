/* libFuzzer harness for the signal lists of -s (libtrace/signames.c):
 * any bytes, NUL-ended, as tk_signal_list_parse and tk_signal_parse take
 * them from the command line.
 *
 * The parsers must not read outside the string (ASan). A list that
 * parses sets only bits 0-64, at least one, and each item of it parses
 * alone to a signal whose bit is set; a list that fails points *bad into
 * the string, at an item that does not parse alone. Any violation
 * abort()s.
 *
 *   make fuzz FUZZ_TIME=60
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "signames.h"

/* The n bytes at p parsed alone. */
static int one(const char *p, size_t n)
{
	char *item = strndup(p, n);
	int sig;

	if (!item)
		abort();
	sig = tk_signal_parse(item);
	free(item);
	return sig;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned long long m[2];
	const char *bad = NULL, *p;
	char *s = malloc(size + 1);
	size_t n;
	int sig;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	sig = tk_signal_parse(s);
	if (sig < -1 || sig > TK_SIG_MAX)
		abort();
	if (tk_signal_list_parse(s, m, &bad) == 0) {
		if ((!m[0] && !m[1]) || (m[1] & ~1ULL))
			abort();
		for (p = s;; p += n + 1) {
			n = strcspn(p, ",");
			sig = one(p, n);
			if (sig < 0 || !(m[sig / 64] >> (sig % 64) & 1))
				abort();
			if (!p[n])
				break;
		}
	} else {
		if (!bad || bad < s || bad > s + strlen(s) || one(bad, strcspn(bad, ",")) >= 0)
			abort();
	}
	free(s);
	return 0;
}
