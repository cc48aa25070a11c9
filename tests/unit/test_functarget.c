/* Unit tests of libtrace/functarget.c: FUNC / LIB:FUNC / PATH:FUNC. */
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

#include "functarget.h"

/* Symbols of this very binary, for tk_elf_func_check. */
__attribute__((noinline, used)) int tk_test_defined_fn(int x)
{
	return x + 1;
}

int tk_test_data_object = 42;

static void real_impl(void)
{
}

static void (*resolve_ifunc(void))(void)
{
	return real_impl;
}

void tk_test_ifunc(void) __attribute__((ifunc("resolve_ifunc")));

#define TMPDIR_TEMPLATE "/tmp/tk-functarget-XXXXXX"
#include "tmpdir.h"

static char *tmp_file(const char *name, const void *data, size_t len)
{
	static char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
	return path;
}

/* ---- ld.so.cache ---- */

struct entry {
	const char *key, *value;
	int32_t flags;
};

/* Build glibc's cache format: new only, or after the old table. */
static size_t make_cache(char *buf, size_t size, const struct entry *e,
			 int n, bool with_old)
{
	size_t off = 0, hdr, strings, i;
	uint32_t u;

	memset(buf, 0, size);
	if (with_old) {
		memcpy(buf, "ld.so-1.7.0", 11);
		u = 1;  /* one old entry, never looked at */
		memcpy(buf + 12, &u, 4);
		off = (16 + 12 + 7) & ~7ul;
	}
	hdr = off;
	memcpy(buf + hdr, "glibc-ld.so.cache1.1", 20);
	u = n;
	memcpy(buf + hdr + 20, &u, 4);
	strings = 48 + 24 * (size_t)n;  /* from the new header */
	for (i = 0; i < (size_t)n; i++) {
		char *ent = buf + hdr + 48 + 24 * i;
		uint32_t k, v;

		k = strings;
		strcpy(buf + hdr + strings, e[i].key);
		strings += strlen(e[i].key) + 1;
		v = strings;
		strcpy(buf + hdr + strings, e[i].value);
		strings += strlen(e[i].value) + 1;
		memcpy(ent, &e[i].flags, 4);
		memcpy(ent + 4, &k, 4);
		memcpy(ent + 8, &v, 4);
	}
	assert_true(hdr + strings <= size);
	return hdr + strings;
}

static void check_cache(bool with_old)
{
	struct entry e[] = {
		{ "libcap.so.2", "", 0x303 },     /* not "c" */
		{ "libbar.so.2", "/etc/passwd", 0x303 },  /* not ELF */
		{ "libfoo.so.1", "", 0x303 },
		{ "libfoo.so", "/nonexistent/libfoo.so", 0x303 },
		{ "libfoo-extra.so.1", "", 0x303 },
	};
	char buf[4096], path[PATH_MAX], *cache;
	size_t len;

	e[0].value = e[2].value = e[4].value = self;
	len = make_cache(buf, sizeof(buf), e, 5, with_old);
	cache = strdup(tmp_file("ld.so.cache", buf, len));

	assert_int_equal(tk_ldcache_find(cache, "foo", path, sizeof(path)), 0);
	assert_string_equal(path, self);
	assert_int_equal(tk_ldcache_find(cache, "libfoo.so.1", path, sizeof(path)), 0);
	assert_int_equal(tk_ldcache_find(cache, "libfoo", path, sizeof(path)), 0);
	/* a prefix of the name is not the library */
	assert_int_equal(tk_ldcache_find(cache, "fo", path, sizeof(path)), -ENOENT);
	assert_int_equal(tk_ldcache_find(cache, "c", path, sizeof(path)), -ENOENT);
	assert_int_equal(tk_ldcache_find(cache, "libfoo.so.2", path, sizeof(path)), -ENOENT);
	/* entries that are not ELF files of this machine do not count */
	assert_int_equal(tk_ldcache_find(cache, "bar", path, sizeof(path)), -ENOENT);
	assert_int_equal(tk_ldcache_find(cache, "cap", path, sizeof(path)), 0);
	/* too small a buffer */
	assert_int_equal(tk_ldcache_find(cache, "foo", path, 4), -ENAMETOOLONG);
	free(cache);
}

static void test_ldcache_new_format(void **state)
{
	(void)state;
	check_cache(false);
}

static void test_ldcache_old_and_new_format(void **state)
{
	(void)state;
	check_cache(true);
}

