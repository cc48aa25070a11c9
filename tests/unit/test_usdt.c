/* Unit tests of libtrace/usdt.c: the stapsdt note parser, on notes
 * written by hand and on a note of this very binary (an SDT probe made
 * with the assembly <sys/sdt.h> emits). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <link.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "usdt.h"

/* One probe, tktest:probe1, with a semaphore, as DTRACE_PROBE2 with
 * STAP_SDT_V2 writes it (.stapsdt.base included). */
unsigned short tktest_probe1_semaphore __attribute__((section(".probes"), used));
extern char tk_usdt_site[];

__attribute__((noinline, used)) void tk_usdt_fire(void)
{
	__asm__ volatile(
		".globl tk_usdt_site\n"
		"tk_usdt_site: nop\n"
		".pushsection .note.stapsdt,\"\",\"note\"\n"
		".balign 4\n"
		".4byte 992f-991f, 994f-993f, 3\n"
		"991: .asciz \"stapsdt\"\n"
		"992: .balign 4\n"
		"993: .8byte tk_usdt_site\n"
		".8byte _.stapsdt.base\n"
		".8byte tktest_probe1_semaphore\n"
		".asciz \"tktest\"\n"
		".asciz \"probe1\"\n"
		".asciz \"-4@%edi 8@-8(%rbp)\"\n"
		"994: .balign 4\n"
		".popsection\n"
		".ifndef _.stapsdt.base\n"
		".pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n"
		".weak _.stapsdt.base\n"
		".hidden _.stapsdt.base\n"
		"_.stapsdt.base: .space 1\n"
		".size _.stapsdt.base, 1\n"
		".popsection\n"
		".endif\n");
}

static size_t note(unsigned char *buf, bool elf64, unsigned long long pc,
		   unsigned long long base, unsigned long long sema,
		   const char *strings, size_t slen)
{
	size_t a = elf64 ? 8 : 4;

	memcpy(buf, &pc, a);  /* little-endian: the low bytes first */
	memcpy(buf + a, &base, a);
	memcpy(buf + 2 * a, &sema, a);
	memcpy(buf + 3 * a, strings, slen);
	return 3 * a + slen;
}

/* Parse the note and expect exactly these fields. */
static void expect(const unsigned char *buf, size_t len, bool elf64,
		   const char *provider, const char *name, const char *args,
		   unsigned long long pc, unsigned long long base,
		   unsigned long long sema)
{
	struct tk_usdt_probe p;

	assert_int_equal(tk_usdt_note_parse(buf, len, elf64, &p), 0);
	assert_string_equal(p.provider, provider);
	assert_string_equal(p.name, name);
	assert_string_equal(p.args, args);
	assert_true(p.pc == pc && p.addr == pc);
	assert_true(p.base == base && p.sema == sema);
	free(p.strings);
}

static void test_parse_elf64(void **state)
{
	static const char s[] = "prov\0name\0" "8@%rax -4@%edx";
	unsigned char buf[128];
	size_t len = note(buf, true, 0x4f20a1, 0x8cc5a0, 0xa84260, s, sizeof(s));

	(void)state;
	expect(buf, len, true, "prov", "name", "8@%rax -4@%edx", 0x4f20a1, 0x8cc5a0, 0xa84260);
}

static void test_parse_elf32_no_args(void **state)
{
	static const char s[] = "p\0n\0";
	unsigned char buf[64];
	size_t len = note(buf, false, 0x1234, 0, 0, s, sizeof(s));  /* "p\0n\0\0" */

	(void)state;
	expect(buf, len, false, "p", "n", "", 0x1234, 0, 0);
}

static void test_parse_malformed(void **state)
{
	static const char ok[] = "p\0n\0a";
	unsigned char buf[64];
	struct tk_usdt_probe p;
	size_t len = note(buf, true, 1, 2, 3, ok, sizeof(ok));

	(void)state;
	/* Every truncation: short addresses, strings without their NUL. */
	for (size_t cut = 0; cut < len; cut++)
		assert_int_equal(tk_usdt_note_parse(buf, cut, true, &p), -EINVAL);
	/* An empty provider or name. */
	len = note(buf, true, 1, 2, 3, "\0n\0a", 5);
	assert_int_equal(tk_usdt_note_parse(buf, len, true, &p), -EINVAL);
	len = note(buf, true, 1, 2, 3, "p\0\0a", 5);
	assert_int_equal(tk_usdt_note_parse(buf, len, true, &p), -EINVAL);
}

static void test_list_self(void **state)
{
	struct tk_usdt_probe *v;
	char err[256];
	size_t n, i, found = 0;
	/* The main program's load bias: link-time address + bias = runtime. */
	uintptr_t bias = (uintptr_t)_r_debug.r_map->l_addr;

	(void)state;
	assert_int_equal(tk_usdt_list("/proc/self/exe", &v, &n, err, sizeof(err)), 0);
	for (i = 0; i < n; i++) {
		if (strcmp(v[i].provider, "tktest") || strcmp(v[i].name, "probe1"))
			continue;
		found++;
		assert_string_equal(v[i].args, "-4@%edi 8@-8(%rbp)");
		assert_true(v[i].addr + bias == (uintptr_t)tk_usdt_site);
		assert_true(v[i].sema + bias == (uintptr_t)&tktest_probe1_semaphore);
	}
	assert_int_equal(found, 1);
	tk_usdt_free(v, n);
}

static void test_list_errors(void **state)
{
	struct tk_usdt_probe *v;
	char err[256];
	size_t n;

	(void)state;
	assert_int_equal(tk_usdt_list("/nonexistent/tk", &v, &n, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/tk"));
	assert_int_equal(tk_usdt_list("/proc/self/status", &v, &n, err, sizeof(err)), -ENOEXEC);
	assert_null(v);
	assert_int_equal(n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_elf64),
		cmocka_unit_test(test_parse_elf32_no_args),
		cmocka_unit_test(test_parse_malformed),
		cmocka_unit_test(test_list_self),
		cmocka_unit_test(test_list_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
