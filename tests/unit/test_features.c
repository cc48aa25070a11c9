/* Unit tests of libtrace/features.c: the parsers behind the probes
 * (kernel configuration, lockdown, /proc/PID/maps) and the dry-run
 * runner of tracekit-doctor, on scripts that play tools. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "tk_features.h"

/* ---- feature names ---- */

static void test_names(void **state)
{
	/* The JSON keys, in the order of the report (tests/e2e depend on
	 * them through tests/e2e/conftest.py). */
	static const char *const want[TK_FEAT_COUNT] = {
		"btf", "ringbuf", "perf_buffer", "tracepoints", "raw_tp",
		"tp_btf", "fentry", "kprobes", "uprobes", "tracefs", "lockdown",
		"perf_event_paranoid", "unprivileged_bpf", "bpf_stats",
		"capabilities", "memlock",
	};
	int i;

	(void)state;
	for (i = 0; i < TK_FEAT_COUNT; i++) {
		assert_string_equal(tk_feature_name(i), want[i]);
		assert_int_equal(tk_feature_by_name(want[i]), i);
	}
	assert_null(tk_feature_name(TK_FEAT_COUNT));
	assert_int_equal(tk_feature_by_name("kprobe"), -1);
	assert_int_equal(tk_feature_group(TK_FEAT_FENTRY), TK_FGROUP_ATTACH);
	assert_int_equal(tk_feature_group(TK_FEAT_LOCKDOWN), TK_FGROUP_KERNEL);
	assert_int_equal(tk_feature_group(TK_FEAT_MEMLOCK), TK_FGROUP_PROCESS);
}

/* ---- kernel configuration ---- */

static void test_kconfig_line(void **state)
{
	(void)state;
	assert_int_equal(tk_kconfig_parse_line("CONFIG_KPROBES=y", "CONFIG_KPROBES"), 'y');
	assert_int_equal(tk_kconfig_parse_line("CONFIG_KPROBES=y\n", "CONFIG_KPROBES"), 'y');
	assert_int_equal(tk_kconfig_parse_line("CONFIG_KPROBES=m", "CONFIG_KPROBES"), 'm');
	assert_int_equal(tk_kconfig_parse_line("# CONFIG_KPROBES is not set",
					       "CONFIG_KPROBES"), 'n');
	/* Longer names that start alike are other options. */
	assert_int_equal(tk_kconfig_parse_line("CONFIG_KPROBES_ON_FTRACE=y",
					       "CONFIG_KPROBES"), 0);
	assert_int_equal(tk_kconfig_parse_line("# CONFIG_KPROBES_SANITY_TEST is not set",
					       "CONFIG_KPROBES"), 0);
	assert_int_equal(tk_kconfig_parse_line("CONFIG_HAVE_KPROBES=y",
					       "CONFIG_KPROBES"), 0);
	/* Strings and numbers: set. */
	assert_int_equal(tk_kconfig_parse_line("CONFIG_LSM=\"lockdown,bpf\"", "CONFIG_LSM"), 'y');
	assert_int_equal(tk_kconfig_parse_line("CONFIG_NR_CPUS=64", "CONFIG_NR_CPUS"), 'y');
	assert_int_equal(tk_kconfig_parse_line("", "CONFIG_KPROBES"), 0);
	assert_int_equal(tk_kconfig_parse_line("# General setup", "CONFIG_KPROBES"), 0);
}

static const char config_text[] =
	"#\n# Automatically generated file; DO NOT EDIT.\n#\n"
	"CONFIG_HAVE_KPROBES=y\n"
	"# CONFIG_KPROBES is not set\n"
	"CONFIG_FUNCTION_TRACER=y\n"
	"CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS=y\n"
	"CONFIG_SOME_MODULE=m\n"
	"CONFIG_LAST_LINE=y";  /* no newline at the end */

static char *tmp_path(const char *name)
{
	char *p;

	assert_true(asprintf(&p, "/tmp/tk-test-features-%d-%s", (int)getpid(), name) > 0);
	return p;
}

