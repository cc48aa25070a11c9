/* Unit tests of libtrace/json.c: the string escaper and the record API. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#include "capture.h"

static void check_escape(const char *in, size_t len, const char *expected)
{
	struct cap c;
	char *out;

	cap_open(&c);
	tk_json_write_string(c.f, in, len);
	out = cap_close(&c);
	assert_string_equal(out, expected);
	free(out);
}

/* Literal input, embedded NULs included. */
#define ESC(lit, expected) check_escape(lit, sizeof(lit) - 1, expected)

#define FFFD "\\ufffd"

/* ---- tk_json_write_string: ASCII ---- */

static void test_ascii_plain(void **state)
{
	(void)state;
	ESC("", "\"\"");
	ESC("hello world", "\"hello world\"");
	ESC("/usr/bin/ls -la", "\"/usr/bin/ls -la\"");
}

static void test_ascii_printable_all_raw(void **state)
{
	char in[128], expected[140];
	size_t n = 0, e = 0;
	int c;

	(void)state;
	expected[e++] = '"';
	for (c = 0x20; c < 0x7f; c++) {
		if (c == '"' || c == '\\')
			continue;
		in[n++] = (char)c;
		expected[e++] = (char)c;
	}
	expected[e++] = '"';
	expected[e] = 0;
	check_escape(in, n, expected);
}

static void test_quote_backslash(void **state)
{
	(void)state;
	ESC("\"", "\"\\\"\"");
	ESC("\\", "\"\\\\\"");
	ESC("a\"b\\c", "\"a\\\"b\\\\c\"");
	ESC("\\\"\\\"", "\"\\\\\\\"\\\\\\\"\"");
	/* A backslash before a letter stays two characters, not an escape. */
	ESC("C:\\new", "\"C:\\\\new\"");
}

static void test_named_escapes(void **state)
{
	(void)state;
	ESC("\n", "\"\\n\"");
	ESC("\t", "\"\\t\"");
	ESC("\r", "\"\\r\"");
	ESC("\b", "\"\\b\"");
	ESC("\f", "\"\\f\"");
	ESC("line1\nline2\r\n\tx\by\fz",
	    "\"line1\\nline2\\r\\n\\tx\\by\\fz\"");
}

static void test_other_control_chars(void **state)
{
	(void)state;
	ESC("\x01", "\"\\u0001\"");
	ESC("\x07", "\"\\u0007\"");
	ESC("\x0b", "\"\\u000b\"");  /* VT: lowercase hex */
	ESC("\x0e", "\"\\u000e\"");
	ESC("\x1b[31m", "\"\\u001b[31m\"");
	ESC("\x1f", "\"\\u001f\"");
	ESC("a\x01" "b\x1e" "c", "\"a\\u0001b\\u001ec\"");
}

static void test_all_c0_controls(void **state)
{
	static const char hex[] = "0123456789abcdef";
	int c;

	(void)state;
	for (c = 0; c < 0x20; c++) {
		char in = (char)c, expected[16];

		switch (c) {
		case '\n': strcpy(expected, "\"\\n\""); break;
		case '\t': strcpy(expected, "\"\\t\""); break;
		case '\r': strcpy(expected, "\"\\r\""); break;
		case '\b': strcpy(expected, "\"\\b\""); break;
		case '\f': strcpy(expected, "\"\\f\""); break;
		default:
			strcpy(expected, "\"\\u00xx\"");
			expected[5] = hex[c >> 4];
			expected[6] = hex[c & 15];
		}
		check_escape(&in, 1, expected);
	}
}

static void test_del(void **state)
{
	(void)state;
	ESC("\x7f", "\"\\u007f\"");
	ESC("a\x7f" "b", "\"a\\u007fb\"");
}

/* ---- valid UTF-8 passes through raw ---- */

static void test_utf8_valid_raw(void **state)
{
	(void)state;
	ESC("\xc3\xa9", "\"\xc3\xa9\"");                 /* é U+00E9 */
	ESC("\xe2\x82\xac", "\"\xe2\x82\xac\"");         /* € U+20AC */
	ESC("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\""); /* 😀 U+1F600 */
	ESC("caf\xc3\xa9 \xe2\x82\xac" "5 \xf0\x9f\x98\x80!",
	    "\"caf\xc3\xa9 \xe2\x82\xac" "5 \xf0\x9f\x98\x80!\"");
}

