/* Unit tests of libtrace/uprobe_entry.c: an entry probe moves past a
 * leading `test reg,reg` onto the jump the kernel emulates, and nowhere
 * else; the code span around a probe is its file's executable segment,
 * as the kernel maps it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "uprobe_entry.h"

#define TMPDIR_TEMPLATE "/tmp/tk-uprobe-entry-XXXXXX"
#include "tmpdir.h"

/* The offset chosen for code placed at offset 16 of a file. */
static unsigned long long offset_for(const unsigned char *code, size_t len)
{
	char path[PATH_MAX];
	unsigned char buf[64] = { 0 };
	FILE *f;

	snprintf(path, sizeof(path), "%s/code", tmpdir);
	memcpy(buf + 16, code, len);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, 16 + len, f), 16 + len);
	fclose(f);
	return tk_uprobe_entry_offset(path, 16);
}

static void test_glibc_free_moves_to_its_je(void **state)
{
	/* test %rdi,%rdi; je rel32: glibc 2.41's free */
	const unsigned char code[] = { 0x48, 0x85, 0xff, 0x0f, 0x84, 0xbf, 0, 0, 0 };

	(void)state;
#ifdef __x86_64__
	assert_int_equal(offset_for(code, sizeof(code)), 19);
#else
	assert_int_equal(offset_for(code, sizeof(code)), 16);
#endif
}

static void test_short_jcc_and_extended_registers(void **state)
{
	const unsigned char r12[] = { 0x4d, 0x85, 0xe4, 0x74, 0x10 };  /* test %r12,%r12; je */
	const unsigned char rsi[] = { 0x48, 0x85, 0xf6, 0x75, 0x10 };  /* test %rsi,%rsi; jne */

	(void)state;
#ifdef __x86_64__
	assert_int_equal(offset_for(r12, sizeof(r12)), 19);
	assert_int_equal(offset_for(rsi, sizeof(rsi)), 19);
#else
	assert_int_equal(offset_for(r12, sizeof(r12)), 16);
	assert_int_equal(offset_for(rsi, sizeof(rsi)), 16);
#endif
}

static void test_anything_else_stays(void **state)
{
	const unsigned char push[] = { 0x41, 0x54, 0x55, 0x53, 0x48 };      /* malloc: push %r12 */
	const unsigned char two_regs[] = { 0x48, 0x85, 0xf7, 0x74, 0x10 };  /* test %rsi,%rdi */
	const unsigned char mixed[] = { 0x4c, 0x85, 0xff, 0x74, 0x10 };     /* test %r15,%rdi */
	const unsigned char no_jump[] = { 0x48, 0x85, 0xff, 0x55, 0x53 };   /* test; push */
	const unsigned char test32[] = { 0x85, 0xff, 0x74, 0x10, 0x90 };    /* test %edi,%edi */

	(void)state;
	assert_int_equal(offset_for(push, sizeof(push)), 16);
	assert_int_equal(offset_for(two_regs, sizeof(two_regs)), 16);
	assert_int_equal(offset_for(mixed, sizeof(mixed)), 16);
	assert_int_equal(offset_for(no_jump, sizeof(no_jump)), 16);
	assert_int_equal(offset_for(test32, sizeof(test32)), 16);
}

static void test_unreadable_or_short_file_stays(void **state)
{
	const unsigned char cut[] = { 0x48, 0x85, 0xff, 0x0f };  /* ends mid-instruction */

	(void)state;
	assert_int_equal(tk_uprobe_entry_offset("/nonexistent/libc.so.6", 16), 16);
	assert_int_equal(offset_for(cut, sizeof(cut)), 16);
}

/* The mapping of this program's file that holds addr: [start, end) at
 * file offset off. */
static void own_mapping(uintptr_t addr, uintptr_t *start, uintptr_t *end, unsigned long long *off)
{
	char exe[PATH_MAX], line[PATH_MAX + 128], path[PATH_MAX], perms[8];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *f = fopen("/proc/self/maps", "r");
	bool found = false;

	assert_true(n > 0);
	exe[n] = 0;
	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%lx-%lx %7s %llx %*s %*s %4095s", start, end, perms, off,
			       path) == 5 && addr >= *start && addr < *end && !strcmp(path, exe);
	fclose(f);
	assert_true(found);
}

static void test_code_span_is_the_mapped_segment(void **state)
{
	uintptr_t start, end, here = (uintptr_t)&own_mapping;
	unsigned long long off, below, above, below2, above2;

	(void)state;
	own_mapping(here, &start, &end, &off);
	assert_true(tk_uprobe_code_span("/proc/self/exe", here - start + off, &below, &above));
	/* The segment lies inside the mapping (which rounds it to pages)
	 * and holds the function. */
	assert_true(here - below >= start && here + above <= end);
	assert_true(below > 0 && above > 0);
	/* Another place in it: the same segment. */
	assert_true(tk_uprobe_code_span("/proc/self/exe", here - start + off - below, &below2,
					&above2));
	assert_int_equal(below2, 0);
	assert_int_equal(above2, below + above);
}

static int writable = 1;

static void test_code_span_outside_code(void **state)
{
	uintptr_t start, end, here = (uintptr_t)&writable;
	unsigned long long off, below = 1, above = 1;

	(void)state;
	/* A variable's place in the file: the data segment. */
	own_mapping(here, &start, &end, &off);
	assert_false(tk_uprobe_code_span("/proc/self/exe", here - start + off, &below, &above));
	assert_true(below == 0 && above == 0);
	assert_false(tk_uprobe_code_span("/proc/self/exe", 1ULL << 40, &below, &above));
	assert_false(tk_uprobe_code_span("/nonexistent/libc.so.6", 16, &below, &above));
	assert_true(below == 0 && above == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_glibc_free_moves_to_its_je),
		cmocka_unit_test(test_short_jcc_and_extended_registers),
		cmocka_unit_test(test_anything_else_stays),
		cmocka_unit_test(test_unreadable_or_short_file_stays),
		cmocka_unit_test(test_code_span_is_the_mapped_segment),
		cmocka_unit_test(test_code_span_outside_code),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
