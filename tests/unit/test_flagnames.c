/* Unit tests of libtrace/flagnames.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "flagnames.h"

static const struct tk_flag_name ms[] = {
	{ 0xffff0000, 0xc0ed0000, "MS_MGC_VAL" },
	{ 1, 1, "MS_RDONLY" }, { 2, 2, "MS_NOSUID" }, { 4, 4, "MS_NODEV" },
	{ 0 },
};

static const struct tk_flag_name attr[] = {
	{ 1, 1, "MOUNT_ATTR_RDONLY" },
	{ 0x70, 0x10, "MOUNT_ATTR_NOATIME" },
	{ 0x70, 0x20, "MOUNT_ATTR_STRICTATIME" },
	{ 0 },
};

static void test_bits_and_leftover(void **state)
{
	char buf[64];

	(void)state;
	assert_string_equal(tk_flags_str(buf, sizeof(buf), 6, ms), "MS_NOSUID|MS_NODEV");
	assert_string_equal(tk_flags_str(buf, sizeof(buf), 0x41, ms), "MS_RDONLY|0x40");
	assert_string_equal(tk_flags_str(buf, sizeof(buf), 0, ms), "0x0");
	assert_string_equal(tk_flags_str(buf, sizeof(buf), 0x80, ms), "0x80");
	assert_string_equal(tk_flags_str(buf, sizeof(buf), 0xc0ed0002, ms),
			    "MS_MGC_VAL|MS_NOSUID");
	/* The magic's top half alone, not the magic: hex. */
	assert_string_equal(tk_flags_str(buf, sizeof(buf), 0xc0000000, ms), "0xc0000000");
}

static void test_fields(void **state)
{
	char buf[64];

	(void)state;
	assert_string_equal(tk_flags_str(buf, sizeof(buf), 0x11, attr),
			    "MOUNT_ATTR_RDONLY|MOUNT_ATTR_NOATIME");
	assert_string_equal(tk_flags_str(buf, sizeof(buf), 0x20, attr),
			    "MOUNT_ATTR_STRICTATIME");
	assert_string_equal(tk_flags_str(buf, sizeof(buf), 0x30, attr), "0x30");
}

static void test_cut_at_len(void **state)
{
	char buf[12];

	(void)state;
	tk_flags_str(buf, sizeof(buf), 6, ms);
	assert_string_equal(buf, "MS_NOSUID|M");
	assert_string_equal(tk_flags_str(buf, 1, 6, ms), "");
}

static void test_enum(void **state)
{
	(void)state;
	assert_string_equal(tk_enum_name(0x10, attr), "MOUNT_ATTR_NOATIME");
	assert_null(tk_enum_name(0x40, attr));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bits_and_leftover),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_cut_at_len),
		cmocka_unit_test(test_enum),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