static void test_utf8_valid_boundaries(void **state)
{
	(void)state;
	ESC("\xc2\x80", "\"\xc2\x80\"");                 /* U+0080 */
	ESC("\xdf\xbf", "\"\xdf\xbf\"");                 /* U+07FF */
	ESC("\xe0\xa0\x80", "\"\xe0\xa0\x80\"");         /* U+0800 */
	ESC("\xed\x9f\xbf", "\"\xed\x9f\xbf\"");         /* U+D7FF */
	ESC("\xee\x80\x80", "\"\xee\x80\x80\"");         /* U+E000 */
	ESC("\xef\xbf\xbd", "\"\xef\xbf\xbd\"");         /* U+FFFD itself */
	ESC("\xef\xbf\xbf", "\"\xef\xbf\xbf\"");         /* U+FFFF */
	ESC("\xf0\x90\x80\x80", "\"\xf0\x90\x80\x80\""); /* U+10000 */
	ESC("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\""); /* U+10FFFF */
	ESC("\xe2\x80\xa8", "\"\xe2\x80\xa8\"");         /* U+2028: legal in JSON */
}

/* ---- invalid bytes: one U+FFFD escape per byte ---- */

static void test_invalid_lone_bytes(void **state)
{
	(void)state;
	ESC("\x80", "\"" FFFD "\"");           /* lone continuation */
	ESC("\xbf", "\"" FFFD "\"");
	ESC("\x80\x80", "\"" FFFD FFFD "\"");
	ESC("a\x80" "b", "\"a" FFFD "b\"");
	ESC("\xfe", "\"" FFFD "\"");
	ESC("\xff", "\"" FFFD "\"");
	ESC("\xff\xfe", "\"" FFFD FFFD "\"");
}

static void test_invalid_overlong(void **state)
{
	(void)state;
	ESC("\xc0\x80", "\"" FFFD FFFD "\"");              /* overlong NUL */
	ESC("\xc0\xaf", "\"" FFFD FFFD "\"");              /* overlong '/' */
	ESC("\xc1\xbf", "\"" FFFD FFFD "\"");
	ESC("\xe0\x80\x80", "\"" FFFD FFFD FFFD "\"");
	ESC("\xe0\x9f\xbf", "\"" FFFD FFFD FFFD "\"");     /* U+07FF in 3 */
	ESC("\xf0\x80\x80\x80", "\"" FFFD FFFD FFFD FFFD "\"");
	ESC("\xf0\x8f\xbf\xbf", "\"" FFFD FFFD FFFD FFFD "\""); /* U+FFFF in 4 */
}

static void test_invalid_surrogates(void **state)
{
	(void)state;
	ESC("\xed\xa0\x80", "\"" FFFD FFFD FFFD "\"");     /* U+D800 */
	ESC("\xed\xbf\xbf", "\"" FFFD FFFD FFFD "\"");     /* U+DFFF */
	/* CESU-8 pair for U+1F600: six bytes, six replacements. */
	ESC("\xed\xa0\xbd\xed\xb8\x80",
	    "\"" FFFD FFFD FFFD FFFD FFFD FFFD "\"");
}

static void test_invalid_past_unicode(void **state)
{
	(void)state;
	ESC("\xf4\x90\x80\x80", "\"" FFFD FFFD FFFD FFFD "\""); /* U+110000 */
	ESC("\xf5\x80\x80\x80", "\"" FFFD FFFD FFFD FFFD "\"");
	ESC("\xf7\xbf\xbf\xbf", "\"" FFFD FFFD FFFD FFFD "\"");
	ESC("\xf8\x88\x80\x80\x80", "\"" FFFD FFFD FFFD FFFD FFFD "\"");
}

static void test_invalid_truncated(void **state)
{
	(void)state;
	/* At the end of the input. */
	ESC("\xc3", "\"" FFFD "\"");
	ESC("a\xc3", "\"a" FFFD "\"");
	ESC("\xe2\x82", "\"" FFFD FFFD "\"");
	ESC("\xf0\x9f\x98", "\"" FFFD FFFD FFFD "\"");
	ESC("ok\xf0\x9f", "\"ok" FFFD FFFD "\"");
	/* Cut short by another byte: the good parts that follow survive. */
	ESC("\xe2\x82" "A", "\"" FFFD FFFD "A\"");
	ESC("\xc3\xc3\xa9", "\"" FFFD "\xc3\xa9\"");
	ESC("\xf0\x9f\x98\xe2\x82\xac", "\"" FFFD FFFD FFFD "\xe2\x82\xac\"");
	ESC("\xe2\n", "\"" FFFD "\\n\"");
	ESC("\xc3\"", "\"" FFFD "\\\"\"");
}

