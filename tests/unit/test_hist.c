/* Unit tests of libtrace/hist.c: bucket bounds, bcc's star-bar format,
 * quantiles and the JSON form. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"

#include "capture.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void assert_prefix(const char *s, const char *prefix)
{
	assert_true(strlen(s) >= strlen(prefix));
	assert_memory_equal(s, prefix, strlen(prefix));
}

/* ---- tk_log2_bounds ---- */

static void check_bounds(int b, unsigned long long low, unsigned long long high)
{
	unsigned long long l = 12345, h = 12345;

	tk_log2_bounds(b, &l, &h);
	assert_int_equal(l, low);
	assert_int_equal(h, high);
}

static void test_log2_bounds(void **state)
{
	(void)state;
	check_bounds(0, 0, 1);
	check_bounds(1, 2, 3);
	check_bounds(2, 4, 7);
	check_bounds(10, 1024, 2047);
	check_bounds(32, 4294967296ULL, 8589934591ULL);
	check_bounds(62, 1ULL << 62, (1ULL << 63) - 1);
	check_bounds(63, 1ULL << 63, ~0ULL);
}

/* Every value lands in exactly one bucket: bucket b+1 starts right after
 * bucket b ends. */
static void test_log2_bounds_contiguous(void **state)
{
	unsigned long long l, h, pl, ph;
	int b;

	(void)state;
	tk_log2_bounds(0, &pl, &ph);
	for (b = 1; b < 64; b++) {
		tk_log2_bounds(b, &l, &h);
		assert_int_equal(l, ph + 1);
		assert_true(h >= l);
		pl = l;
		ph = h;
	}
	assert_int_equal(ph, ~0ULL);
	(void)pl;
}

/* ---- tk_hist_print_log2 ---- */

static void test_print_log2_bcc_format(void **state)
{
	const unsigned long long vals[8] = { 3, 1, 0, 2 };
	struct cap c;
	char *out;

	(void)state;
	cap_open(&c);
	tk_hist_print_log2(c.f, vals, ARRAY_SIZE(vals), "usecs");
	out = cap_close(&c);
	assert_string_equal(out,
"     usecs               : count    distribution\n"
"         0 -> 1          : 3        |****************************************|\n"
"         2 -> 3          : 1        |*************                           |\n"
"         4 -> 7          : 0        |                                        |\n"
"         8 -> 15         : 2        |**************************              |\n");
	free(out);
}

/* Like bcc: rows start at bucket 0 even when it is empty, and stop at the
 * last non-empty bucket. */
static void test_print_log2_leading_zeros(void **state)
{
	const unsigned long long vals[6] = { 0, 0, 5, 0, 0, 0 };
	struct cap c;
	char *out;

	(void)state;
	cap_open(&c);
	tk_hist_print_log2(c.f, vals, ARRAY_SIZE(vals), "msecs");
	out = cap_close(&c);
	assert_string_equal(out,
"     msecs               : count    distribution\n"
"         0 -> 1          : 0        |                                        |\n"
"         2 -> 3          : 0        |                                        |\n"
"         4 -> 7          : 5        |****************************************|\n");
	free(out);
}

static void test_print_log2_empty(void **state)
{
	const unsigned long long vals[10] = { 0 };
	struct cap c;
	char *out;

	(void)state;
	cap_open(&c);
	tk_hist_print_log2(c.f, vals, ARRAY_SIZE(vals), "usecs");
	tk_hist_print_log2(c.f, vals, 0, "usecs");
	out = cap_close(&c);
	assert_string_equal(out, "");
	free(out);
}

/* Bucket 32 still fits bcc's narrow columns. */
static void test_print_log2_narrow_at_32(void **state)
{
	unsigned long long vals[40] = { 0 };
	struct cap c;
	char *out, *last;

	(void)state;
	vals[0] = 2;
	vals[32] = 1;
	cap_open(&c);
	tk_hist_print_log2(c.f, vals, ARRAY_SIZE(vals), "nsecs");
	out = cap_close(&c);
	assert_prefix(out,
"     nsecs               : count    distribution\n"
"         0 -> 1          : 2        |****************************************|\n"
"         2 -> 3          : 0        |                                        |\n");
	last = strstr(out, "4294967296");
	assert_non_null(last);
	assert_string_equal(last,
"4294967296 -> 8589934591 : 1        |********************                    |\n");
	free(out);
}