static void test_ldcache_bad_files(void **state)
{
	char path[PATH_MAX], junk[100], *f;
	char hdr[48] = "glibc-ld.so.cache1.1";
	uint32_t many = 1000000;

	(void)state;
	assert_int_equal(tk_ldcache_find("/nonexistent/ld.so.cache", "c", path,
					 sizeof(path)), -ENOENT);
	memset(junk, 'x', sizeof(junk));
	f = tmp_file("junk", junk, sizeof(junk));
	assert_int_equal(tk_ldcache_find(f, "c", path, sizeof(path)), -EINVAL);
	/* more entries than the file holds */
	memcpy(hdr + 20, &many, 4);
	f = tmp_file("short", hdr, sizeof(hdr));
	assert_int_equal(tk_ldcache_find(f, "c", path, sizeof(path)), -EINVAL);
}

static void test_ldcache_of_this_machine(void **state)
{
	char path[PATH_MAX];

	(void)state;
	if (access("/etc/ld.so.cache", R_OK))
		skip();
	if (getenv("TK_UNIT_EMULATED")) {
		/* Cross-built under qemu-user: the cache lists this machine's
		 * libraries, not the target's. */
		fprintf(stderr, "test_ldcache_of_this_machine: skipped under qemu-user (the host's ld.so.cache)\n");
		skip();
	}
	assert_int_equal(tk_ldcache_find("/etc/ld.so.cache", "c", path,
					 sizeof(path)), 0);
	assert_non_null(strstr(path, "/libc.so."));
}

/* ---- libraries ---- */

/* The file this process maps whose name starts with prefix. */
static bool mapped(const char *prefix, char *out, size_t size)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[PATH_MAX + 128];
	bool found = false;

	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/'), *base;

		if (!p)
			continue;
		p[strcspn(p, "\n")] = 0;
		base = strrchr(p, '/') + 1;
		if (!strncmp(base, prefix, strlen(prefix))) {
			snprintf(out, size, "%s", p);
			found = true;
		}
	}
	fclose(f);
	return found;
}

static void test_find_library_in_process(void **state)
{
	char path[PATH_MAX], want[PATH_MAX];

	(void)state;
	assert_true(mapped("libc.so", want, sizeof(want)) ||
		    mapped("libc-", want, sizeof(want)));
	assert_int_equal(tk_find_library("c", getpid(), path, sizeof(path)), 0);
	assert_string_equal(path, want);
	assert_true(mapped("libcmocka.so", want, sizeof(want)));
	assert_int_equal(tk_find_library("cmocka", getpid(), path, sizeof(path)), 0);
	assert_string_equal(path, want);
}

static void test_find_library_not_there(void **state)
{
	char path[PATH_MAX];

	(void)state;
	assert_int_equal(tk_find_library("tk-no-such-lib", getpid(), path,
					 sizeof(path)), -ENOENT);
	assert_int_equal(tk_find_library("tk-no-such-lib", 0, path,
					 sizeof(path)), -ENOENT);
	assert_int_equal(tk_find_library("", 0, path, sizeof(path)), -ENOENT);
	assert_int_equal(tk_find_library("/lib/libc.so.6", 0, path,
					 sizeof(path)), -ENOENT);
}

static void test_find_library_without_process(void **state)
{
	char path[PATH_MAX];

	(void)state;
	assert_int_equal(tk_find_library("c", 0, path, sizeof(path)), 0);
	assert_int_equal(access(path, R_OK), 0);
	assert_non_null(strstr(path, "/libc"));
}

/* ---- functions in ELF files ---- */

static void test_elf_defined_function(void **state)
{
	char err[512] = "";

	(void)state;
	assert_int_equal(tk_elf_func_check(self, "tk_test_defined_fn", err,
					   sizeof(err)), 0);
	assert_int_equal(tk_elf_func_check(self, "main", err, sizeof(err)), 0);
}

static void test_elf_missing_function(void **state)
{
	char err[PATH_MAX + 256], want[PATH_MAX + 256];

	(void)state;
	assert_int_equal(tk_elf_func_check(self, "tk_test_no_such_fn", err,
					   sizeof(err)), -ESRCH);
	snprintf(want, sizeof(want), "no function tk_test_no_such_fn in %s (.dynsym and .symtab)",
		 self);
	assert_string_equal(err, want);
	/* a prefix of a name is not that name */
	assert_int_equal(tk_elf_func_check(self, "tk_test_defined", err,
					   sizeof(err)), -ESRCH);
}

