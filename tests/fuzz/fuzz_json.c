/* libFuzzer harness for tk_json_write_string (libtrace/json.c).
 *
 * For any input bytes the output must be exactly one JSON string literal
 * (RFC 8259) that is valid UTF-8, with every control character escaped
 * (C0 and DEL), and it must decode to the input with each byte that is not
 * part of a well-formed UTF-8 sequence replaced by U+FFFD. Inputs that are
 * well-formed UTF-8 without control characters, '"' or '\' must come out
 * unchanged between the quotes. The same string inside a record
 * (tk_json_begin/strn/end) must be {"k":<literal>}\n.
 *
 * The checks below share no code with json.c: UTF-8 well-formedness is
 * Unicode's Table 3-7, written out. Any violation abort()s.
 *
 *   make fuzz FUZZ_TIME=60
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

static void fail(const char *what, const uint8_t *in, size_t inlen,
		 const char *out, size_t outlen)
{
	size_t i;

	fprintf(stderr, "fuzz_json: %s\ninput (%zu):", what, inlen);
	for (i = 0; i < inlen; i++)
		fprintf(stderr, " %02x", in[i]);
	fprintf(stderr, "\noutput (%zu):", outlen);
	for (i = 0; i < outlen; i++)
		fprintf(stderr, " %02x", (uint8_t)out[i]);
	fputc('\n', stderr);
	abort();
}

static int in_range(uint8_t b, uint8_t lo, uint8_t hi)
{
	return b >= lo && b <= hi;
}

/* Length of the well-formed UTF-8 sequence at s (Unicode 15, Table 3-7),
 * or 0 when the bytes at s do not start one within n bytes. */
static size_t wf_len(const uint8_t *s, size_t n)
{
	uint8_t b = s[0];
	uint8_t lo = 0x80, hi = 0xBF;
	size_t len, i;

	if (b <= 0x7F)
		return 1;
	if (in_range(b, 0xC2, 0xDF))
		len = 2;
	else if (b == 0xE0)
		len = 3, lo = 0xA0;
	else if (in_range(b, 0xE1, 0xEC) || b == 0xEE || b == 0xEF)
		len = 3;
	else if (b == 0xED)
		len = 3, hi = 0x9F;
	else if (b == 0xF0)
		len = 4, lo = 0x90;
	else if (in_range(b, 0xF1, 0xF3))
		len = 4;
	else if (b == 0xF4)
		len = 4, hi = 0x8F;
	else
		return 0;
	if (n < len || !in_range(s[1], lo, hi))
		return 0;
	for (i = 2; i < len; i++)
		if (!in_range(s[i], 0x80, 0xBF))
			return 0;
	return len;
}

static size_t put_utf8(uint8_t *d, uint32_t cp)
{
	if (cp < 0x80) {
		d[0] = cp;
		return 1;
	}
	if (cp < 0x800) {
		d[0] = 0xC0 | cp >> 6;
		d[1] = 0x80 | (cp & 0x3F);
		return 2;
	}
	if (cp < 0x10000) {
		d[0] = 0xE0 | cp >> 12;
		d[1] = 0x80 | ((cp >> 6) & 0x3F);
		d[2] = 0x80 | (cp & 0x3F);
		return 3;
	}
	d[0] = 0xF0 | cp >> 18;
	d[1] = 0x80 | ((cp >> 12) & 0x3F);
	d[2] = 0x80 | ((cp >> 6) & 0x3F);
	d[3] = 0x80 | (cp & 0x3F);
	return 4;
}

static int hex4(const uint8_t *s, uint32_t *v)
{
	int i;

	*v = 0;
	for (i = 0; i < 4; i++) {
		uint8_t c = s[i];

		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			*v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			*v |= c - 'A' + 10;
		else
			return 0;
	}
	return 1;
}

/* Strictly parse one JSON string literal that must fill o[0..n) exactly;
 * decode it into d (room for n bytes: no escape decodes to more bytes
 * than it takes). Returns the decoded length, or a message in *err. */