/* From bucket 33 on, bcc widens the columns and halves the bar. */
static void test_print_log2_wide(void **state)
{
	unsigned long long vals[40] = { 0 };
	struct cap c;
	char *out, *p;
	int lines = 0;

	(void)state;
	vals[0] = 2;
	vals[33] = 1;
	cap_open(&c);
	tk_hist_print_log2(c.f, vals, ARRAY_SIZE(vals), "nsecs");
	out = cap_close(&c);
	for (p = out; *p; p++)
		lines += *p == '\n';
	assert_int_equal(lines, 1 + 34);
	assert_prefix(out,
"               nsecs                         : count    distribution\n"
"                   0 -> 1                    : 2        |********************|\n"
"                   2 -> 3                    : 0        |                    |\n");
	p = strstr(out, "          8589934592 -> ");
	assert_non_null(p);
	assert_string_equal(p,
"          8589934592 -> 17179869183          : 1        |**********          |\n");
	free(out);
}

/* ---- tk_hist_print_linear ---- */

static void test_print_linear(void **state)
{
	const unsigned long long vals[6] = { 0, 2, 0, 4, 0, 0 };
	struct cap c;
	char *out;

	(void)state;
	cap_open(&c);
	tk_hist_print_linear(c.f, vals, ARRAY_SIZE(vals), 10, 5, "msecs");
	out = cap_close(&c);
	/* bcc's print_linear_hist: empty buckets are skipped. */
	assert_string_equal(out,
"     msecs         : count     distribution\n"
"        15         : 2        |********************                    |\n"
"        25         : 4        |****************************************|\n");
	free(out);
}

static void test_print_linear_negative_base(void **state)
{
	const unsigned long long vals[3] = { 1, 0, 4 };
	struct cap c;
	char *out;

	(void)state;
	cap_open(&c);
	tk_hist_print_linear(c.f, vals, ARRAY_SIZE(vals), -5, 5, "value");
	out = cap_close(&c);
	assert_string_equal(out,
"     value         : count     distribution\n"
"        -5         : 1        |**********                              |\n"
"        5          : 4        |****************************************|\n");
	free(out);
}

static void test_print_linear_empty(void **state)
{
	const unsigned long long vals[4] = { 0 };
	struct cap c;
	char *out;

	(void)state;
	cap_open(&c);
	tk_hist_print_linear(c.f, vals, ARRAY_SIZE(vals), 0, 1, "x");
	out = cap_close(&c);
	assert_string_equal(out, "");
	free(out);
}

/* ---- quantiles ---- */

static void test_quantile_log2(void **state)
{
	/* 2 in [0,1], 4 in [4,7], 4 in [8,15]: 10 in all. */
	const unsigned long long vals[6] = { 2, 0, 4, 4, 0, 0 };

	(void)state;
	/* rank 5: 3 of the 4 in [4,8) -> 4 + 0.75 * 4 */
	assert_float_equal(tk_hist_quantile_log2(vals, 6, 0.5), 7.0, 1e-9);
	/* rank 9: 3 of the 4 in [8,16) -> 8 + 0.75 * 8 */
	assert_float_equal(tk_hist_quantile_log2(vals, 6, 0.9), 14.0, 1e-9);
	/* rank 1: half of bucket 0's two in [0,2) */
	assert_float_equal(tk_hist_quantile_log2(vals, 6, 0.1), 1.0, 1e-9);
	assert_float_equal(tk_hist_quantile_log2(vals, 6, 0.0), 0.0, 1e-9);
	/* q is clamped to 0..1 */
	assert_float_equal(tk_hist_quantile_log2(vals, 6, -3),
			   tk_hist_quantile_log2(vals, 6, 0), 1e-9);
	assert_float_equal(tk_hist_quantile_log2(vals, 6, 7),
			   tk_hist_quantile_log2(vals, 6, 1), 1e-9);
}