static void check_config(const char *path)
{
	assert_int_equal(tk_kconfig_load(path), 0);
	assert_string_equal(tk_kconfig_source(), path);
	assert_int_equal(tk_kconfig("CONFIG_KPROBES"), 'n');
	assert_int_equal(tk_kconfig("CONFIG_HAVE_KPROBES"), 'y');
	assert_int_equal(tk_kconfig("CONFIG_FUNCTION_TRACER"), 'y');
	assert_int_equal(tk_kconfig("CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS"), 'y');
	assert_int_equal(tk_kconfig("CONFIG_SOME_MODULE"), 'm');
	assert_int_equal(tk_kconfig("CONFIG_LAST_LINE"), 'y');
	/* Not in a configuration that was found: not set. */
	assert_int_equal(tk_kconfig("CONFIG_NOT_THERE"), 'n');
	assert_int_equal(tk_kconfig("CONFIG_KPROBE"), 'n');
}

static void test_kconfig_gzip(void **state)
{
	char *path = tmp_path("config.gz");
	gzFile gz = gzopen(path, "wb");

	(void)state;
	assert_non_null(gz);
	assert_int_equal(gzwrite(gz, config_text, sizeof(config_text) - 1),
			 (int)sizeof(config_text) - 1);
	assert_int_equal(gzclose(gz), Z_OK);
	check_config(path);
	unlink(path);
	free(path);
}

static void test_kconfig_plain(void **state)
{
	char *path = tmp_path("config");
	FILE *f = fopen(path, "w");

	(void)state;
	assert_non_null(f);
	fputs(config_text, f);
	fclose(f);
	check_config(path);  /* /boot/config-RELEASE is plain text */
	unlink(path);
	free(path);
}

static void test_kconfig_missing(void **state)
{
	(void)state;
	assert_int_equal(tk_kconfig_load("/nonexistent/config.gz"), -ENOENT);
}

/* ---- lockdown ---- */

static void test_lockdown(void **state)
{
	char mode[24];

	(void)state;
	assert_int_equal(tk_lockdown_parse("none [integrity] confidentiality\n",
					   mode, sizeof(mode)), 0);
	assert_string_equal(mode, "integrity");
	assert_int_equal(tk_lockdown_parse("[none] integrity confidentiality\n",
					   mode, sizeof(mode)), 0);
	assert_string_equal(mode, "none");
	assert_int_equal(tk_lockdown_parse("none integrity [confidentiality]",
					   mode, sizeof(mode)), 0);
	assert_string_equal(mode, "confidentiality");
	assert_int_equal(tk_lockdown_parse("none integrity confidentiality",
					   mode, sizeof(mode)), -EINVAL);
	assert_int_equal(tk_lockdown_parse("[] none", mode, sizeof(mode)), -EINVAL);
	assert_int_equal(tk_lockdown_parse("[integrity", mode, sizeof(mode)), -EINVAL);
	assert_int_equal(tk_lockdown_parse("", mode, sizeof(mode)), -EINVAL);
	/* Does not fit: refused, not cut. */
	assert_int_equal(tk_lockdown_parse("[confidentiality]", mode, 8), -EINVAL);
}

/* ---- /proc/PID/maps ---- */

static const char maps_text[] =
	"55d1c0a00000-55d1c0a07000 r--p 00000000 fd:01 1234  /usr/bin/my tool\n"
	"55d1c0a07000-55d1c0a2f000 r-xp 00007000 fd:01 1234  /usr/bin/my tool\n"
	"55d1c1000000-55d1c1021000 rw-p 00000000 00:00 0     [heap]\n"
	"7f0000000000-7f0000001000 rw-p 00000000 00:00 0 \n"
	"7f1000000000-7f1000100000 r-xp 00028000 fd:01 99    /usr/lib/x86_64-linux-gnu/libc.so.6\n";

static int maps_lookup(unsigned long addr, unsigned long *off, char *path,
		       size_t size)
{
	FILE *f = fmemopen((void *)maps_text, sizeof(maps_text) - 1, "r");
	int r;

	assert_non_null(f);
	r = tk_maps_file_offset(f, addr, off, path, size);
	fclose(f);
	return r;
}

