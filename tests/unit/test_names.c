/* Unit tests of libtrace/names.c and the generated syscall tables. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>

#include "names.h"
#include "signames.h"

#define X86 TK_ARCH_X86_64
#define ARM TK_ARCH_ARM64

#define UNISTD_64 "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"

/* x86_64's table is empty where it was built without x86_64's headers
 * (gen-syscall-table.sh: a native build on another architecture); the
 * tests of it then skip, saying so. */
#define NEED_X86_TABLE()                                                        \
	do {                                                                    \
		if (!tk_syscalls_x86_64[0].name) {                              \
			print_message("no x86_64 syscall table in this build\n"); \
			skip();                                                 \
		}                                                               \
	} while (0)

static void test_x86_64_known(void **state)
{
	(void)state;
	NEED_X86_TABLE();
	assert_string_equal(tk_syscall_name(X86, 0), "read");
	assert_string_equal(tk_syscall_name(X86, 1), "write");
	assert_string_equal(tk_syscall_name(X86, 59), "execve");
	assert_string_equal(tk_syscall_name(X86, 257), "openat");
	assert_string_equal(tk_syscall_name(X86, 322), "execveat");
	assert_int_equal(tk_syscall_nr(X86, "read"), 0);
	assert_int_equal(tk_syscall_nr(X86, "execve"), 59);
	assert_int_equal(tk_syscall_nr(X86, "openat"), 257);
	assert_int_equal(tk_syscall_nr(X86, "open"), 2);
	assert_int_equal(tk_syscall_nr(X86, "clone3"), 435);
}

static void test_arm64_known(void **state)
{
	(void)state;
	assert_string_equal(tk_syscall_name(ARM, 56), "openat");
	assert_string_equal(tk_syscall_name(ARM, 221), "execve");
	assert_string_equal(tk_syscall_name(ARM, 63), "read");
	assert_string_equal(tk_syscall_name(ARM, 64), "write");
	assert_string_equal(tk_syscall_name(ARM, 0), "io_setup");
	assert_int_equal(tk_syscall_nr(ARM, "openat"), 56);
	assert_int_equal(tk_syscall_nr(ARM, "execve"), 221);
	assert_int_equal(tk_syscall_nr(ARM, "read"), 63);
	/* Names the generic table gets through __NR3264_ aliases. */
	assert_int_equal(tk_syscall_nr(ARM, "fcntl"), 25);
	assert_int_equal(tk_syscall_nr(ARM, "mmap"), 222);
	assert_int_equal(tk_syscall_nr(ARM, "newfstatat"), 79);
	assert_int_equal(tk_syscall_nr(ARM, "fstat"), 80);
	/* Selected by arm64's __ARCH_WANT_* options. */
	assert_int_equal(tk_syscall_nr(ARM, "renameat"), 38);
	assert_int_equal(tk_syscall_nr(ARM, "clone3"), 435);
	/* arm64 has no open(2) or its x86-only relatives. */
	assert_int_equal(tk_syscall_nr(ARM, "open"), -1);
	assert_int_equal(tk_syscall_nr(ARM, "fork"), -1);
	/* Not syscalls: the header's count and its placeholder. */
	assert_int_equal(tk_syscall_nr(ARM, "syscalls"), -1);
	assert_int_equal(tk_syscall_nr(ARM, "arch_specific_syscall"), -1);
}

static void test_arches_differ(void **state)
{
	(void)state;
	NEED_X86_TABLE();
	assert_int_not_equal(tk_syscall_nr(X86, "openat"),
			     tk_syscall_nr(ARM, "openat"));
	assert_string_equal(tk_syscall_name(X86, 56), "clone");
	assert_string_equal(tk_syscall_name(ARM, 56), "openat");
}

static void test_native_arch(void **state)
{
	(void)state;
#if defined(__aarch64__)
	assert_int_equal(tk_arch_native(), TK_ARCH_ARM64);
#elif defined(__x86_64__)
	assert_int_equal(tk_arch_native(), TK_ARCH_X86_64);
#endif
}

