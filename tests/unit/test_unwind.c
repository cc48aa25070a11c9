/* Unit tests of the CFI unwinder (libtrace/unwind.c) on a snapshot this
 * test takes of its own stack: the registers and the top of the stack at
 * one instruction of a leaf function, as BPF captures them, and the
 * frame-pointer walk of the same stack, as the kernel makes it.
 *
 * The chains:
 *   fp_a -> fp_b -> fp_c -> leaf: fp_* keep frame pointers, leaf keeps
 *     none (a libc syscall wrapper's shape): the frame-pointer walk misses
 *     fp_c; auto mode finds it with a snapshot of the leaf's few bytes.
 *   nofp_a -> nofp_b -> nofp_c -> leaf: no frame pointers anywhere: cfi
 *     mode unwinds it all from the snapshot; a snapshot too small to reach
 *     the outer frames stops with its reason, and nothing is invented. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "symbolize.h"
#include "unwind.h"

#if defined(__x86_64__) || defined(__aarch64__)

#define SNAP 8192

static uint64_t stack_end;  /* of the [stack] mapping: the copy stops there */

static struct {
	struct tk_uregs r;
	uint8_t snap[SNAP];
	size_t len;
	uint64_t fp[64];
	size_t nfp;
} cap;

/* The snapshot and the frame-pointer walk over it (as the kernel's:
 * the IP, then the return address above each frame pointer). */
__attribute__((noinline, optimize("omit-frame-pointer"))) static int leaf(int x)
{
	uint64_t bp;

#if defined(__x86_64__)
	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(cap.r.ip), "=r"(cap.r.sp), "=r"(cap.r.bp));
#else
	/* x30 still holds the return address: no call has been made yet. */
	__asm__ volatile("adr %0, .\n\tmov %1, sp\n\tmov %2, x29\n\tmov %3, x30"
			 : "=r"(cap.r.ip), "=r"(cap.r.sp), "=r"(cap.r.bp), "=r"(cap.r.lr));
#endif
	cap.len = stack_end - cap.r.sp < SNAP ? stack_end - cap.r.sp : SNAP;
	memcpy(cap.snap, (void *)cap.r.sp, cap.len);
	cap.nfp = 0;
	cap.fp[cap.nfp++] = cap.r.ip;
	for (bp = cap.r.bp; bp >= cap.r.sp && bp + 16 <= cap.r.sp + cap.len && cap.nfp < 64;) {
		uint64_t next, ret;

		memcpy(&next, cap.snap + (bp - cap.r.sp), 8);
		memcpy(&ret, cap.snap + (bp + 8 - cap.r.sp), 8);
		if (!ret)
			break;
		cap.fp[cap.nfp++] = ret;
		if (next <= bp)
			break;
		bp = next;
	}
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

#define CHAIN(name, attr, callee)                                            \
	__attribute__((noinline, optimize(attr))) int name(int x)            \
	{                                                                    \
		int r = callee(x + 1);                                       \
		__asm__ volatile("" : "+r"(r));                              \
		return r * 3;                                                \
	}

CHAIN(fp_c, "no-omit-frame-pointer", leaf)
CHAIN(fp_b, "no-omit-frame-pointer", fp_c)
CHAIN(fp_a, "no-omit-frame-pointer", fp_b)
CHAIN(nofp_c, "omit-frame-pointer", leaf)
CHAIN(nofp_b, "omit-frame-pointer", nofp_c)
CHAIN(nofp_a, "omit-frame-pointer", nofp_b)

static struct tk_syms *syms;

/* The function of address a (a return address unless leaf). */
static const char *fn(uint64_t a, bool is_leaf)
{
	static char buf[8][256];
	static int i;
	struct tk_sym sym;

	tk_syms_user(syms, getpid(), is_leaf ? a : a - 1, &sym, 1);
	i = (i + 1) % 8;
	tk_sym_format(&sym, buf[i], sizeof(buf[i]));
	return buf[i];
}

static int setup(void **state)
{
	struct tk_syms_opts o = { 0 };
	unsigned long long start, end;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	(void)state;
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]") && sscanf(line, "%llx-%llx", &start, &end) == 2)
			stack_end = end;
	if (f)
		fclose(f);
	if (!stack_end)
		return -1;
	syms = tk_syms_new(&o);
	return syms ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	tk_syms_free(syms);
	return 0;
}

/* Frames names[0..n) are out[0..n); a NULL name ends the list. */
static void expect(const uint64_t *out, size_t n, const char *const *names)
{
	size_t i;

	for (i = 0; names[i]; i++) {
		assert_true(i < n);
		assert_string_equal(fn(out[i], i == 0), names[i]);
	}
}

