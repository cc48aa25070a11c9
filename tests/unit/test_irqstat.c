/* libtrace/irqstat.c's rows by name: hardirqs keys its totals by the
 * action's address, and actions of one name (one driver's handlers on
 * several lines, or one line's after a rebind) must show as one row,
 * their totals added, as bcc's map keyed by name shows them. The file
 * is compiled in here for its static name_and_merge. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../libtrace/irqstat.c"

/* Keys 1..6: three actions named eth0, two virtio1-req.0, one timer. */
static void fake_name(const void *key, char *buf, size_t len)
{
	static const char *const names[] = {
		"", "virtio1-req.0", "eth0", "virtio1-req.0", "timer", "eth0", "eth0",
	};
	uint64_t k;

	memcpy(&k, key, sizeof(k));
	snprintf(buf, len, "%s", names[k]);
}

static void set_row(struct row *r, uint64_t key, unsigned long long count,
		    unsigned long long ns, int slot)
{
	memset(r, 0, sizeof(*r));
	memcpy(r->key, &key, sizeof(key));
	r->v.count = count;
	r->v.total_ns = ns;
	r->v.slots[slot] = count;
}

static void test_rows_of_one_name_are_one(void **state)
{
	static const struct tk_irq_kind kind = { .key_size = 8, .name = fake_name };
	struct row rows[6];
	long n;

	(void)state;
	the_kind = &kind;
	set_row(&rows[0], 5, 1, 10, 3);
	set_row(&rows[1], 1, 2, 20, 4);
	set_row(&rows[2], 4, 4, 40, 5);
	set_row(&rows[3], 3, 8, 80, 4);
	set_row(&rows[4], 2, 16, 160, 6);
	set_row(&rows[5], 6, 32, 320, 3);
	n = name_and_merge(rows, 6);
	assert_int_equal(n, 3);
	/* By name: eth0 (keys 5, 2, 6), timer (4), virtio1-req.0 (1, 3). */
	assert_string_equal(rows[0].name, "eth0");
	assert_int_equal(rows[0].v.count, 1 + 16 + 32);
	assert_int_equal(rows[0].v.total_ns, 10 + 160 + 320);
	assert_int_equal(rows[0].v.slots[3], 1 + 32);
	assert_int_equal(rows[0].v.slots[6], 16);
	assert_string_equal(rows[1].name, "timer");
	assert_int_equal(rows[1].v.count, 4);
	assert_int_equal(rows[1].v.slots[5], 4);
	assert_string_equal(rows[2].name, "virtio1-req.0");
	assert_int_equal(rows[2].v.count, 2 + 8);
	assert_int_equal(rows[2].v.total_ns, 20 + 80);
	assert_int_equal(rows[2].v.slots[4], 2 + 8);
}

static void test_distinct_names_stay(void **state)
{
	static const struct tk_irq_kind kind = { .key_size = 8, .name = fake_name };
	struct row rows[3];

	(void)state;
	the_kind = &kind;
	set_row(&rows[0], 4, 1, 1, 0);
	set_row(&rows[1], 2, 2, 2, 0);
	set_row(&rows[2], 1, 3, 3, 0);
	assert_int_equal(name_and_merge(rows, 3), 3);
	assert_string_equal(rows[0].name, "eth0");
	assert_string_equal(rows[1].name, "timer");
	assert_string_equal(rows[2].name, "virtio1-req.0");
	assert_int_equal(name_and_merge(rows, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_of_one_name_are_one),
		cmocka_unit_test(test_distinct_names_stay),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