static size_t parse_literal(const uint8_t *o, size_t n, uint8_t *d,
			    const char **err)
{
	size_t i = 1, dl = 0;

	*err = NULL;
	if (n < 2 || o[0] != '"') {
		*err = "output does not start with a quote";
		return 0;
	}
	while (i < n) {
		uint8_t c = o[i];
		uint32_t cp, lo;
		size_t len;

		if (c == '"') {
			if (i != n - 1) {
				*err = "unescaped quote before the end";
				return 0;
			}
			return dl;
		}
		if (c < 0x20 || c == 0x7F) {
			*err = "raw control character in the literal";
			return 0;
		}
		if (c != '\\') {
			len = wf_len(o + i, n - 1 - i);
			if (!len) {
				*err = "output is not valid UTF-8";
				return 0;
			}
			memcpy(d + dl, o + i, len);
			dl += len;
			i += len;
			continue;
		}
		if (i + 1 >= n - 1) {
			*err = "backslash at the end";
			return 0;
		}
		switch (o[i + 1]) {
		case '"': d[dl++] = '"'; i += 2; continue;
		case '\\': d[dl++] = '\\'; i += 2; continue;
		case '/': d[dl++] = '/'; i += 2; continue;
		case 'b': d[dl++] = '\b'; i += 2; continue;
		case 'f': d[dl++] = '\f'; i += 2; continue;
		case 'n': d[dl++] = '\n'; i += 2; continue;
		case 'r': d[dl++] = '\r'; i += 2; continue;
		case 't': d[dl++] = '\t'; i += 2; continue;
		case 'u': break;
		default:
			*err = "invalid escape";
			return 0;
		}
		if (i + 6 > n - 1 || !hex4(o + i + 2, &cp)) {
			*err = "bad \\u escape";
			return 0;
		}
		i += 6;
		if (cp >= 0xDC00 && cp <= 0xDFFF) {
			*err = "lone low surrogate escape";
			return 0;
		}
		if (cp >= 0xD800 && cp <= 0xDBFF) {
			if (i + 6 > n - 1 || o[i] != '\\' || o[i + 1] != 'u' ||
			    !hex4(o + i + 2, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
				*err = "lone high surrogate escape";
				return 0;
			}
			cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			i += 6;
		}
		dl += put_utf8(d + dl, cp);
	}
	*err = "no closing quote";
	return 0;
}

/* What the literal must decode to: the input, each byte outside a
 * well-formed sequence replaced by U+FFFD. Needs room for 3 * n. */
static size_t expected_decoding(const uint8_t *s, size_t n, uint8_t *e,
				int *plain)
{
	size_t i = 0, el = 0, len;

	*plain = 1;
	while (i < n) {
		len = wf_len(s + i, n - i);
		if (len) {
			if (len == 1 && (s[i] < 0x20 || s[i] == 0x7F ||
					 s[i] == '"' || s[i] == '\\'))
				*plain = 0;
			memcpy(e + el, s + i, len);
			el += len;
			i += len;
		} else {
			*plain = 0;
			el += put_utf8(e + el, 0xFFFD);
			i++;
		}
	}
	return el;
}

static char *capture_string(const uint8_t *data, size_t size, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		abort();
	tk_json_write_string(f, (const char *)data, size);
	if (fclose(f))
		abort();
	return buf;
}

static char *capture_record(const uint8_t *data, size_t size, size_t *len)
{
	struct tk_json j;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		abort();
	tk_json_begin(&j, f);
	tk_json_strn(&j, "k", (const char *)data, size);
	tk_json_end(&j);
	if (fclose(f))
		abort();
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t outlen, reclen, dl, el;
	char *out, *rec;
	uint8_t *dec, *exp;
	const char *err;
	int plain;

	out = capture_string(data, size, &outlen);
	dec = malloc(outlen + 1);
	exp = malloc(3 * size + 1);
	if (!dec || !exp)
		abort();

	dl = parse_literal((const uint8_t *)out, outlen, dec, &err);
	if (err)
		fail(err, data, size, out, outlen);
	el = expected_decoding(data, size, exp, &plain);
	if (dl != el || memcmp(dec, exp, dl))
		fail("literal does not decode to the input (U+FFFD per bad byte)",
		     data, size, out, outlen);
	if (plain && (outlen != size + 2 || memcmp(out + 1, data, size)))
		fail("plain UTF-8 input was not copied unchanged",
		     data, size, out, outlen);

	rec = capture_record(data, size, &reclen);
	if (reclen != outlen + 7 || memcmp(rec, "{\"k\":", 5) ||
	    memcmp(rec + 5, out, outlen) || memcmp(rec + 5 + outlen, "}\n", 2))
		fail("record is not {\"k\":<literal>}\\n", data, size, rec, reclen);

	free(rec);
	free(exp);
	free(dec);
	free(out);
	return 0;
}
