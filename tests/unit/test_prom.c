/* libtrace's Prometheus exposition (prom.c) and capped series (series.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prom.h"
#include "series.h"

/* What fn wrote, as a string the caller frees. */
#define CAPTURE(out, stmt)                                         \
	do {                                                       \
		size_t len_;                                       \
		FILE *f = open_memstream(&(out), &len_);           \
		assert_non_null(f);                                \
		stmt;                                              \
		fclose(f);                                         \
	} while (0)

static void test_family_and_samples(void **state)
{
	char *out;

	(void)state;
	CAPTURE(out, {
		tk_prom_family(f, "x_total", "counter", "Help with \\ and\nnewline.");
		tk_prom_sample(f, "x_total", 42, "a", "1", "b", "two", NULL);
		tk_prom_sample(f, "y", 0.25, NULL);
		tk_prom_sample(f, "y", 1e20, NULL);
		tk_prom_sample(f, "y", 0.075459, NULL);
	});
	assert_string_equal(out,
		"# HELP x_total Help with \\\\ and\\nnewline.\n"
		"# TYPE x_total counter\n"
		"x_total{a=\"1\",b=\"two\"} 42\n"
		"y 0.25\n"
		"y 1e+20\n"
		"y 0.075459\n");
	free(out);
}

static void test_label_escaping(void **state)
{
	char *out;

	(void)state;
	/* quote, backslash, newline escaped; é kept; a lone 0xff and a
	 * truncated sequence become U+FFFD. */
	CAPTURE(out, tk_prom_sample(f, "m", 1, "comm", "a\"b\\c\nd\xc3\xa9\xff\xe2\x82", NULL));
	assert_string_equal(out, "m{comm=\"a\\\"b\\\\c\\nd\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"} 1\n");
	free(out);
}

static void test_log2_histogram(void **state)
{
	const unsigned long long b[4] = { 1, 0, 2, 5 };  /* last: 8 and above */
	const char *labels[] = { "cpu", "0" };
	char *out;

	(void)state;
	CAPTURE(out, tk_prom_log2_histogram(f, "lat_seconds", b, 4, 1e-6, 0.5, labels, 1));
	assert_string_equal(out,
		"lat_seconds_bucket{cpu=\"0\",le=\"2e-06\"} 1\n"
		"lat_seconds_bucket{cpu=\"0\",le=\"4e-06\"} 1\n"
		"lat_seconds_bucket{cpu=\"0\",le=\"8e-06\"} 3\n"
		"lat_seconds_bucket{cpu=\"0\",le=\"+Inf\"} 8\n"
		"lat_seconds_sum{cpu=\"0\"} 0.5\n"
		"lat_seconds_count{cpu=\"0\"} 8\n");
	free(out);
	/* 2^31 us prints exactly. */
	{
		unsigned long long big[32] = { 0 };

		CAPTURE(out, tk_prom_log2_histogram(f, "h", big, 32, 1e-6, 0, NULL, 0));
		assert_non_null(strstr(out, "h_bucket{le=\"2147.483648\"} 0\n"));
		free(out);
	}
}

struct seen {
	int n;
	unsigned long long total;
	unsigned long long a;
};

static void count(const char *key, unsigned long long n, void *ctx)
{
	struct seen *s = ctx;

	s->n++;
	s->total += n;
	if (!strcmp(key, "a"))
		s->a = n;
}

static void test_series_cap(void **state)
{
	struct tk_series *s = tk_series_new(3);
	struct seen seen = { 0 };
	char key[16];
	int i;

	(void)state;
	assert_non_null(s);
	tk_series_add(s, "a", 1);
	tk_series_add(s, "", 2);  /* an empty comm is a key too */
	for (i = 0; i < 100; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		tk_series_add(s, key, 1);
	}
	tk_series_add(s, "a", 5);  /* kept keys stay exact */
	assert_int_equal(tk_series_size(s), 3);
	assert_true(tk_series_overflow(s) == 99);
	tk_series_foreach(s, count, &seen);
	assert_int_equal(seen.n, 3);
	assert_true(seen.a == 6);
	assert_true(seen.total == 6 + 2 + 1);
	tk_series_free(s);
	assert_null(tk_series_new(0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_family_and_samples),
		cmocka_unit_test(test_label_escaping),
		cmocka_unit_test(test_log2_histogram),
		cmocka_unit_test(test_series_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
