/* tk_sleep_ms: the interval tools' wait (cachestat, vfsstat, filetop,
 * syscount). A stop must end it however the signal lands. A flag
 * checked before nanosleep misses a signal that lands between the check
 * and the sleep, and one that another thread takes: the wait then lasts
 * its whole interval (an hour for `cachestat 3600`). The second case is
 * the one a test can make at will, and has the same cure. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "opts.h"
#include "setup.h"

/* Stops the process once the main thread is most likely asleep (if it
 * is not yet, its check sees the stop and the test passes all the same:
 * it cannot fail wrongly, only, rarely, test less). */
static void *stop_later_and_take_signals(void *arg)
{
	(void)arg;
	usleep(200 * 1000);
	kill(getpid(), SIGINT);
	for (;;)
		pause();
	return NULL;
}

static void test_a_signal_taken_by_another_thread_ends_the_sleep(void **state)
{
	sigset_t stops;
	pthread_t taker;

	(void)state;
	tk_opts.duration = 0;
	tk_init();
	assert_false(tk_exiting());
	alarm(30);  /* a sleep that does not end kills the test (SIGALRM) */
	/* The taker is made first, to keep SIGINT unblocked; then this
	 * thread blocks it, so the kernel gives it to the taker and this
	 * thread's wait sees only what the handler does. */
	assert_int_equal(pthread_create(&taker, NULL, stop_later_and_take_signals, NULL), 0);
	sigemptyset(&stops);
	sigaddset(&stops, SIGINT);
	assert_int_equal(pthread_sigmask(SIG_BLOCK, &stops, NULL), 0);
	tk_sleep_ms(3600 * 1000);
	alarm(0);
	assert_true(tk_exiting() && tk_signalled());
	/* And a later sleep does not wait either: the stop stays. */
	tk_sleep_ms(3600 * 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_signal_taken_by_another_thread_ends_the_sleep),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