static void test_truncated_by_length(void **state)
{
	(void)state;
	/* len cuts a valid sequence short: what is cut is invalid. */
	check_escape("\xe2\x82\xac", 2, "\"" FFFD FFFD "\"");
	check_escape("\xf0\x9f\x98\x80", 1, "\"" FFFD "\"");
	check_escape("abc", 1, "\"a\"");
	check_escape("abc", 0, "\"\"");
}

static void test_embedded_nul(void **state)
{
	(void)state;
	ESC("\0", "\"\\u0000\"");
	ESC("a\0b", "\"a\\u0000b\"");
	ESC("a\0", "\"a\\u0000\"");
	ESC("arg1\0arg2\0", "\"arg1\\u0000arg2\\u0000\"");
}

static void test_mixed(void **state)
{
	(void)state;
	ESC("ab\xff" "cd\n\xc3\xa9\"\x01\x80",
	    "\"ab" FFFD "cd\\n\xc3\xa9\\\"\\u0001" FFFD "\"");
}

static void test_long_run(void **state)
{
	char in[5000], *expected = malloc(sizeof(in) + 16);
	size_t i;

	(void)state;
	assert_non_null(expected);
	for (i = 0; i < sizeof(in); i++)
		in[i] = (char)('a' + i % 26);
	expected[0] = '"';
	memcpy(expected + 1, in, sizeof(in));
	strcpy(expected + 1 + sizeof(in), "\"");
	check_escape(in, sizeof(in), expected);
	free(expected);
}

static void test_utf8_seq_len(void **state)
{
	(void)state;
	assert_int_equal(tk_utf8_seq_len((const unsigned char *)"a", 1), 1);
	assert_int_equal(tk_utf8_seq_len((const unsigned char *)"\xc3\xa9", 2), 2);
	assert_int_equal(tk_utf8_seq_len((const unsigned char *)"\xc3\xa9", 1), 0);
	assert_int_equal(tk_utf8_seq_len((const unsigned char *)"\xe2\x82\xac", 3), 3);
	assert_int_equal(tk_utf8_seq_len((const unsigned char *)"\xf0\x9f\x98\x80", 4), 4);
	assert_int_equal(tk_utf8_seq_len((const unsigned char *)"\xf0\x9f\x98\x80", 3), 0);
	assert_int_equal(tk_utf8_seq_len((const unsigned char *)"\x80", 1), 0);
	assert_int_equal(tk_utf8_seq_len((const unsigned char *)"\xc0\x80", 2), 0);
	assert_int_equal(tk_utf8_seq_len((const unsigned char *)"\xed\xa0\x80", 3), 0);
	assert_int_equal(tk_utf8_seq_len((const unsigned char *)"\xf4\x90\x80\x80", 4), 0);
	assert_int_equal(tk_utf8_seq_len((const unsigned char *)"\xc3" "a", 2), 0);
}

/* ---- the record API ---- */

static void test_record_flat(void **state)
{
	struct tk_json j;
	struct cap c;
	char *out;

	(void)state;
	cap_open(&c);
	tk_json_begin(&j, c.f);
	tk_json_int(&j, "pid", 42);
	tk_json_str(&j, "comm", "sh");
	tk_json_end(&j);
	out = cap_close(&c);
	assert_string_equal(out, "{\"pid\":42,\"comm\":\"sh\"}\n");
	free(out);
}

static void test_record_empty(void **state)
{
	struct tk_json j;
	struct cap c;
	char *out;

	(void)state;
	cap_open(&c);
	tk_json_begin(&j, c.f);
	tk_json_end(&j);
	out = cap_close(&c);
	assert_string_equal(out, "{}\n");
	free(out);
}

static void test_record_scalars(void **state)
{
	struct tk_json j;
	struct cap c;
	char *out;

	(void)state;
	cap_open(&c);
	tk_json_begin(&j, c.f);
	tk_json_int(&j, "min", LLONG_MIN);
	tk_json_int(&j, "neg", -1);
	tk_json_uint(&j, "max", ULLONG_MAX);
	tk_json_uint(&j, "zero", 0);
	tk_json_bool(&j, "t", true);
	tk_json_bool(&j, "f", false);
	tk_json_null(&j, "n");
	tk_json_double(&j, "d", 1.5);
	tk_json_double(&j, "tenth", 0.1);
	tk_json_double(&j, "big", 1e300);
	tk_json_double(&j, "int", 3.0);
	tk_json_end(&j);
	out = cap_close(&c);
	assert_string_equal(out,
		"{\"min\":-9223372036854775808,\"neg\":-1,"
		"\"max\":18446744073709551615,\"zero\":0,"
		"\"t\":true,\"f\":false,\"n\":null,"
		"\"d\":1.5,\"tenth\":0.1,\"big\":1e+300,\"int\":3}\n");
	free(out);
}