static void test_elf_imported_function(void **state)
{
	char err[PATH_MAX + 256], want[PATH_MAX + 256];

	(void)state;
	assert_int_equal(tk_elf_func_check(self, "free", err, sizeof(err)),
			 -ESRCH);
	snprintf(want, sizeof(want), "free is not defined in %s, which imports it from a shared library; give LIB:free (c:free for libc)",
		 self);
	assert_string_equal(err, want);
}

static void test_elf_not_a_function(void **state)
{
	char err[PATH_MAX + 256], want[PATH_MAX + 256];

	(void)state;
	assert_int_equal(tk_elf_func_check(self, "tk_test_data_object", err,
					   sizeof(err)), -ESRCH);
	snprintf(want, sizeof(want), "tk_test_data_object in %s is not a function", self);
	assert_string_equal(err, want);
}

static void test_elf_ifunc(void **state)
{
	char err[PATH_MAX + 256];

	(void)state;
	tk_test_ifunc();
	assert_int_equal(tk_elf_func_check(self, "tk_test_ifunc", err,
					   sizeof(err)), -ESRCH);
	assert_non_null(strstr(err, "is a GNU indirect function (IFUNC)"));
}

static void test_elf_bad_files(void **state)
{
	char err[PATH_MAX + 256];
	char *f;

	(void)state;
	assert_int_equal(tk_elf_func_check("/nonexistent/prog", "f", err,
					   sizeof(err)), -ENOENT);
	assert_string_equal(err, "/nonexistent/prog: No such file or directory");
	f = tmp_file("script", "#!/bin/sh\necho hi\n", 18);
	assert_int_equal(tk_elf_func_check(f, "f", err, sizeof(err)), -ENOEXEC);
	assert_non_null(strstr(err, "script is not an ELF file"));
}

/* ---- kernel functions ---- */

static const char kallsyms[] =
	"ffffffff816b89f0 T vfs_read\n"
	"ffffffff816b8a00 T vfs_read_iter\n"
	"ffffffff81000000 D jiffies\n"
	"ffffffff81000010 t static_fn.isra.0\n"
	"ffffffffc0000000 t mod_fn\t[some_mod]\n"
	"0000000000000000 t zero_addr_fn\n";

static void test_kernel_functions(void **state)
{
	char err[256], *f;

	(void)state;
	f = strdup(tmp_file("kallsyms", kallsyms, sizeof(kallsyms) - 1));
	assert_int_equal(tk_kernel_func_check(f, "vfs_read", err, sizeof(err)), 0);
	assert_int_equal(tk_kernel_func_check(f, "vfs_read_iter", err, sizeof(err)), 0);
	assert_int_equal(tk_kernel_func_check(f, "mod_fn", err, sizeof(err)), 0);
	assert_int_equal(tk_kernel_func_check(f, "zero_addr_fn", err, sizeof(err)), 0);
	assert_int_equal(tk_kernel_func_check(f, "static_fn.isra.0", err, sizeof(err)), 0);
	assert_int_equal(tk_kernel_func_check(f, "static_fn", err, sizeof(err)), -ENOENT);
	assert_int_equal(tk_kernel_func_check(f, "vfs_rea", err, sizeof(err)), -ENOENT);
	assert_true(strstr(err, "no kernel function vfs_rea in ") == err);
	assert_int_equal(tk_kernel_func_check(f, "jiffies", err, sizeof(err)), -ENOENT);
	assert_true(strstr(err, "kernel symbol jiffies is not a function (type 'D' in ") == err);
	/* unreadable: let the attach say what is wrong */
	assert_int_equal(tk_kernel_func_check("/nonexistent/kallsyms", "x", err,
					      sizeof(err)), 0);
	free(f);
}

/* ---- the whole spec ---- */

