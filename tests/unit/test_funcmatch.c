/* Unit tests of libtrace/funcmatch.c: globs and regexes over kernel
 * function lists (available_filter_functions, kallsyms) and over an ELF
 * file's symbols (this very binary). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "funcmatch.h"
#include "functarget.h"

/* Functions of this binary for the ELF tests: three of a prefix, one of
 * them with an alias (the same code under two names). */
__attribute__((noinline, used)) int tk_pat_one(int x) { return x + 1; }
__attribute__((noinline, used)) int tk_pat_two(int x) { return x + 2; }
__attribute__((noinline, used)) int tk_pat_three(int x) { return x + 3; }
int tk_pat_one_alias(int x) __attribute__((alias("tk_pat_one")));
int tk_pat_data = 7;

#define TMPDIR_TEMPLATE "/tmp/tk-funcmatch-XXXXXX"
#include "tmpdir.h"

static char *tmp_file(const char *name, const char *text)
{
	static char path[4][PATH_MAX];
	static int next;
	char *p = path[next++ % 4];
	FILE *f;

	snprintf(p, PATH_MAX, "%s/%s", tmpdir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return p;
}

static void init(struct tk_func_pattern *p, const char *text, bool regex)
{
	char err[256];

	assert_int_equal(tk_func_pattern_init(p, text, regex, err, sizeof(err)), 0);
}

/* The names in l, comma-separated. */
static const char *names(const struct tk_func_list *l)
{
	static char buf[1024];
	size_t i, len = 0;

	buf[0] = 0;
	for (i = 0; i < l->n; i++)
		len += snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? "," : "",
				l->v[i].name);
	return buf;
}

static void test_is_pattern(void **state)
{
	(void)state;
	assert_true(tk_func_is_pattern("vfs_*"));
	assert_true(tk_func_is_pattern("vfs_rea?"));
	assert_true(tk_func_is_pattern("vfs_[rw]*"));
	assert_false(tk_func_is_pattern("vfs_read"));
	assert_false(tk_func_is_pattern("foo.isra.0"));
}

static void test_glob(void **state)
{
	struct tk_func_pattern p;

	(void)state;
	init(&p, "vfs_*", false);
	assert_true(tk_func_pattern_match(&p, "vfs_read"));
	assert_true(tk_func_pattern_match(&p, "vfs_"));
	assert_false(tk_func_pattern_match(&p, "do_vfs_read"));
	tk_func_pattern_free(&p);
	init(&p, "vfs_[rw]?ite", false);
	assert_true(tk_func_pattern_match(&p, "vfs_write"));
	assert_false(tk_func_pattern_match(&p, "vfs_wwrite"));
	tk_func_pattern_free(&p);
	/* '.' is a dot in a glob (bcc turns globs into regexes, where it
	 * is any character). */
	init(&p, "a.b*", false);
	assert_true(tk_func_pattern_match(&p, "a.bc"));
	assert_false(tk_func_pattern_match(&p, "axbc"));
	tk_func_pattern_free(&p);
}

static void test_regex_matches_whole_names(void **state)
{
	struct tk_func_pattern p;

	(void)state;
	init(&p, "vfs_(read|write)", true);
	assert_true(tk_func_pattern_match(&p, "vfs_read"));
	assert_true(tk_func_pattern_match(&p, "vfs_write"));
	assert_false(tk_func_pattern_match(&p, "vfs_readv"));
	assert_false(tk_func_pattern_match(&p, "do_vfs_read"));
	tk_func_pattern_free(&p);
	/* alternatives at the top level are anchored too */
	init(&p, "a|b", true);
	assert_true(tk_func_pattern_match(&p, "a"));
	assert_false(tk_func_pattern_match(&p, "ab"));
	tk_func_pattern_free(&p);
}

