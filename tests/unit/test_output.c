/* Unit tests of libtrace/output.c: safe printing, aligned tables, times. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output.h"

#include "capture.h"

static char *safe(const char *in, size_t len)
{
	struct cap c;

	cap_open(&c);
	tk_print_safe(c.f, in, len);
	return cap_close(&c);
}

static void check_safe(const char *in, size_t len, const char *expected)
{
	char *out = safe(in, len);

	assert_string_equal(out, expected);
	free(out);
}

#define SAFE(lit, expected) check_safe(lit, sizeof(lit) - 1, expected)

/* ---- tk_print_safe ---- */

static void test_safe_plain(void **state)
{
	(void)state;
	SAFE("", "");
	SAFE("/usr/bin/ls -la", "/usr/bin/ls -la");
	SAFE("quote\" and 'single'", "quote\" and 'single'");
	/* A backslash is printed as it is. */
	SAFE("C:\\dir", "C:\\dir");
}

static void test_safe_controls(void **state)
{
	(void)state;
	SAFE("a\tb\n", "a\\x09b\\x0a");
	SAFE("\r", "\\x0d");
	SAFE("\x1b[31mred", "\\x1b[31mred");
	SAFE("\x01\x1f", "\\x01\\x1f");
	SAFE("\x7f", "\\x7f");
	SAFE("\0", "\\x00");
	SAFE("arg1\0arg2", "arg1\\x00arg2");
}

static void test_safe_all_c0(void **state)
{
	int c;

	(void)state;
	for (c = 0; c < 0x20; c++) {
		char in = (char)c, expected[8];

		snprintf(expected, sizeof(expected), "\\x%02x", c);
		check_safe(&in, 1, expected);
	}
}

static void test_safe_utf8_valid(void **state)
{
	(void)state;
	SAFE("caf\xc3\xa9", "caf\xc3\xa9");
	SAFE("\xe2\x82\xac" "5", "\xe2\x82\xac" "5");
	SAFE("\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80");
	SAFE("\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf");
	SAFE("\xef\xbf\xbd", "\xef\xbf\xbd");
}

static void test_safe_utf8_invalid(void **state)
{
	(void)state;
	SAFE("\x80", "\\x80");
	SAFE("\xff", "\\xff");
	SAFE("a\xfe" "b", "a\\xfeb");
	SAFE("\xc0\x80", "\\xc0\\x80");
	SAFE("\xe0\x80\x80", "\\xe0\\x80\\x80");
	SAFE("\xed\xa0\x80", "\\xed\\xa0\\x80");
	SAFE("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80");
	SAFE("\xf5\x80\x80\x80", "\\xf5\\x80\\x80\\x80");
	/* Truncated at the end, or by the next byte. */
	SAFE("\xe2\x82", "\\xe2\\x82");
	SAFE("ok\xf0\x9f\x98", "ok\\xf0\\x9f\\x98");
	SAFE("\xe2\x82" "A", "\\xe2\\x82A");
	SAFE("\xc3\xc3\xa9", "\\xc3\xc3\xa9");
	check_safe("\xc3\xa9", 1, "\\xc3");
}

/* C1 control characters U+0080..U+009F are valid UTF-8 but control
 * characters all the same: U+0085 NEL is a line break and U+009B is CSI,
 * an escape sequence introducer. They print as \xNN like C0 controls. */
static void test_safe_c1_controls(void **state)
{
	char *out;

	(void)state;
	/* U+00A0, the first code point past C1, stays as it is. */
	SAFE("\xc2\xa0", "\xc2\xa0");
	out = safe("a\xc2\x85" "b\xc2\x9b" "31m", 9);
	assert_string_equal(out, "a\\xc2\\x85b\\xc2\\x9b31m");
	free(out);
}

/* Whatever the input, the output is one line of printable ASCII and
 * valid UTF-8: no byte below 0x20, no DEL. */
static void test_safe_one_line(void **state)
{
	char in[256], *out;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(in); i++)
		in[i] = (char)i;
	out = safe(in, sizeof(in));
	for (i = 0; out[i]; i++)
		assert_true((unsigned char)out[i] >= 0x20 && out[i] != 0x7f);
	free(out);
}

/* ---- tk_print_header / tk_print_cell ---- */

static const struct tk_col cols[] = {
	{ "PID", 7, 0 },
	{ "COMM", 16, 1 },
	{ "FD", 3, 0 },
	{ "PATH", 0, 1 },
};

static void test_header(void **state)
{
	struct cap c;
	char *out;

	(void)state;
	cap_open(&c);
	tk_print_header(c.f, cols, 4);
	out = cap_close(&c);
	assert_string_equal(out, "    PID COMM              FD PATH\n");
	free(out);
}

