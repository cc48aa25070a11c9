/* tk_print_intervals: the periodic tools' main loop. A stop (Ctrl-C,
 * --duration) that comes while an interval is being printed may come
 * after what that print read: the loop must print once more. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "opts.h"
#include "setup.h"

static int prints;

static void print_and_stop_in_the_first(void *arg, int seq)
{
	(void)arg;
	assert_int_equal(seq, ++prints);
	if (seq == 1)
		tk_request_stop();   /* as a SIGINT handled mid-print */
}

/* One process, in this order: a stop cannot be taken back. */
static void test_a_stop_during_a_print_prints_once_more(void **state)
{
	(void)state;
	tk_opts.interval = 1;
	tk_opts.count = 0;
	tk_print_intervals(print_and_stop_in_the_first, NULL);
	assert_int_equal(prints, 2);

	/* Stopped before the print: that print is the last. */
	prints = 0;
	tk_print_intervals(print_and_stop_in_the_first, NULL);
	assert_int_equal(prints, 1);

	/* The count's last interval is the last, stop or not. */
	prints = 0;
	tk_opts.count = 1;
	tk_print_intervals(print_and_stop_in_the_first, NULL);
	assert_int_equal(prints, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_stop_during_a_print_prints_once_more),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