static void test_quantile_log2_one_bucket(void **state)
{
	unsigned long long vals[20] = { 0 };

	(void)state;
	vals[10] = 100;  /* [1024, 2047] */
	assert_float_equal(tk_hist_quantile_log2(vals, 20, 0.5), 1536.0, 1e-9);
	assert_float_equal(tk_hist_quantile_log2(vals, 20, 0.25), 1280.0, 1e-9);
	assert_float_equal(tk_hist_quantile_log2(vals, 20, 0.0), 1024.0, 1e-9);
}

static void test_quantile_linear(void **state)
{
	const unsigned long long vals[3] = { 0, 4, 4 };

	(void)state;
	/* base 0 step 10: [10,20) and [20,30) hold 4 each */
	assert_float_equal(tk_hist_quantile_linear(vals, 3, 0, 10, 0.25), 15.0, 1e-9);
	assert_float_equal(tk_hist_quantile_linear(vals, 3, 0, 10, 0.75), 25.0, 1e-9);
	assert_float_equal(tk_hist_quantile_linear(vals, 3, 100, 10, 0.75), 125.0, 1e-9);
	assert_float_equal(tk_hist_quantile_linear(vals, 3, -50, 10, 0.25), -35.0, 1e-9);
}

static void test_quantile_empty(void **state)
{
	const unsigned long long vals[8] = { 0 };

	(void)state;
	assert_float_equal(tk_hist_quantile_log2(vals, 8, 0.5), -1.0, 0);
	assert_float_equal(tk_hist_quantile_log2(vals, 0, 0.5), -1.0, 0);
	assert_float_equal(tk_hist_quantile_linear(vals, 8, 0, 1, 0.5), -1.0, 0);
	assert_float_equal(tk_hist_quantile_linear(vals, 0, 0, 1, 0.99), -1.0, 0);
}

/* ---- JSON ---- */

typedef void (*json_fill)(struct tk_json *j, const void *arg);

static char *json_record(json_fill fill, const void *arg)
{
	struct tk_json j;
	struct cap c;

	cap_open(&c);
	tk_json_begin(&j, c.f);
	fill(&j, arg);
	tk_json_end(&j);
	return cap_close(&c);
}

struct hist_arg {
	const unsigned long long *vals;
	int n;
	long long base, step;
	const char *unit;
};

static void fill_log2(struct tk_json *j, const void *arg)
{
	const struct hist_arg *h = arg;

	tk_json_str(j, "type", "hist");
	tk_hist_json_log2(j, h->vals, h->n, h->unit);
}

static void fill_linear(struct tk_json *j, const void *arg)
{
	const struct hist_arg *h = arg;

	tk_json_str(j, "type", "hist");
	tk_hist_json_linear(j, h->vals, h->n, h->base, h->step, h->unit);
}

static void test_json_log2(void **state)
{
	const unsigned long long vals[5] = { 0, 0, 4, 0, 0 };
	const struct hist_arg a = { vals, 5, 0, 0, "usecs" };
	char *out;

	(void)state;
	out = json_record(fill_log2, &a);
	/* p50 = 4 + 0.5*4, p90 = 4 + 0.9*4, p99 = 4 + 0.99*4 */
	assert_string_equal(out,
		"{\"type\":\"hist\",\"unit\":\"usecs\",\"scale\":\"log2\","
		"\"buckets\":[{\"low\":4,\"high\":7,\"count\":4}],"
		"\"total\":4,\"p50\":6,\"p90\":7.6,\"p99\":7.96}\n");
	free(out);
}

static void test_json_log2_two_buckets(void **state)
{
	const unsigned long long vals[4] = { 3, 0, 1, 0 };
	const struct hist_arg a = { vals, 4, 0, 0, "nsecs" };
	char *out;

	(void)state;
	out = json_record(fill_log2, &a);
	/* p50: rank 2 of the 3 in [0,2) -> 4/3; p90: rank 3.6 -> 4 + 0.6*4 */
	assert_string_equal(out,
		"{\"type\":\"hist\",\"unit\":\"nsecs\",\"scale\":\"log2\","
		"\"buckets\":[{\"low\":0,\"high\":1,\"count\":3},"
		"{\"low\":4,\"high\":7,\"count\":1}],"
		"\"total\":4,\"p50\":1.33333333333333,\"p90\":6.4,\"p99\":7.84}\n");
	free(out);
}