static void test_unknown(void **state)
{
	char buf[32];
	const char *s;

	(void)state;
	NEED_X86_TABLE();
	assert_null(tk_syscall_name(X86, 9999));
	assert_null(tk_syscall_name(X86, -1));
	assert_null(tk_syscall_name(X86, 335));  /* a gap in x86_64's numbers */
	assert_null(tk_syscall_name(ARM, 9999));
	assert_null(tk_syscall_name(ARM, -1));
	assert_int_equal(tk_syscall_nr(X86, "no_such_syscall"), -1);
	assert_int_equal(tk_syscall_nr(X86, ""), -1);
	assert_int_equal(tk_syscall_nr(X86, "OPENAT"), -1);

	memset(buf, 'x', sizeof(buf));
	s = tk_syscall_name_or_nr(X86, 9999, buf, sizeof(buf));
	assert_ptr_equal(s, buf);
	assert_string_equal(s, "9999");
	s = tk_syscall_name_or_nr(X86, -5, buf, sizeof(buf));
	assert_string_equal(s, "-5");
	s = tk_syscall_name_or_nr(X86, 257, buf, sizeof(buf));
	assert_string_equal(s, "openat");
	s = tk_syscall_name_or_nr(ARM, 221, buf, sizeof(buf));
	assert_string_equal(s, "execve");
	/* A short buffer truncates but stays terminated. */
	s = tk_syscall_name_or_nr(X86, 123456, buf, 4);
	assert_string_equal(s, "123");
}

static size_t check_sorted(const struct tk_syscall_entry *t)
{
	size_t i;

	assert_non_null(t[0].name);
	for (i = 0; t[i].name; i++) {
		assert_true(t[i].nr >= 0);
		assert_true(t[i].name[0] != 0);
		if (i)
			assert_true(t[i].nr > t[i - 1].nr);
	}
	assert_int_equal(t[i].nr, -1);  /* the { -1, 0 } end */
	return i;
}

static void test_tables_sorted(void **state)
{
	size_t n;

	(void)state;
	n = check_sorted(tk_syscalls_arm64);
	assert_true(n > 250);
	NEED_X86_TABLE();
	n = check_sorted(tk_syscalls_x86_64);
	assert_true(n > 300);
}

/* Every entry can be found both ways. */
static void test_tables_roundtrip(void **state)
{
	const struct tk_syscall_entry *t;

	(void)state;
	NEED_X86_TABLE();
	for (t = tk_syscalls_x86_64; t->name; t++) {
		assert_string_equal(tk_syscall_name(X86, t->nr), t->name);
		assert_int_equal(tk_syscall_nr(X86, t->name), t->nr);
	}
	for (t = tk_syscalls_arm64; t->name; t++) {
		assert_string_equal(tk_syscall_name(ARM, t->nr), t->name);
		assert_int_equal(tk_syscall_nr(ARM, t->name), t->nr);
	}
}

/* The x86_64 table knows every syscall of this machine's header, and
 * nothing more. */
static void test_x86_64_covers_header(void **state)
{
	FILE *f = fopen(UNISTD_64, "r");
	char line[256], name[128];
	size_t found = 0, n = 0;
	long nr;

	(void)state;
	NEED_X86_TABLE();
	if (!f) {
		print_message("%s missing: coverage not checked\n", UNISTD_64);
		skip();
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "#define __NR_%127s %ld", name, &nr) != 2)
			continue;
		found++;
		if (!tk_syscall_name(X86, nr) ||
		    strcmp(tk_syscall_name(X86, nr), name) ||
		    tk_syscall_nr(X86, name) != nr)
			fail_msg("%s = %ld from %s: table has %s / %ld", name, nr,
				 UNISTD_64, tk_syscall_name(X86, nr) ?: "(none)",
				 tk_syscall_nr(X86, name));
	}
	fclose(f);
	assert_true(found > 300);
	while (tk_syscalls_x86_64[n].name)
		n++;
	assert_int_equal(n, found);
}

