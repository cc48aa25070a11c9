/* Line parsers for kallsyms, /proc/PID/maps and perf-PID.map (see
 * symparse.h). Pure functions over (pointer, length): no NUL needed, no
 * allocation, never read past len; fuzzed by tests/fuzz/fuzz_*.c. */
#include "symparse.h"

#include <string.h>

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Hex number at *p (at least one digit); rejects overflow of 64 bits,
 * so a corrupt line cannot wrap into a plausible address. */
static int parse_hex(const char **p, const char *end, unsigned long long *v)
{
	const char *s = *p;
	unsigned long long x = 0;
	int d;

	if (s == end || hexval(*s) < 0)
		return -1;
	for (; s < end && (d = hexval(*s)) >= 0; s++) {
		if (x >> 60)
			return -1;
		x = x << 4 | (unsigned)d;
	}
	*p = s;
	*v = x;
	return 0;
}

static int parse_dec(const char **p, const char *end, unsigned long long *v)
{
	const char *s = *p;
	unsigned long long x = 0;

	if (s == end || *s < '0' || *s > '9')
		return -1;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (x > (~0ULL - d) / 10)
			return -1;
		x = x * 10 + d;
	}
	*p = s;
	*v = x;
	return 0;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static const char *skip_blanks(const char *s, const char *end)
{
	while (s < end && is_blank(*s))
		s++;
	return s;
}

/* The line without its trailing newline. */
static size_t chomp(const char *line, size_t len)
{
	if (len && line[len - 1] == '\n')
		len--;
	return len;
}

int tk_parse_kallsyms_line(const char *line, size_t len, struct tk_ksym_line *out)
{
	const char *end = line + chomp(line, len), *s = line, *n;

	if (parse_hex(&s, end, &out->addr) || s == end || !is_blank(*s))
		return -1;
	s = skip_blanks(s, end);
	if (s == end || is_blank(*s))
		return -1;
	out->type = *s++;
	if (s == end || !is_blank(*s))
		return -1;
	s = skip_blanks(s, end);
	/* The name ends at the first blank: the kernel separates the module
	 * with a tab, and symbol names hold no blanks. */
	for (n = s; n < end && !is_blank(*n); n++)
		;
	if (n == s)
		return -1;
	out->name = s;
	out->name_len = (size_t)(n - s);
	out->mod = NULL;
	out->mod_len = 0;
	s = skip_blanks(n, end);
	if (s == end)
		return 0;
	/* "[module]", possibly followed by more (older kernels printed
	 * nothing else; tolerate trailing blanks only). */
	if (*s != '[')
		return -1;
	for (n = s + 1; n < end && *n != ']'; n++)
		if (is_blank(*n))
			return -1;
	if (n == end || n == s + 1 || skip_blanks(n + 1, end) != end)
		return -1;
	out->mod = s + 1;
	out->mod_len = (size_t)(n - s - 1);
	return 0;
}

int tk_parse_maps_line(const char *line, size_t len, struct tk_maps_line *out)
{
	static const char deleted[] = " (deleted)";
	const size_t dlen = sizeof(deleted) - 1;
	const char *end = line + chomp(line, len), *s = line;
	unsigned long long maj, min;
	int i;

	if (parse_hex(&s, end, &out->start) || s == end || *s++ != '-' ||
	    parse_hex(&s, end, &out->end) || out->end < out->start)
		return -1;
	if (s == end || *s++ != ' ' || end - s < 4)
		return -1;
	for (i = 0; i < 4; i++)
		out->perms[i] = *s++;
	if (s == end || *s++ != ' ' || parse_hex(&s, end, &out->pgoff))
		return -1;
	if (s == end || *s++ != ' ' || parse_hex(&s, end, &maj) ||
	    s == end || *s++ != ':' || parse_hex(&s, end, &min) ||
	    maj > 0xfffff || min > 0xfffff)
		return -1;
	out->dev_major = (unsigned)maj;
	out->dev_minor = (unsigned)min;
	if (s == end || *s++ != ' ' || parse_dec(&s, end, &out->ino))
		return -1;
	out->deleted = false;
	if (s == end) {
		out->path = NULL;
		out->path_len = 0;
		return 0;
	}
	if (!is_blank(*s))
		return -1;
	/* The kernel pads to a column, then prints the path as is (spaces
	 * kept, a newline as "\012"). */
	s = skip_blanks(s, end);
	out->path = s == end ? NULL : s;
	out->path_len = (size_t)(end - s);
	if (out->path_len > dlen && !memcmp(end - dlen, deleted, dlen)) {
		out->deleted = true;
		out->path_len -= dlen;
	}
	return 0;
}

int tk_parse_perfmap_line(const char *line, size_t len, struct tk_perfmap_line *out)
{
	const char *end = line + chomp(line, len), *s = line;

	/* perf's own reader takes an optional 0x (strtoull base 16). */
	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') &&
	    hexval(s[2]) >= 0)
		s += 2;
	if (parse_hex(&s, end, &out->start) || s == end || !is_blank(*s))
		return -1;
	s = skip_blanks(s, end);
	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') &&
	    hexval(s[2]) >= 0)
		s += 2;
	if (parse_hex(&s, end, &out->size) || s == end || !is_blank(*s))
		return -1;
	s = skip_blanks(s, end);
	if (s == end || !out->size || out->start + out->size < out->start)
		return -1;
	out->name = s;
	out->name_len = (size_t)(end - s);
	return 0;
}