static void test_json_log2_empty(void **state)
{
	const unsigned long long vals[5] = { 0 };
	const struct hist_arg a = { vals, 5, 0, 0, "usecs" };
	char *out;

	(void)state;
	out = json_record(fill_log2, &a);
	assert_string_equal(out,
		"{\"type\":\"hist\",\"unit\":\"usecs\",\"scale\":\"log2\","
		"\"buckets\":[],\"total\":0,\"p50\":null,\"p90\":null,\"p99\":null}\n");
	free(out);
}

static void test_json_log2_top_bucket(void **state)
{
	unsigned long long vals[64] = { 0 };
	const struct hist_arg a = { vals, 64, 0, 0, "ns" };
	char *out;

	(void)state;
	vals[63] = 1;
	out = json_record(fill_log2, &a);
	assert_non_null(strstr(out,
		"\"buckets\":[{\"low\":9223372036854775808,"
		"\"high\":18446744073709551615,\"count\":1}],\"total\":1,"));
	free(out);
}

static void test_json_linear(void **state)
{
	const unsigned long long vals[4] = { 0, 2, 0, 2 };
	const struct hist_arg a = { vals, 4, 10, 5, "msecs" };
	char *out;

	(void)state;
	out = json_record(fill_linear, &a);
	/* p50: rank 2 = all of [15,20) -> 20; p90: rank 3.6 -> 25 + 0.8*5 */
	assert_string_equal(out,
		"{\"type\":\"hist\",\"unit\":\"msecs\",\"scale\":\"linear\","
		"\"buckets\":[{\"low\":15,\"high\":19,\"count\":2},"
		"{\"low\":25,\"high\":29,\"count\":2}],"
		"\"total\":4,\"p50\":20,\"p90\":29,\"p99\":29.9}\n");
	free(out);
}

static void test_json_linear_negative_and_empty(void **state)
{
	const unsigned long long vals[2] = { 1, 0 };
	const unsigned long long none[2] = { 0, 0 };
	const struct hist_arg a = { vals, 2, -10, 5, "v" };
	const struct hist_arg e = { none, 2, -10, 5, "v" };
	char *out;

	(void)state;
	out = json_record(fill_linear, &a);
	assert_string_equal(out,
		"{\"type\":\"hist\",\"unit\":\"v\",\"scale\":\"linear\","
		"\"buckets\":[{\"low\":-10,\"high\":-6,\"count\":1}],"
		"\"total\":1,\"p50\":-7.5,\"p90\":-5.5,\"p99\":-5.05}\n");
	free(out);
	out = json_record(fill_linear, &e);
	assert_string_equal(out,
		"{\"type\":\"hist\",\"unit\":\"v\",\"scale\":\"linear\","
		"\"buckets\":[],\"total\":0,\"p50\":null,\"p90\":null,\"p99\":null}\n");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_log2_bounds),
		cmocka_unit_test(test_log2_bounds_contiguous),
		cmocka_unit_test(test_print_log2_bcc_format),
		cmocka_unit_test(test_print_log2_leading_zeros),
		cmocka_unit_test(test_print_log2_empty),
		cmocka_unit_test(test_print_log2_narrow_at_32),
		cmocka_unit_test(test_print_log2_wide),
		cmocka_unit_test(test_print_linear),
		cmocka_unit_test(test_print_linear_negative_base),
		cmocka_unit_test(test_print_linear_empty),
		cmocka_unit_test(test_quantile_log2),
		cmocka_unit_test(test_quantile_log2_one_bucket),
		cmocka_unit_test(test_quantile_linear),
		cmocka_unit_test(test_quantile_empty),
		cmocka_unit_test(test_json_log2),
		cmocka_unit_test(test_json_log2_two_buckets),
		cmocka_unit_test(test_json_log2_empty),
		cmocka_unit_test(test_json_log2_top_bucket),
		cmocka_unit_test(test_json_linear),
		cmocka_unit_test(test_json_linear_negative_and_empty),
	};

	return cmocka_run_group_tests_name("hist", tests, NULL, NULL);
}