static void test_resolve_syntax(void **state)
{
	static const char *const bad[] = { "", ":f", "c:", "/bin/true:", "a b", "vfs_*" };
	struct tk_func_target t;
	char err[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(tk_func_target_resolve(bad[i], 0, &t, err,
							sizeof(err)), -EINVAL);
}

static void test_resolve_paths(void **state)
{
	struct tk_func_target t;
	char err[PATH_MAX + 256], spec[PATH_MAX + 64], cwd[PATH_MAX];
	char *dir, *slash;

	(void)state;
	snprintf(spec, sizeof(spec), "%s:tk_test_defined_fn", self);
	assert_int_equal(tk_func_target_resolve(spec, 0, &t, err, sizeof(err)), 0);
	assert_string_equal(t.binary, self);
	assert_string_equal(t.func, "tk_test_defined_fn");

	/* ./relative: made absolute */
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	dir = strdup(self);
	slash = strrchr(dir, '/');
	*slash = 0;
	assert_int_equal(chdir(dir), 0);
	snprintf(spec, sizeof(spec), "./%s:main", slash + 1);
	assert_int_equal(tk_func_target_resolve(spec, 0, &t, err, sizeof(err)), 0);
	assert_string_equal(t.binary, self);
	assert_int_equal(chdir(cwd), 0);
	free(dir);

	assert_int_equal(tk_func_target_resolve("/nonexistent/prog:f", 0, &t,
						err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "/nonexistent/prog: No such file or directory");
	assert_int_equal(tk_func_target_resolve("/tmp:f", 0, &t, err,
						sizeof(err)), -ENOEXEC);
}

static void test_resolve_library(void **state)
{
	struct tk_func_target t;
	char err[PATH_MAX + 256], maps[PATH_MAX], want[PATH_MAX];

	(void)state;
	assert_int_equal(tk_func_target_resolve("c:getpid", getpid(), &t, err,
						sizeof(err)), 0);
	assert_true(mapped("libc.so", maps, sizeof(maps)) ||
		    mapped("libc-", maps, sizeof(maps)));
	assert_non_null(realpath(maps, want));
	assert_string_equal(t.binary, want);
	assert_string_equal(t.func, "getpid");
	assert_int_equal(tk_func_target_resolve("tk-no-such-lib:f", 0, &t, err,
						sizeof(err)), -ENOENT);
	assert_string_equal(err, "no library libtk-no-such-lib.so in the ld.so cache or "
			    "the library directories, and no program tk-no-such-lib in PATH");
	assert_int_equal(tk_func_target_resolve("libtk-nope.so.1:f", 0, &t, err,
						sizeof(err)), -ENOENT);
	assert_int_equal(tk_func_target_resolve("c:tk_no_such_function", 0, &t,
						err, sizeof(err)), -ESRCH);
}

static void test_resolve_program_in_path(void **state)
{
	struct tk_func_target t;
	char err[PATH_MAX + 256], *dir, *slash, *old = getenv("PATH");
	char *saved = old ? strdup(old) : NULL;

	(void)state;
	dir = strdup(self);
	slash = strrchr(dir, '/');
	*slash = 0;
	setenv("PATH", dir, 1);
	{
		char spec[PATH_MAX];

		snprintf(spec, sizeof(spec), "%s:tk_test_defined_fn", slash + 1);
		assert_int_equal(tk_func_target_resolve(spec, 0, &t, err,
							sizeof(err)), 0);
	}
	assert_string_equal(t.binary, self);
	if (saved)
		setenv("PATH", saved, 1);
	free(saved);
	free(dir);
}

static void test_resolve_kernel(void **state)
{
	struct tk_func_target t;
	char err[256];

	(void)state;
	if (access("/proc/kallsyms", R_OK))
		skip();
	assert_int_equal(tk_func_target_resolve("tk_no_such_kernel_fn", 0, &t,
						err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "no kernel function tk_no_such_kernel_fn in /proc/kallsyms");
	assert_int_equal(tk_func_target_resolve("schedule", 0, &t, err,
						sizeof(err)), 0);
	assert_string_equal(t.binary, "");
	assert_string_equal(t.func, "schedule");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ldcache_new_format),
		cmocka_unit_test(test_ldcache_old_and_new_format),
		cmocka_unit_test(test_ldcache_bad_files),
		cmocka_unit_test(test_ldcache_of_this_machine),
		cmocka_unit_test(test_find_library_in_process),
		cmocka_unit_test(test_find_library_not_there),
		cmocka_unit_test(test_find_library_without_process),
		cmocka_unit_test(test_elf_defined_function),
		cmocka_unit_test(test_elf_missing_function),
		cmocka_unit_test(test_elf_imported_function),
		cmocka_unit_test(test_elf_not_a_function),
		cmocka_unit_test(test_elf_ifunc),
		cmocka_unit_test(test_elf_bad_files),
		cmocka_unit_test(test_kernel_functions),
		cmocka_unit_test(test_resolve_syntax),
		cmocka_unit_test(test_resolve_paths),
		cmocka_unit_test(test_resolve_library),
		cmocka_unit_test(test_resolve_program_in_path),
		cmocka_unit_test(test_resolve_kernel),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