static void test_record_nonfinite_doubles(void **state)
{
	struct tk_json j;
	struct cap c;
	char *out;

	(void)state;
	cap_open(&c);
	tk_json_begin(&j, c.f);
	tk_json_double(&j, "nan", NAN);
	tk_json_double(&j, "negnan", -NAN);
	tk_json_double(&j, "inf", INFINITY);
	tk_json_double(&j, "ninf", -INFINITY);
	tk_json_arr_open(&j, "a");
	tk_json_double(&j, NULL, NAN);
	tk_json_double(&j, NULL, 2.25);
	tk_json_double(&j, NULL, INFINITY);
	tk_json_arr_close(&j);
	tk_json_end(&j);
	out = cap_close(&c);
	assert_string_equal(out,
		"{\"nan\":null,\"negnan\":null,\"inf\":null,\"ninf\":null,"
		"\"a\":[null,2.25,null]}\n");
	free(out);
}

static void test_record_nested(void **state)
{
	struct tk_json j;
	struct cap c;
	char *out;

	(void)state;
	cap_open(&c);
	tk_json_begin(&j, c.f);
	tk_json_int(&j, "a", 1);
	tk_json_arr_open(&j, "arr");
	tk_json_int(&j, NULL, 1);
	tk_json_str(&j, NULL, "x");
	tk_json_obj_open(&j, NULL);
	tk_json_bool(&j, "k", true);
	tk_json_int(&j, "l", 2);
	tk_json_obj_close(&j);
	tk_json_arr_open(&j, NULL);
	tk_json_arr_close(&j);
	tk_json_obj_open(&j, NULL);
	tk_json_obj_close(&j);
	tk_json_arr_close(&j);
	tk_json_obj_open(&j, "o");
	tk_json_obj_open(&j, "p");
	tk_json_null(&j, "q");
	tk_json_obj_close(&j);
	tk_json_str(&j, "r", "s");
	tk_json_obj_close(&j);
	tk_json_int(&j, "z", 2);
	tk_json_end(&j);
	out = cap_close(&c);
	assert_string_equal(out,
		"{\"a\":1,\"arr\":[1,\"x\",{\"k\":true,\"l\":2},[],{}],"
		"\"o\":{\"p\":{\"q\":null},\"r\":\"s\"},\"z\":2}\n");
	free(out);
}

static void test_record_nested_first(void **state)
{
	struct tk_json j;
	struct cap c;
	char *out;

	(void)state;
	cap_open(&c);
	tk_json_begin(&j, c.f);
	tk_json_arr_open(&j, "argv");
	tk_json_str(&j, NULL, "ls");
	tk_json_str(&j, NULL, "-l");
	tk_json_arr_close(&j);
	tk_json_int(&j, "ret", 0);
	tk_json_end(&j);
	out = cap_close(&c);
	assert_string_equal(out, "{\"argv\":[\"ls\",\"-l\"],\"ret\":0}\n");
	free(out);
}

/* Nesting to the deepest level TK_JSON_MAX_DEPTH allows: the record is
 * level 0, so seven more levels. */
static void test_record_max_depth(void **state)
{
	struct tk_json j;
	struct cap c;
	char *out;
	int i;

	(void)state;
	cap_open(&c);
	tk_json_begin(&j, c.f);
	for (i = 1; i < TK_JSON_MAX_DEPTH; i++) {
		tk_json_int(&j, "v", i);
		tk_json_obj_open(&j, "o");
	}
	tk_json_int(&j, "v", 8);
	tk_json_int(&j, "w", 9);
	for (i = 1; i < TK_JSON_MAX_DEPTH; i++) {
		tk_json_obj_close(&j);
		tk_json_int(&j, "after", i);
	}
	tk_json_end(&j);
	out = cap_close(&c);
	assert_string_equal(out,
		"{\"v\":1,\"o\":{\"v\":2,\"o\":{\"v\":3,\"o\":{\"v\":4,\"o\":"
		"{\"v\":5,\"o\":{\"v\":6,\"o\":{\"v\":7,\"o\":{\"v\":8,\"w\":9},"
		"\"after\":1},\"after\":2},\"after\":3},\"after\":4},"
		"\"after\":5},\"after\":6},\"after\":7}\n");
	free(out);
}

/* Deeper than TK_JSON_MAX_DEPTH: the output still has exactly the commas
 * and brackets of the calls made. */
