/* Unit tests of libtrace/kbtf.c: the kernel's enumerators, from a BTF
 * file this test writes (--btf). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <bpf/btf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "kbtf.h"
#include "opts.h"

static char path[] = "/tmp/tk-test-kbtf-XXXXXX";

/* A named unsigned enum, an anonymous one (the kernel's QUEUE_FLAG_*),
 * a signed one and a 64-bit one. */
static int write_btf(void **state)
{
	struct btf *btf = btf__new_empty();
	const void *raw;
	__u32 size;
	int fd, id;

	(void)state;
	id = btf__add_enum(btf, "rqf_flags", 4);
	btf__add_enum_value(btf, "__RQF_STARTED", 0);
	btf__add_enum_value(btf, "__RQF_STATS", 11);
	btf__add_enum(btf, NULL, 4);
	btf__add_enum_value(btf, "QUEUE_FLAG_DYING", 0);
	btf__add_enum_value(btf, "QUEUE_FLAG_STATS", 7);
	id = btf__add_enum(btf, "signed_one", 4);
	btf__add_enum_value(btf, "TK_MINUS_TWO", -2);
	btf__add_enum64(btf, "wide", 8, false);
	btf__add_enum64_value(btf, "TK_WIDE", 1ULL << 40);
	assert_true(id > 0);
	raw = btf__raw_data(btf, &size);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, raw, size), (ssize_t)size);
	close(fd);
	btf__free(btf);
	tk_opts.btf_path = path;
	return 0;
}

static int remove_btf(void **state)
{
	(void)state;
	tk_kernel_btf_release();
	unlink(path);
	return 0;
}

static void test_enumerators(void **state)
{
	long long v = 99;

	(void)state;
	assert_int_equal(tk_kernel_enumerator("__RQF_STATS", &v), 0);
	assert_int_equal(v, 11);
	assert_int_equal(tk_kernel_enumerator("QUEUE_FLAG_STATS", &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(tk_kernel_enumerator("TK_MINUS_TWO", &v), 0);
	assert_int_equal(v, -2);
	assert_int_equal(tk_kernel_enumerator("TK_WIDE", &v), 0);
	assert_true(v == 1LL << 40);
	v = 99;
	assert_int_equal(tk_kernel_enumerator("QUEUE_FLAG_POLL", &v), -ENOENT);
	assert_int_equal(tk_kernel_enumerator("rqf_flags", &v), -ENOENT);  /* a type */
	assert_int_equal(v, 99);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_enumerators),
	};

	return cmocka_run_group_tests(tests, write_btf, remove_btf);
}
