/* Unit tests of libtrace/block.c: request names and disk names. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "block.h"
#include "tk_block.h"

static void test_rwbs(void **state)
{
	char b[8];

	(void)state;
	assert_string_equal(tk_bio_rwbs(0, b, sizeof(b)), "R");
	assert_string_equal(tk_bio_rwbs(1 | TK_BIO_SYNC, b, sizeof(b)), "WS");
	assert_string_equal(tk_bio_rwbs(0 | TK_BIO_RAHEAD, b, sizeof(b)), "RA");
	assert_string_equal(tk_bio_rwbs(1 | TK_BIO_PREFLUSH | TK_BIO_FUA | TK_BIO_SYNC, b,
					sizeof(b)), "FWFS");
	assert_string_equal(tk_bio_rwbs(1 | TK_BIO_META | TK_BIO_SYNC, b, sizeof(b)), "WSM");
	assert_string_equal(tk_bio_rwbs(2, b, sizeof(b)), "F");
	assert_string_equal(tk_bio_rwbs(3, b, sizeof(b)), "D");
	assert_string_equal(tk_bio_rwbs(5, b, sizeof(b)), "DE");
	assert_string_equal(tk_bio_rwbs(9, b, sizeof(b)), "N");
	assert_string_equal(tk_bio_rwbs(1, b, 2), "W");   /* cut to fit */
}

static void test_op_letter(void **state)
{
	(void)state;
	assert_int_equal(tk_bio_op_letter(0 | TK_BIO_SYNC), 'R');
	assert_int_equal(tk_bio_op_letter(1), 'W');
	assert_int_equal(tk_bio_op_letter(2), 'F');
	assert_int_equal(tk_bio_op_letter(3), 'D');
	assert_int_equal(tk_bio_op_letter(5), 'D');
	assert_int_equal(tk_bio_op_letter(9), 'N');
	assert_int_equal(tk_bio_op_letter(0xff), 'N');
}

/* bcc's biolatency -F names: the last prefix bcc adds comes first. */
static void test_flags_desc(void **state)
{
	char b[96];

	(void)state;
	assert_string_equal(tk_bio_flags_desc(0, b, sizeof(b)), "Read");
	assert_string_equal(tk_bio_flags_desc(1 | TK_BIO_SYNC, b, sizeof(b)), "Sync-Write");
	assert_string_equal(tk_bio_flags_desc(0 | TK_BIO_RAHEAD | TK_BIO_META, b, sizeof(b)),
			    "ReadAhead-Metadata-Read");
	assert_string_equal(tk_bio_flags_desc(1 | TK_BIO_FUA | TK_BIO_SYNC, b, sizeof(b)),
			    "ForcedUnitAccess-Sync-Write");
	assert_string_equal(tk_bio_flags_desc(9, b, sizeof(b)), "WriteZeros");
	assert_string_equal(tk_bio_flags_desc(4, b, sizeof(b)), "Unknown");
	assert_string_equal(tk_bio_flags_desc(200, b, sizeof(b)), "Unknown");
}

static void test_disk_name(void **state)
{
	FILE *f = fopen("/sys/dev/block/1:0", "r");

	(void)state;
	/* A device number no kernel gives a disk: unknown, and asked again
	 * next time (not kept). */
	assert_string_equal(tk_disk_name(TK_KDEV(4095, 1048575)), "?");
	assert_string_equal(tk_disk_name(TK_KDEV(4095, 1048575)), "?");
	if (f) {  /* ram0 where the brd module is loaded */
		fclose(f);
		assert_string_equal(tk_disk_name(TK_KDEV(1, 0)), "ram0");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rwbs),
		cmocka_unit_test(test_op_letter),
		cmocka_unit_test(test_flags_desc),
		cmocka_unit_test(test_disk_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
