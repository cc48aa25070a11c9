/* bpf/tk_bits.bpf.h's bucket arithmetic, compiled for the host: the
 * division-free tk_log2_div must give tk_log2 of the quotient. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

typedef uint64_t u64;
typedef uint32_t u32;
#ifndef __always_inline
#define __always_inline inline
#endif
#include "tk_bits.bpf.h"

static void check(u64 ns, u64 unit, u32 k)
{
	u32 want = tk_log2(ns / unit), got = tk_log2_div(ns, unit, k);

	if (got != want)
		fail_msg("tk_log2_div(%llu, %llu) = %u, tk_log2 of the quotient %u",
			 (unsigned long long)ns, (unsigned long long)unit, got, want);
}

/* Every bucket edge, unit * 2^b, and its neighbours, up to the top of
 * u64; and a spread of values between. */
static void test_log2_div_matches_the_division(void **state)
{
	static const struct { u64 unit; u32 k; } units[] = {
		{ 1000, 9 }, { 1000000, 19 }, { 1, 0 }, { 1024, 10 }, { 1023, 9 },
	};
	u64 x = 0x9E3779B97F4A7C15ULL;
	unsigned i, b;
	int d;

	(void)state;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		u64 unit = units[i].unit;

		for (b = 0; b < 64 && unit <= UINT64_MAX >> b; b++)
			for (d = -2; d <= 2; d++)
				if ((d >= 0 || (unit << b) >= (u64)-d) &&
				    (d <= 0 || (unit << b) <= UINT64_MAX - d))
					check((unit << b) + d, unit, units[i].k);
		for (b = 0; b < 100000; b++) {
			x ^= x << 13; x ^= x >> 7; x ^= x << 17;
			check(x >> (b % 64), unit, units[i].k);
		}
		check(0, unit, units[i].k);
		check(UINT64_MAX, unit, units[i].k);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_log2_div_matches_the_division),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