static void test_errno_name(void **state)
{
	(void)state;
	assert_string_equal(tk_errno_name(2), "ENOENT");
	assert_string_equal(tk_errno_name(-2), "ENOENT");
	assert_string_equal(tk_errno_name(-13), "EACCES");
	assert_string_equal(tk_errno_name(1), "EPERM");
	assert_string_equal(tk_errno_name(11), "EAGAIN");
	assert_string_equal(tk_errno_name(-110), "ETIMEDOUT");
	assert_null(tk_errno_name(4000));
	assert_null(tk_errno_name(-4000));
	/* The kernel's internal ENOTSUPP, which bpf(2) returns. */
	assert_string_equal(tk_errno_name(-524), "ENOTSUPP");
	assert_int_equal(tk_errno_parse("ENOTSUPP"), 524);
	assert_string_equal(tk_strerror(-524), "Not supported by this kernel");
	assert_string_equal(tk_strerror(2), "No such file or directory");
}

static void test_errno_parse(void **state)
{
	(void)state;
	assert_int_equal(tk_errno_parse("ENOENT"), 2);
	assert_int_equal(tk_errno_parse("enoent"), 2);
	assert_int_equal(tk_errno_parse("EnoEnt"), 2);
	assert_int_equal(tk_errno_parse("EACCES"), 13);
	assert_int_equal(tk_errno_parse("13"), 13);
	assert_int_equal(tk_errno_parse("2"), 2);
	assert_int_equal(tk_errno_parse("EBOGUS"), -1);
	assert_int_equal(tk_errno_parse(""), -1);
	assert_int_equal(tk_errno_parse(NULL), -1);
	assert_int_equal(tk_errno_parse("0"), -1);
	assert_int_equal(tk_errno_parse("-2"), -1);
	assert_int_equal(tk_errno_parse("2x"), -1);
	assert_int_equal(tk_errno_parse("99999"), -1);
	assert_int_equal(tk_errno_parse("ENOENT "), -1);
	assert_int_equal(tk_errno_parse("NOENT"), -1);
}

/* Names and numbers agree both ways for every errno glibc names. */
static void test_errno_roundtrip(void **state)
{
	int e, named = 0;

	(void)state;
	for (e = 1; e < 200; e++) {
		const char *name = tk_errno_name(e);

		if (!name)
			continue;
		named++;
		assert_int_equal(tk_errno_parse(name), e);
	}
	assert_true(named > 100);
}

static void test_signal_name_and_parse(void **state)
{
	(void)state;
	assert_string_equal(tk_signal_name(9), "KILL");
	assert_string_equal(tk_signal_name(15), "TERM");
	assert_string_equal(tk_signal_name(17), "CHLD");
	assert_null(tk_signal_name(0));
	assert_null(tk_signal_name(65));
	assert_null(tk_signal_name(-1));
	assert_int_equal(tk_signal_parse("9"), 9);
	assert_int_equal(tk_signal_parse("0"), 0);
	assert_int_equal(tk_signal_parse("64"), 64);
	assert_int_equal(tk_signal_parse("65"), -1);
	assert_int_equal(tk_signal_parse("-1"), -1);
	assert_int_equal(tk_signal_parse("9x"), -1);
	assert_int_equal(tk_signal_parse("KILL"), 9);
	assert_int_equal(tk_signal_parse("SIGKILL"), 9);
	assert_int_equal(tk_signal_parse("sigterm"), 15);
	assert_int_equal(tk_signal_parse("usr1"), 10);
	assert_int_equal(tk_signal_parse("SIG"), -1);
	assert_int_equal(tk_signal_parse("BOGUS"), -1);
	assert_int_equal(tk_signal_parse(""), -1);
	assert_int_equal(tk_signal_parse(NULL), -1);
}

/* Every signal glibc names parses back to its number, with and
 * without "SIG". */
static void test_signal_roundtrip(void **state)
{
	char buf[32];
	int sig, named = 0;

	(void)state;
	for (sig = 1; sig <= TK_SIG_MAX; sig++) {
		const char *name = tk_signal_name(sig);

		if (!name)
			continue;
		named++;
		assert_int_equal(tk_signal_parse(name), sig);
		snprintf(buf, sizeof(buf), "SIG%s", name);
		assert_int_equal(tk_signal_parse(buf), sig);
	}
	assert_true(named >= 31);
}