static void test_bad_patterns(void **state)
{
	struct tk_func_pattern p;
	char err[256];

	(void)state;
	assert_int_equal(tk_func_pattern_init(&p, "vfs_(", true, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "not a POSIX extended regular expression: "));
	assert_int_equal(tk_func_pattern_init(&p, "", false, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "empty function pattern");
	/* what would take gigabytes to compile (found by fuzzing) */
	assert_int_equal(tk_func_pattern_init(&p, "a+++++++++++++++++++++++", true,
					      err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "too many repetitions ('+', '{m,n}') in the regex: glibc would compile over 256 copies of a part of it");
	assert_int_equal(tk_func_pattern_init(&p, "(a{20}){20}", true, err,
					      sizeof(err)), -EINVAL);
	assert_int_equal(tk_func_pattern_init(&p, "a{2,300}", true, err,
					      sizeof(err)), -EINVAL);
	init(&p, "a{2,}b", true);
	assert_true(tk_func_pattern_match(&p, "aaaab"));
	assert_false(tk_func_pattern_match(&p, "ab"));
	tk_func_pattern_free(&p);
	init(&p, "a+b+c{1,2}d+", true);
	assert_true(tk_func_pattern_match(&p, "aabccd"));
	tk_func_pattern_free(&p);
}

static void test_filter_file(void **state)
{
	const char *filter = tmp_file("filter",
		"vfs_write [ext4]\n"
		"vfs_read\n"
		"__ftrace_invalid_address___64\n"
		"vfs_read\n"
		"do_sys_open\n"
		"vfs_fsync_range\n");
	struct tk_func_pattern p;
	struct tk_func_list l = { 0 };

	(void)state;
	init(&p, "vfs_*", false);
	assert_int_equal(tk_kernel_funcs_match(&p, filter, "/nonexistent", NULL, &l), 0);
	assert_string_equal(l.source, "available_filter_functions");
	/* in name order, once each, without the module */
	assert_string_equal(names(&l), "vfs_fsync_range,vfs_read,vfs_write");
	assert_string_equal(l.binary, "");
	tk_func_list_free(&l);
	tk_func_pattern_free(&p);

	init(&p, "__ftrace*", false);
	assert_int_equal(tk_kernel_funcs_match(&p, filter, "/nonexistent", NULL, &l), 0);
	assert_int_equal(l.n, 0);
	tk_func_pattern_free(&p);
}

static const char kallsyms[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000100 T tk_a\n"
	"ffffffff81000300 t tk_c\n"
	"ffffffff81000200 W tk_b\n"
	"ffffffff81000400 d tk_data\n"
	"ffffffff81000500 T tk_blacklisted\n"
	"ffffffff81000600 t tk_split.cold\n"
	"ffffffff81000700 T __irqentry_text_start\n"
	"ffffffff81000710 T tk_irq_entry\n"
	"ffffffff81000720 T __irqentry_text_end\n"
	"ffffffff81000800 t _kbl_addr_tk_a\n"
	"ffffffff81000900 T perf_tk_x\n"
	"ffffffffc0000000 t tk_mod\t[tkmod]\n"
	"ffffffffc0000100 t tk_c\t[tkmod]\n";

static void test_kallsyms_fallback(void **state)
{
	const char *ks = tmp_file("kallsyms", kallsyms);
	const char *bl = tmp_file("blacklist",
		"0xffffffff81000500-0xffffffff81000510\ttk_blacklisted\n");
	struct tk_func_pattern p;
	struct tk_func_list l = { 0 };

	(void)state;
	init(&p, "*tk_*", false);
	assert_int_equal(tk_kernel_funcs_match(&p, "/nonexistent", ks, bl, &l), 0);
	assert_string_equal(l.source, "kallsyms");
	/* text symbols only, none blacklisted, cold, in the irqentry
	 * section, NOKPROBE markers or perf's; each name once */
	assert_string_equal(names(&l), "tk_a,tk_b,tk_c,tk_mod");
	tk_func_list_free(&l);
	/* without a readable blacklist */
	assert_int_equal(tk_kernel_funcs_match(&p, NULL, ks, "/nonexistent", &l), 0);
	assert_string_equal(names(&l), "tk_a,tk_b,tk_blacklisted,tk_c,tk_mod");
	tk_func_list_free(&l);
	/* neither file */
	assert_int_equal(tk_kernel_funcs_match(&p, NULL, "/nonexistent", NULL, &l),
			 -ENOENT);
	tk_func_pattern_free(&p);
}

static void test_kernel_addresses(void **state)
{
	const char *ks = tmp_file("kallsyms", kallsyms);
	const char *filter = tmp_file("filter", "tk_c\ntk_a\ntk_b\n");
	const char *zeros = tmp_file("kallsyms0",
		"0000000000000000 T tk_a\n0000000000000000 T tk_b\n");
	struct tk_func_pattern p;
	struct tk_func_list l = { 0 };

	(void)state;
	init(&p, "tk_*", false);
	assert_int_equal(tk_kernel_funcs_match(&p, filter, ks, NULL, &l), 0);
	assert_int_equal(tk_kernel_funcs_addrs(&l, ks), 0);
	/* in address order, each with its first text symbol's address */
	assert_string_equal(names(&l), "tk_a,tk_b,tk_c");
	assert_true(l.v[0].addr == 0xffffffff81000100ULL);
	assert_true(l.v[1].addr == 0xffffffff81000200ULL);
	assert_true(l.v[2].addr == 0xffffffff81000300ULL);
	tk_func_list_free(&l);
	/* hidden addresses (kptr_restrict) */
	assert_int_equal(tk_kernel_funcs_match(&p, filter, ks, NULL, &l), 0);
	assert_int_equal(tk_kernel_funcs_addrs(&l, zeros), -ENOENT);
	tk_func_list_free(&l);
	tk_func_pattern_free(&p);
}

static void test_elf_functions(void **state)
{
	struct tk_func_pattern p;
	struct tk_func_list l = { 0 };
	char err[PATH_MAX + 256];

	(void)state;
	init(&p, "tk_pat_*", false);
	assert_int_equal(tk_elf_funcs_match(self, &p, &l, err, sizeof(err)), 0);
	/* not the data object; the alias is the same code, kept once
	 * under its shorter name */
	assert_string_equal(names(&l), "tk_pat_one,tk_pat_three,tk_pat_two");
	assert_string_equal(l.binary, self);
	assert_string_equal(l.source, ".symtab");
	assert_true(l.v[0].addr && l.v[1].addr && l.v[2].addr);
	assert_true(l.v[0].addr != l.v[1].addr && l.v[1].addr != l.v[2].addr);
	tk_func_list_free(&l);
	tk_func_pattern_free(&p);

	init(&p, "tk_pat_t(wo|hree)", true);
	assert_int_equal(tk_elf_funcs_match(self, &p, &l, err, sizeof(err)), 0);
	assert_string_equal(names(&l), "tk_pat_three,tk_pat_two");
	tk_func_list_free(&l);
	tk_func_pattern_free(&p);

	init(&p, "*", false);
	assert_int_equal(tk_elf_funcs_match("/etc/passwd", &p, &l, err, sizeof(err)),
			 -ENOEXEC);
	assert_string_equal(err, "/etc/passwd is not an executable or a shared library");
	assert_int_equal(tk_elf_funcs_match("/nonexistent", &p, &l, err, sizeof(err)),
			 -ENOENT);
	tk_func_pattern_free(&p);
}

static void test_match_spec(void **state)
{
	struct tk_func_list l = { 0 };
	char err[PATH_MAX + 256], spec[PATH_MAX + 64];

	(void)state;
	snprintf(spec, sizeof(spec), "%s:tk_pat_t*", self);
	assert_int_equal(tk_func_match(spec, false, 0, &l, err, sizeof(err)), 2);
	assert_string_equal(names(&l), "tk_pat_three,tk_pat_two");
	tk_func_list_free(&l);

	snprintf(spec, sizeof(spec), "%s:tk_nothing_*", self);
	assert_int_equal(tk_func_match(spec, false, 0, &l, err, sizeof(err)), -ENOENT);
	snprintf(spec, sizeof(spec), "no function matches 'tk_nothing_*' (%s: .symtab)",
		 self);
	assert_string_equal(err, spec);

	/* libc has more than TK_FUNC_LIMIT functions */
	assert_int_equal(tk_func_match("c:*", false, 0, &l, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "'*' matches "));
	assert_non_null(strstr(err, " functions, more than 1000 (bcc's probe limit); narrow the pattern: a longer prefix than '', or fewer alternatives"));
	tk_func_list_free(&l);

	assert_int_equal(tk_func_match(":f*", false, 0, &l, err, sizeof(err)), -EINVAL);
	assert_int_equal(tk_func_match("c:(", true, 0, &l, err, sizeof(err)), -EINVAL);
	assert_int_equal(tk_func_match("tk-no-such-lib:f*", false, 0, &l, err,
				       sizeof(err)), -ENOENT);
}

static void test_spec_resolve(void **state)
{
	struct tk_func_target t;
	struct tk_func_list l = { 0 };
	char err[PATH_MAX + 256], spec[PATH_MAX + 64];
	const char *part;

	(void)state;
	/* a pattern of one function is that function */
	snprintf(spec, sizeof(spec), "%s:tk_pat_tw?", self);
	assert_int_equal(tk_func_spec_resolve(spec, false, 0, &t, &l, &part, err,
					      sizeof(err)), 1);
	assert_int_equal(l.n, 0);
	assert_string_equal(t.func, "tk_pat_two");
	assert_string_equal(t.binary, self);
	assert_string_equal(part, "tk_pat_tw?");
	/* a name is resolved as one function */
	snprintf(spec, sizeof(spec), "%s:tk_pat_one", self);
	assert_int_equal(tk_func_spec_resolve(spec, false, 0, &t, &l, &part, err,
					      sizeof(err)), 1);
	assert_string_equal(t.func, "tk_pat_one");
	/* a regex: the object ends at the first colon */
	snprintf(spec, sizeof(spec), "%s:tk_pat_(one|two)", self);
	assert_int_equal(tk_func_spec_resolve(spec, true, 0, &t, &l, &part, err,
					      sizeof(err)), 2);
	assert_string_equal(names(&l), "tk_pat_one,tk_pat_two");
	tk_func_list_free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_is_pattern),
		cmocka_unit_test(test_glob),
		cmocka_unit_test(test_regex_matches_whole_names),
		cmocka_unit_test(test_bad_patterns),
		cmocka_unit_test(test_filter_file),
		cmocka_unit_test(test_kallsyms_fallback),
		cmocka_unit_test(test_kernel_addresses),
		cmocka_unit_test(test_elf_functions),
		cmocka_unit_test(test_match_spec),
		cmocka_unit_test(test_spec_resolve),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