static void test_record_past_max_depth(void **state)
{
	enum { LEVELS = 12 };
	char expected[512];
	size_t e = 0;
	struct tk_json j;
	struct cap c;
	char *out;
	int i;

	(void)state;
	cap_open(&c);
	tk_json_begin(&j, c.f);
	for (i = 0; i < LEVELS; i++) {
		tk_json_arr_open(&j, i ? NULL : "deep");
		tk_json_int(&j, NULL, i);
	}
	tk_json_obj_open(&j, NULL);
	tk_json_obj_close(&j);
	for (i = LEVELS - 1; i >= 0; i--) {
		tk_json_int(&j, NULL, i);
		tk_json_arr_close(&j);
	}
	tk_json_int(&j, "end", 1);
	tk_json_end(&j);
	out = cap_close(&c);

	e += snprintf(expected + e, sizeof(expected) - e, "{\"deep\":");
	for (i = 0; i < LEVELS; i++)
		e += snprintf(expected + e, sizeof(expected) - e, "[%d,", i);
	e += snprintf(expected + e, sizeof(expected) - e, "{}");
	for (i = LEVELS - 1; i >= 0; i--)
		e += snprintf(expected + e, sizeof(expected) - e, ",%d]", i);
	snprintf(expected + e, sizeof(expected) - e, ",\"end\":1}\n");
	assert_string_equal(out, expected);
	free(out);
}

static void test_record_escaped_keys_and_strn(void **state)
{
	struct tk_json j;
	struct cap c;
	char *out;

	(void)state;
	cap_open(&c);
	tk_json_begin(&j, c.f);
	tk_json_str(&j, "we\"ird\n", "v");
	tk_json_strn(&j, "args", "a\0b\0", 4);
	tk_json_strn(&j, "cut", "abcdef", 3);
	tk_json_str(&j, "file", "x\xff" "y");
	tk_json_end(&j);
	out = cap_close(&c);
	assert_string_equal(out,
		"{\"we\\\"ird\\n\":\"v\",\"args\":\"a\\u0000b\\u0000\","
		"\"cut\":\"abc\",\"file\":\"x\\ufffdy\"}\n");
	free(out);
}

/* A struct tk_json reused for the next record starts without a comma. */
static void test_record_reuse(void **state)
{
	struct tk_json j;
	struct cap c;
	char *out;

	(void)state;
	cap_open(&c);
	tk_json_begin(&j, c.f);
	tk_json_int(&j, "a", 1);
	tk_json_end(&j);
	tk_json_begin(&j, c.f);
	tk_json_arr_open(&j, "b");
	tk_json_int(&j, NULL, 2);
	tk_json_arr_close(&j);
	tk_json_end(&j);
	tk_json_begin(&j, c.f);
	tk_json_int(&j, "c", 3);
	tk_json_end(&j);
	out = cap_close(&c);
	assert_string_equal(out, "{\"a\":1}\n{\"b\":[2]}\n{\"c\":3}\n");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ascii_plain),
		cmocka_unit_test(test_ascii_printable_all_raw),
		cmocka_unit_test(test_quote_backslash),
		cmocka_unit_test(test_named_escapes),
		cmocka_unit_test(test_other_control_chars),
		cmocka_unit_test(test_all_c0_controls),
		cmocka_unit_test(test_del),
		cmocka_unit_test(test_utf8_valid_raw),
		cmocka_unit_test(test_utf8_valid_boundaries),
		cmocka_unit_test(test_invalid_lone_bytes),
		cmocka_unit_test(test_invalid_overlong),
		cmocka_unit_test(test_invalid_surrogates),
		cmocka_unit_test(test_invalid_past_unicode),
		cmocka_unit_test(test_invalid_truncated),
		cmocka_unit_test(test_truncated_by_length),
		cmocka_unit_test(test_embedded_nul),
		cmocka_unit_test(test_mixed),
		cmocka_unit_test(test_long_run),
		cmocka_unit_test(test_utf8_seq_len),
		cmocka_unit_test(test_record_flat),
		cmocka_unit_test(test_record_empty),
		cmocka_unit_test(test_record_scalars),
		cmocka_unit_test(test_record_nonfinite_doubles),
		cmocka_unit_test(test_record_nested),
		cmocka_unit_test(test_record_nested_first),
		cmocka_unit_test(test_record_max_depth),
		cmocka_unit_test(test_record_past_max_depth),
		cmocka_unit_test(test_record_escaped_keys_and_strn),
		cmocka_unit_test(test_record_reuse),
	};

	return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