static void test_signal_list(void **state)
{
	unsigned long long m[2];
	const char *bad = NULL;

	(void)state;
	assert_int_equal(tk_signal_list_parse("9,TERM,SIGUSR1", m, &bad), 0);
	assert_true(m[0] == (1ULL << 9 | 1ULL << 15 | 1ULL << 10) && m[1] == 0);
	assert_int_equal(tk_signal_list_parse("0,63,64", m, &bad), 0);
	assert_true(m[0] == (1ULL | 1ULL << 63) && m[1] == 1);
	assert_int_equal(tk_signal_list_parse("9,NOPE,15", m, &bad), -1);
	assert_string_equal(bad, "NOPE,15");
	assert_int_equal(tk_signal_list_parse("9,", m, &bad), -1);
	assert_string_equal(bad, "");
	assert_int_equal(tk_signal_list_parse("", m, &bad), -1);
	assert_int_equal(tk_signal_list_parse(
		"KILLKILLKILLKILLKILLKILLKILLKILLKILL", m, &bad), -1);
}

/* Every capability the build's linux/capability.h defines, by its
 * number; none past the table. */
static void test_cap_names(void **state)
{
#define CAP(c) { c, #c }
	static const struct { int nr; const char *name; } caps[] = {
		CAP(CAP_CHOWN), CAP(CAP_DAC_OVERRIDE), CAP(CAP_DAC_READ_SEARCH),
		CAP(CAP_FOWNER), CAP(CAP_FSETID), CAP(CAP_KILL), CAP(CAP_SETGID),
		CAP(CAP_SETUID), CAP(CAP_SETPCAP), CAP(CAP_LINUX_IMMUTABLE),
		CAP(CAP_NET_BIND_SERVICE), CAP(CAP_NET_BROADCAST), CAP(CAP_NET_ADMIN),
		CAP(CAP_NET_RAW), CAP(CAP_IPC_LOCK), CAP(CAP_IPC_OWNER),
		CAP(CAP_SYS_MODULE), CAP(CAP_SYS_RAWIO), CAP(CAP_SYS_CHROOT),
		CAP(CAP_SYS_PTRACE), CAP(CAP_SYS_PACCT), CAP(CAP_SYS_ADMIN),
		CAP(CAP_SYS_BOOT), CAP(CAP_SYS_NICE), CAP(CAP_SYS_RESOURCE),
		CAP(CAP_SYS_TIME), CAP(CAP_SYS_TTY_CONFIG), CAP(CAP_MKNOD),
		CAP(CAP_LEASE), CAP(CAP_AUDIT_WRITE), CAP(CAP_AUDIT_CONTROL),
		CAP(CAP_SETFCAP), CAP(CAP_MAC_OVERRIDE), CAP(CAP_MAC_ADMIN),
		CAP(CAP_SYSLOG), CAP(CAP_WAKE_ALARM), CAP(CAP_BLOCK_SUSPEND),
		CAP(CAP_AUDIT_READ), CAP(CAP_PERFMON), CAP(CAP_BPF),
		CAP(CAP_CHECKPOINT_RESTORE),
	};
#undef CAP
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
		assert_string_equal(tk_cap_name(caps[i].nr), caps[i].name);
	assert_int_equal(CAP_LAST_CAP, CAP_CHECKPOINT_RESTORE);
	assert_null(tk_cap_name(CAP_LAST_CAP + 1));
	assert_null(tk_cap_name(-1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_x86_64_known),
		cmocka_unit_test(test_arm64_known),
		cmocka_unit_test(test_arches_differ),
		cmocka_unit_test(test_native_arch),
		cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_tables_sorted),
		cmocka_unit_test(test_tables_roundtrip),
		cmocka_unit_test(test_x86_64_covers_header),
		cmocka_unit_test(test_errno_name),
		cmocka_unit_test(test_errno_parse),
		cmocka_unit_test(test_errno_roundtrip),
		cmocka_unit_test(test_signal_name_and_parse),
		cmocka_unit_test(test_signal_roundtrip),
		cmocka_unit_test(test_signal_list),
		cmocka_unit_test(test_cap_names),
	};

	return cmocka_run_group_tests_name("names", tests, NULL, NULL);
}
