#include "signames.h"

#include <ctype.h>
#include <signal.h>
#include <string.h>
#include <strings.h>

const char *tk_signal_name(int sig)
{
	if (sig <= 0 || sig > TK_SIG_MAX)
		return NULL;
	return sigabbrev_np(sig);
}

/* The signal the n bytes at s name (no NUL needed), or -1: digits (any
 * number of them, leading zeros too) of 0-64, or a name with or without
 * "SIG", any case. */
static int parse_n(const char *s, size_t n)
{
	size_t i;
	int v = 0, sig;

	if (!n)
		return -1;
	if (isdigit((unsigned char)*s)) {
		for (i = 0; i < n; i++) {
			if (!isdigit((unsigned char)s[i]))
				return -1;
			v = v * 10 + (s[i] - '0');
			if (v > TK_SIG_MAX)
				return -1;
		}
		return v;
	}
	if (n > 3 && !strncasecmp(s, "SIG", 3)) {
		s += 3;
		n -= 3;
	}
	for (sig = 1; sig <= TK_SIG_MAX; sig++) {
		const char *name = sigabbrev_np(sig);

		if (name && strlen(name) == n && !strncasecmp(name, s, n))
			return sig;
	}
	return -1;
}

int tk_signal_parse(const char *s)
{
	return s ? parse_n(s, strlen(s)) : -1;
}

int tk_signal_list_parse(const char *s, unsigned long long mask[2], const char **bad)
{
	const char *p = s;
	size_t n;
	int sig;

	mask[0] = mask[1] = 0;
	for (;;) {
		n = strcspn(p, ",");
		sig = parse_n(p, n);
		if (sig < 0) {
			*bad = p;
			return -1;
		}
		mask[sig / 64] |= 1ULL << (sig % 64);
		if (!p[n])
			return 0;
		p += n + 1;
	}
}