static void test_maps(void **state)
{
	char path[256];
	unsigned long off;

	(void)state;
	/* In the text mapping: the address minus its start plus its offset. */
	assert_int_equal(maps_lookup(0x55d1c0a07a80, &off, path, sizeof(path)), 0);
	assert_int_equal(off, 0x7a80);
	assert_string_equal(path, "/usr/bin/my tool");  /* spaces kept */
	assert_int_equal(maps_lookup(0x55d1c0a00010, &off, path, sizeof(path)), 0);
	assert_int_equal(off, 0x10);
	assert_int_equal(maps_lookup(0x7f1000000100, &off, path, sizeof(path)), 0);
	assert_int_equal(off, 0x28100);
	assert_string_equal(path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	/* The end is exclusive. */
	assert_int_equal(maps_lookup(0x55d1c0a2f000, &off, path, sizeof(path)), -ENOENT);
	/* Anonymous and special mappings have no file. */
	assert_int_equal(maps_lookup(0x55d1c1000010, &off, path, sizeof(path)), -ENOENT);
	assert_int_equal(maps_lookup(0x7f0000000010, &off, path, sizeof(path)), -ENOENT);
	assert_int_equal(maps_lookup(0x1000, &off, path, sizeof(path)), -ENOENT);
}

static void test_maps_self(void **state)
{
	unsigned long off;
	char path[4096], exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	FILE *f = fopen("/proc/self/maps", "r");

	(void)state;
	assert_true(n > 0);
	exe[n] = 0;
	assert_non_null(f);
	assert_int_equal(tk_maps_file_offset(f, (unsigned long)&test_maps_self,
					     &off, path, sizeof(path)), 0);
	fclose(f);
	assert_string_equal(path, exe);
	assert_true(off > 0);
}

/* ---- dry-run output ---- */

static void test_parse_dry_run(void **state)
{
	struct tk_tool_check c;

	(void)state;
	memset(&c, 0, sizeof(c));
	assert_int_equal(tk_tool_check_parse(
		"probe exec_done raw_tp sched_process_exec\n"
		"something else\n"
		"probe lonely\n"  /* no method: not a probe line */
		"probe read_entry uprobe /usr/lib/my lib.so:read\n"
		"transport ringbuf", &c), 0);
	assert_int_equal(c.n_probes, 2);
	assert_string_equal(c.probes[0].probe, "exec_done");
	assert_string_equal(c.probes[0].method, "raw_tp");
	assert_string_equal(c.probes[0].target, "sched_process_exec");
	assert_string_equal(c.probes[1].probe, "read_entry");
	assert_string_equal(c.probes[1].method, "uprobe");
	assert_string_equal(c.probes[1].target, "/usr/lib/my lib.so:read");
	assert_string_equal(c.transport, "ringbuf");
	tk_tool_check_free(&c);
	assert_int_equal(c.n_probes, 0);

	memset(&c, 0, sizeof(c));
	assert_int_equal(tk_tool_check_parse("", &c), 0);
	assert_int_equal(c.n_probes, 0);
	assert_string_equal(c.transport, "");
}

/* ---- running tools ---- */

static char *script(const char *name, const char *body, mode_t mode)
{
	char *path = tmp_path(name);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fprintf(f, "#!/bin/sh\n# TRACEKIT_READY_FD\n%s\n", body);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
	return path;
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_run_ok(void **state)
{
	const char *const args[] = { "vfs_read", NULL };
	char *path = script("ok",
		"[ \"$1\" = --dry-run ] || exit 2\n"
		"echo \"probe entry fentry $2\"\n"
		"echo 'probe exit fexit vfs_read'\n"
		"echo transport perf\n"
		"echo 'a warning' >&2", 0755);
	struct tk_tool_check c;

	(void)state;
	assert_int_equal(tk_tool_check_run(path, args, 10, &c), 0);
	assert_true(c.ok);
	assert_int_equal(c.n_probes, 2);
	assert_string_equal(c.probes[0].method, "fentry");
	assert_string_equal(c.probes[0].target, "vfs_read");
	assert_string_equal(c.transport, "perf");
	tk_tool_check_free(&c);
	unlink(path);
	free(path);
}

static void test_run_fails(void **state)
{
	char *path = script("fails",
		"echo 'probe half done' \n"
		"echo 'fails: cannot trace kernel function vfs_read: no kprobes; use a kernel with CONFIG_KPROBES=y' >&2\n"
		"exit 1", 0755);
	struct tk_tool_check c;

	(void)state;
	assert_int_equal(tk_tool_check_run(path, NULL, 10, &c), 0);
	assert_false(c.ok);
	assert_int_equal(c.n_probes, 0);
	assert_string_equal(c.error,
		"fails: cannot trace kernel function vfs_read: no kprobes; use a kernel with CONFIG_KPROBES=y");
	unlink(path);
	free(path);
}

static void test_run_silent_and_signal(void **state)
{
	char *silent = script("silent", "exit 3", 0755);
	char *killed = script("killed", "kill -SEGV $$", 0755);
	struct tk_tool_check c;

	(void)state;
	assert_int_equal(tk_tool_check_run(silent, NULL, 10, &c), 0);
	assert_false(c.ok);
	assert_non_null(strstr(c.error, "exited with status 3"));
	assert_int_equal(tk_tool_check_run(killed, NULL, 10, &c), 0);
	assert_false(c.ok);
	assert_non_null(strstr(c.error, "killed by signal 11"));
	unlink(silent);
	unlink(killed);
	free(silent);
	free(killed);
}

static void test_run_timeout(void **state)
{
	/* A child of the tool holds the pipes open too: the whole group
	 * goes. */
	char *path = script("hangs", "sleep 100 & sleep 100", 0755);
	struct tk_tool_check c;
	double t0 = mono();
	char *base = strrchr(path, '/') + 1, want[256];

	(void)state;
	assert_int_equal(tk_tool_check_run(path, NULL, 0.5, &c), 0);
	assert_true(mono() - t0 < 5);
	assert_false(c.ok);
	snprintf(want, sizeof(want), "%s: no answer within 0.5 s", base);
	assert_memory_equal(c.error, want, strlen(want));
	unlink(path);
	free(path);
}

static void test_run_missing(void **state)
{
	struct tk_tool_check c;

	(void)state;
	assert_int_equal(tk_tool_check_run("/nonexistent/tool", NULL, 10, &c), 0);
	assert_false(c.ok);
	assert_string_equal(c.error, "tool: cannot run /nonexistent/tool: No such file or directory");
}

static void test_is_tool(void **state)
{
	char *tool = script("is-tool", "exit 0", 0755);
	char *noexec = script("noexec", "exit 0", 0644);
	char *other = tmp_path("other"), *big = tmp_path("big");
	FILE *f;
	size_t i;

	(void)state;
	f = fopen(other, "w");
	fputs("#!/bin/sh\nexit 0\n", f);
	fclose(f);
	chmod(other, 0755);
	/* The marker across the first 64 KiB read. */
	f = fopen(big, "w");
	for (i = 0; i < 65536 - 5; i++)
		fputc('x', f);
	fputs("TRACEKIT_READY_FD", f);
	fclose(f);
	chmod(big, 0755);

	assert_true(tk_is_tracekit_tool(tool));
	assert_true(tk_is_tracekit_tool(big));
	assert_false(tk_is_tracekit_tool(noexec));
	assert_false(tk_is_tracekit_tool(other));
	assert_false(tk_is_tracekit_tool("/tmp"));
	assert_false(tk_is_tracekit_tool("/nonexistent"));
	unlink(tool); unlink(noexec); unlink(other); unlink(big);
	free(tool); free(noexec); free(other); free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_kconfig_line),
		cmocka_unit_test(test_kconfig_gzip),
		cmocka_unit_test(test_kconfig_plain),
		cmocka_unit_test(test_kconfig_missing),
		cmocka_unit_test(test_lockdown),
		cmocka_unit_test(test_maps),
		cmocka_unit_test(test_maps_self),
		cmocka_unit_test(test_parse_dry_run),
		cmocka_unit_test(test_run_ok),
		cmocka_unit_test(test_run_fails),
		cmocka_unit_test(test_run_silent_and_signal),
		cmocka_unit_test(test_run_timeout),
		cmocka_unit_test(test_run_missing),
		cmocka_unit_test(test_is_tool),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
