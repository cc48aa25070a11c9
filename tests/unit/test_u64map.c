/* libtrace's small tables: u64map (values by 64-bit key) and strtab
 * (interned names), checked against a plain array of what was put. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "strtab.h"
#include "u64map.h"

struct val {
	uint64_t twice;
	char tag[5];         /* an odd size: values are rounded up to 8 */
};

static uint64_t next_key(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void test_empty_map_finds_nothing(void **state)
{
	struct tk_u64map m = TK_U64MAP_INIT(struct val);
	size_t pos = 0;

	(void)state;
	assert_null(tk_u64map_get(&m, 0));
	assert_null(tk_u64map_get(&m, 42));
	assert_null(tk_u64map_next(&m, &pos, NULL));
	assert_int_equal(tk_u64map_count(&m), 0);
	tk_u64map_free(&m);
}

/* Keys of every kind (0, small runs as tgids come, all-ones, random),
 * through many growths: each found with its own value, a new value
 * zeroed, a second put of a key giving the same value. */
static void test_put_get_through_growth(void **state)
{
	enum { N = 20000 };
	struct tk_u64map m = TK_U64MAP_INIT(struct val);
	uint64_t *keys = malloc(N * sizeof(*keys)), x = 0x9e3779b97f4a7c15ULL;
	size_t n = 0;
	bool added;

	(void)state;
	assert_non_null(keys);
	keys[n++] = 0;
	keys[n++] = UINT64_MAX;
	for (uint64_t k = 1; k <= 5000; k++)
		keys[n++] = k;
	for (uint64_t k = 1; k <= 2000; k++)
		keys[n++] = k << 32;     /* equal low bits */
	while (n < N)
		keys[n++] = next_key(&x);
	for (size_t i = 0; i < n; i++) {
		struct val *v = tk_u64map_put(&m, keys[i], &added);

		assert_non_null(v);
		assert_true(added);
		assert_int_equal(v->twice, 0);
		assert_int_equal(v->tag[0], 0);
		v->twice = keys[i] * 2;
		memcpy(v->tag, "abcd", 5);
		assert_ptr_equal(tk_u64map_put(&m, keys[i], &added), v);
		assert_false(added);
	}
	assert_int_equal(tk_u64map_count(&m), n);
	for (size_t i = 0; i < n; i++) {
		struct val *v = tk_u64map_get(&m, keys[i]);

		assert_non_null(v);
		assert_int_equal(v->twice, keys[i] * 2);
		assert_string_equal(v->tag, "abcd");
		assert_int_equal((uintptr_t)v % 8, 0);
	}
	assert_null(tk_u64map_get(&m, 5001));
	assert_null(tk_u64map_get(&m, 2001ULL << 32));
	free(keys);
	tk_u64map_free(&m);
	assert_null(tk_u64map_get(&m, 0));
}

/* Iteration gives every entry once, with its key. */
static void test_next_visits_each_entry_once(void **state)
{
	struct tk_u64map m = TK_U64MAP_INIT(uint32_t);
	static unsigned char seen[3000];
	uint64_t key;
	uint32_t *v;
	size_t pos = 0, count = 0;

	(void)state;
	for (uint32_t k = 0; k < 3000; k += 3)
		*(uint32_t *)tk_u64map_put(&m, k, NULL) = k + 7;
	while ((v = tk_u64map_next(&m, &pos, &key))) {
		assert_true(key < 3000 && key % 3 == 0);
		assert_int_equal(*v, key + 7);
		assert_int_equal(seen[key]++, 0);
		count++;
	}
	assert_int_equal(count, 1000);
	assert_null(tk_u64map_next(&m, &pos, &key));
	tk_u64map_free(&m);
}

static void test_strtab_interns_by_content(void **state)
{
	struct tk_strtab t = { 0 };
	const char *line = "ext4]xfs]ext4]";
	long ext4, xfs;

	(void)state;
	assert_int_equal(tk_strtab_intern(&t, "kernel", 6), 0);
	ext4 = tk_strtab_intern(&t, line, 4);
	xfs = tk_strtab_intern(&t, line + 5, 3);
	assert_int_equal(ext4, 1);
	assert_int_equal(xfs, 2);
	assert_int_equal(tk_strtab_intern(&t, line + 9, 4), ext4);
	/* A prefix of a name, or a name with more after it, is another. */
	assert_int_equal(tk_strtab_intern(&t, "ext", 3), 3);
	assert_int_equal(tk_strtab_intern(&t, "ext4x", 5), 4);
	assert_int_equal(tk_strtab_intern(&t, "", 0), 5);
	assert_string_equal(t.strs[ext4], "ext4");
	assert_string_equal(t.strs[xfs], "xfs");
	assert_int_equal(t.n, 6);
	tk_strtab_free(&t);
	assert_int_equal(t.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_map_finds_nothing),
		cmocka_unit_test(test_put_get_through_growth),
		cmocka_unit_test(test_next_visits_each_entry_once),
		cmocka_unit_test(test_strtab_interns_by_content),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