static void test_cells(void **state)
{
	struct cap c;
	char *out;

	(void)state;
	cap_open(&c);
	tk_print_header(c.f, cols, 4);
	tk_print_cell(c.f, &cols[0], 0, "%d", 1234);
	tk_print_cell(c.f, &cols[1], 0, "%s", "bash");
	tk_print_cell(c.f, &cols[2], 0, "%d", 3);
	tk_print_cell(c.f, &cols[3], 1, "%s", "/etc/passwd");
	fputc('\n', c.f);
	tk_print_cell(c.f, &cols[0], 0, "%d", 1);
	tk_print_cell(c.f, &cols[1], 0, "%s", "a-comm-of-15-ch");
	tk_print_cell(c.f, &cols[2], 0, "%d", -1);
	tk_print_cell(c.f, &cols[3], 1, "%s", "");
	fputc('\n', c.f);
	out = cap_close(&c);
	assert_string_equal(out,
		"    PID COMM              FD PATH\n"
		"   1234 bash               3 /etc/passwd\n"
		"      1 a-comm-of-15-ch   -1 \n");
	free(out);
}

/* A right-aligned last column is padded on the left only. */
static void test_last_right_aligned(void **state)
{
	static const struct tk_col c2[] = { { "SYSCALL", 16, 1 }, { "COUNT", 8, 0 } };
	struct cap c;
	char *out;

	(void)state;
	cap_open(&c);
	tk_print_header(c.f, c2, 2);
	tk_print_cell(c.f, &c2[0], 0, "%s", "read");
	tk_print_cell(c.f, &c2[1], 1, "%llu", 42ULL);
	fputc('\n', c.f);
	out = cap_close(&c);
	assert_string_equal(out,
		"SYSCALL             COUNT\n"
		"read                   42\n");
	free(out);
}

/* Values wider than their column push the rest right; nothing is cut. */
static void test_cell_overflow(void **state)
{
	static const struct tk_col c3[] = { { "C", 3, 1 }, { "N", 2, 0 }, { "X", 1, 0 } };
	struct cap c;
	char *out;

	(void)state;
	cap_open(&c);
	tk_print_cell(c.f, &c3[0], 0, "%s", "longname");
	tk_print_cell(c.f, &c3[1], 0, "%d", 123456);
	tk_print_cell(c.f, &c3[2], 1, "%s", "end");
	out = cap_close(&c);
	assert_string_equal(out, "longname 123456 end");
	free(out);
}

/* A long value (a path) is printed whole, never cut to a buffer size. */
static void test_cell_long_value(void **state)
{
	static const struct tk_col path = { "PATH", 0, 1 };
	char value[1001];
	struct cap c;
	char *out;

	(void)state;
	memset(value, 'p', sizeof(value) - 1);
	value[sizeof(value) - 1] = 0;
	cap_open(&c);
	tk_print_cell(c.f, &path, 1, "%s", value);
	out = cap_close(&c);
	assert_string_equal(out, value);
	free(out);
}

/* ---- times ---- */

static void test_time_str(void **state)
{
	char buf[16];
	const char *s;
	int i;

	(void)state;
	s = tk_time_str(buf, sizeof(buf));
	assert_ptr_equal(s, buf);
	assert_int_equal(strlen(s), 8);
	for (i = 0; i < 8; i++) {
		if (i == 2 || i == 5)
			assert_int_equal(s[i], ':');
		else
			assert_true(isdigit((unsigned char)s[i]));
	}
}

static void test_json_time(void **state)
{
	struct tk_json j;
	struct cap c;
	struct tm tm;
	char *out, *end;
	time_t before, t;
	int usec = -1, n = 0;

	(void)state;
	before = time(NULL);
	cap_open(&c);
	tk_json_begin(&j, c.f);
	tk_json_time(&j);
	tk_json_int(&j, "pid", 1);
	tk_json_end(&j);
	out = cap_close(&c);
	/* {"time":"2026-11-21T15:40:01.123456Z","pid":1} */
	assert_int_equal(strlen(out), strlen("{\"time\":\"YYYY-MM-DDTHH:MM:SS.uuuuuuZ\",\"pid\":1}\n"));
	assert_memory_equal(out, "{\"time\":\"", 9);
	memset(&tm, 0, sizeof(tm));
	end = strptime(out + 9, "%Y-%m-%dT%H:%M:%S", &tm);
	assert_non_null(end);
	assert_int_equal(sscanf(end, ".%6dZ\"%n", &usec, &n), 1);
	assert_int_equal(n, 9);
	assert_in_range(usec, 0, 999999);
	assert_string_equal(end + 9, ",\"pid\":1}\n");
	t = timegm(&tm);
	assert_in_range(t, before - 1, time(NULL) + 1);  /* UTC */
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_safe_plain),
		cmocka_unit_test(test_safe_controls),
		cmocka_unit_test(test_safe_all_c0),
		cmocka_unit_test(test_safe_utf8_valid),
		cmocka_unit_test(test_safe_utf8_invalid),
		cmocka_unit_test(test_safe_c1_controls),
		cmocka_unit_test(test_safe_one_line),
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_cells),
		cmocka_unit_test(test_last_right_aligned),
		cmocka_unit_test(test_cell_overflow),
		cmocka_unit_test(test_cell_long_value),
		cmocka_unit_test(test_time_str),
		cmocka_unit_test(test_json_time),
	};

	return cmocka_run_group_tests_name("output", tests, NULL, NULL);
}