static void test_auto_finds_the_frameless_leafs_caller(void **state)
{
	static const char *const want[] = { "leaf", "fp_c", "fp_b", "fp_a",
					    "test_auto_finds_the_frameless_leafs_caller", NULL };
	uint64_t out[64];
	enum tk_unwind_stop stop;
	const char *module;
	size_t n;

	(void)state;
	fp_a(1);
	/* The walk misses fp_c: leaf keeps no frame pointer. */
	assert_true(cap.nfp >= 3);
	assert_string_equal(fn(cap.fp[1], false), "fp_b");
	/* 64 bytes: the leaf's frame and return address, no more. */
	n = tk_unwind_user(syms, getpid(), TK_UNWIND_AUTO, &cap.r, cap.snap, 64,
			   cap.fp, cap.nfp, out, 64, &stop, &module);
	assert_int_equal(stop, TK_UNWIND_DONE);
	assert_int_equal(n, cap.nfp + 1);
	expect(out, n, want);
	/* From fp_b outwards, exactly the walk's frames. */
	assert_memory_equal(out + 2, cap.fp + 1, (cap.nfp - 1) * sizeof(*out));
}

static void test_fp_mode_is_the_walk(void **state)
{
	uint64_t out[64];
	enum tk_unwind_stop stop;
	const char *module;
	size_t n;

	(void)state;
	fp_a(1);
	n = tk_unwind_user(syms, getpid(), TK_UNWIND_FP, &cap.r, cap.snap, cap.len,
			   cap.fp, cap.nfp, out, 64, &stop, &module);
	assert_int_equal(n, cap.nfp);
	assert_memory_equal(out, cap.fp, n * sizeof(*out));
}

static void test_cfi_unwinds_without_frame_pointers(void **state)
{
	static const char *const want[] = { "leaf", "nofp_c", "nofp_b", "nofp_a",
					    "test_cfi_unwinds_without_frame_pointers", NULL };
	uint64_t out[64];
	enum tk_unwind_stop stop;
	const char *module;
	size_t n;

	(void)state;
	nofp_a(1);
	n = tk_unwind_user(syms, getpid(), TK_UNWIND_CFI, &cap.r, cap.snap, cap.len,
			   cap.fp, cap.nfp, out, 64, &stop, &module);
	expect(out, n, want);
	/* Through cmocka and libc to _start, or to the snapshot's end. */
	assert_true(stop == TK_UNWIND_DONE || stop == TK_UNWIND_SNAPSHOT);
}

static void test_small_snapshot_stops_with_its_reason(void **state)
{
	uint64_t out[64];
	enum tk_unwind_stop stop;
	const char *module;
	size_t n, len;

	(void)state;
	nofp_a(1);
	/* The smallest copy that takes the unwind past the leaf (its frame
	 * and saved return address, whose size is the compiler's) reaches
	 * no further than nofp_c's frame. */
	for (len = 8, n = 0; len <= 256; len += 8) {
		n = tk_unwind_user(syms, getpid(), TK_UNWIND_CFI, &cap.r, cap.snap, len,
				   cap.fp, cap.nfp, out, 64, &stop, &module);
		/* Less than the leaf's frame: the walk stands. */
		if (stop != TK_UNWIND_FALLBACK)
			break;
	}
	assert_int_equal(stop, TK_UNWIND_SNAPSHOT);
	assert_true(n >= 2 && n <= 3);
	assert_string_equal(fn(out[0], true), "leaf");
	assert_string_equal(fn(out[1], false), "nofp_c");
	assert_string_equal(tk_unwind_marker(stop), "[unwind: snapshot too small]");
}

static void test_registers_of_another_moment_fall_back(void **state)
{
	uint64_t out[64];
	enum tk_unwind_stop stop;
	const char *module;
	struct tk_uregs r;
	size_t n;

	(void)state;
	fp_a(1);
	r = cap.r;
	r.ip += 1;  /* not the walk's leaf */
	n = tk_unwind_user(syms, getpid(), TK_UNWIND_AUTO, &r, cap.snap, cap.len,
			   cap.fp, cap.nfp, out, 64, &stop, &module);
	assert_int_equal(stop, TK_UNWIND_FALLBACK);
	assert_int_equal(n, cap.nfp);
	assert_memory_equal(out, cap.fp, n * sizeof(*out));
	assert_null(tk_unwind_marker(stop));
}

static void test_mode_names(void **state)
{
	(void)state;
	assert_int_equal(tk_unwind_mode_parse("fp"), TK_UNWIND_FP);
	assert_int_equal(tk_unwind_mode_parse("auto"), TK_UNWIND_AUTO);
	assert_int_equal(tk_unwind_mode_parse("cfi"), TK_UNWIND_CFI);
	assert_int_equal(tk_unwind_mode_parse("dwarf"), -1);
	assert_string_equal(tk_unwind_mode_name(TK_UNWIND_CFI), "cfi");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_auto_finds_the_frameless_leafs_caller),
		cmocka_unit_test(test_fp_mode_is_the_walk),
		cmocka_unit_test(test_cfi_unwinds_without_frame_pointers),
		cmocka_unit_test(test_small_snapshot_stops_with_its_reason),
		cmocka_unit_test(test_registers_of_another_moment_fall_back),
		cmocka_unit_test(test_mode_names),
	};

	if (geteuid()) {
		fprintf(stderr, "test_unwind: needs root (/proc/PID/map_files)\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, setup, teardown);
}

#else

int main(void)
{
	printf("test_unwind: x86-64 and arm64 only (the unwinder's and its registers' "
	       "capture); skipped\n");
	return 0;
}

#endif
