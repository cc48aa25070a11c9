#include "json.h"

#include <math.h>
#include <string.h>

size_t tk_utf8_seq_len(const unsigned char *s, size_t avail)
{
	unsigned char c = s[0];
	size_t n, i;
	unsigned cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF) {
		n = 2; cp = c & 0x1F;
	} else if (c >= 0xE0 && c <= 0xEF) {
		n = 3; cp = c & 0x0F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4; cp = c & 0x07;
	} else {
		return 0;  /* continuation byte, C0/C1 overlong lead, F5..FF */
	}
	if (avail < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
		return 0;  /* overlong, surrogate, or past Unicode */
	return n;
}

void tk_json_write_string(FILE *f, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, run = 0;

	fputc('"', f);
	while (i < len) {
		unsigned char c = s[i];
		size_t n;

		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x7F) {
			run++;  /* plain ASCII: copied in runs */
			i++;
			continue;
		}
		if (run) {
			fwrite(s + i - run, 1, run, f);
			run = 0;
		}
		switch (c) {
		case '"':  fputs("\\\"", f); i++; continue;
		case '\\': fputs("\\\\", f); i++; continue;
		case '\n': fputs("\\n", f); i++; continue;
		case '\t': fputs("\\t", f); i++; continue;
		case '\r': fputs("\\r", f); i++; continue;
		case '\b': fputs("\\b", f); i++; continue;
		case '\f': fputs("\\f", f); i++; continue;
		}
		if (c < 0x80) {  /* other control characters and DEL */
			fprintf(f, "\\u%04x", c);
			i++;
			continue;
		}
		n = tk_utf8_seq_len(s + i, len - i);
		if (n) {
			fwrite(s + i, 1, n, f);
			i += n;
		} else {
			fputs("\\ufffd", f);
			i++;
		}
	}
	if (run)
		fwrite(s + i - run, 1, run, f);
	fputc('"', f);
}

static void member(struct tk_json *j, const char *key)
{
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	j->need_comma[j->depth] = true;
	if (key) {
		tk_json_write_string(j->f, key, strlen(key));
		fputc(':', j->f);
	}
}

static void open_nested(struct tk_json *j, const char *key, char c)
{
	member(j, key);
	fputc(c, j->f);
	if (j->depth < TK_JSON_MAX_DEPTH - 1)
		j->depth++;
	j->need_comma[j->depth] = false;
}

static void close_nested(struct tk_json *j, char c)
{
	fputc(c, j->f);
	if (j->depth > 0)
		j->depth--;
}

void tk_json_begin(struct tk_json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->need_comma[0] = false;
	fputc('{', f);
}

void tk_json_end(struct tk_json *j)
{
	fputs("}\n", j->f);
}

void tk_json_str(struct tk_json *j, const char *key, const char *s)
{
	tk_json_strn(j, key, s, strlen(s));
}

void tk_json_strn(struct tk_json *j, const char *key, const char *s, size_t n)
{
	member(j, key);
	tk_json_write_string(j->f, s, n);
}

void tk_json_int(struct tk_json *j, const char *key, long long v)
{
	member(j, key);
	fprintf(j->f, "%lld", v);
}

void tk_json_uint(struct tk_json *j, const char *key, unsigned long long v)
{
	member(j, key);
	fprintf(j->f, "%llu", v);
}

void tk_json_double(struct tk_json *j, const char *key, double v)
{
	member(j, key);
	if (isfinite(v))
		fprintf(j->f, "%.15g", v);
	else
		fputs("null", j->f);  /* JSON has no NaN or infinity */
}

void tk_json_bool(struct tk_json *j, const char *key, bool v)
{
	member(j, key);
	fputs(v ? "true" : "false", j->f);
}

void tk_json_null(struct tk_json *j, const char *key)
{
	member(j, key);
	fputs("null", j->f);
}

void tk_json_obj_open(struct tk_json *j, const char *key)
{
	open_nested(j, key, '{');
}

void tk_json_obj_close(struct tk_json *j)
{
	close_nested(j, '}');
}

void tk_json_arr_open(struct tk_json *j, const char *key)
{
	open_nested(j, key, '[');
}

void tk_json_arr_close(struct tk_json *j)
{
	close_nested(j, ']');
}
