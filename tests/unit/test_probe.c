/* Unit tests of the probe language's parser (libtrace/probe/): each
 * expression as the tree it gives, printed fully parenthesised, and each
 * error with its message and the offset its caret points at. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/expr.h"
#include "probe/spec.h"

/* text parses, and prints back as want. */
static void expr_is(const char *text, const char *want)
{
	struct tk_perr err;
	struct tk_px *x = tk_px_parse(text, &err);
	char buf[512];

	if (!x)
		fail_msg("'%s': %s at %d", text, err.msg, err.pos);
	tk_px_format(x, buf, sizeof(buf));
	if (strcmp(buf, want))
		fail_msg("'%s' gave '%s', not '%s'", text, buf, want);
	tk_px_free(x);
}

/* text fails at pos with a message that contains msg. */
static void expr_fails(const char *text, int pos, const char *msg)
{
	struct tk_perr err;
	struct tk_px *x = tk_px_parse(text, &err);

	if (x)
		fail_msg("'%s' parsed", text);
	if (!strstr(err.msg, msg) || err.pos != pos)
		fail_msg("'%s': '%s' at %d, not '%s' at %d", text, err.msg, err.pos, msg, pos);
}

static void test_precedence_is_c(void **state)
{
	(void)state;
	expr_is("1 + 2 * 3", "(1 + (2 * 3))");
	expr_is("1 - 2 - 3", "((1 - 2) - 3)");
	expr_is("a == 1 || b != 2 && c < 3", "((a == 1) || ((b != 2) && (c < 3)))");
	expr_is("a & 0xff == 1", "(a & (255 == 1))");
	expr_is("1 << 2 + 3", "(1 << (2 + 3))");
	expr_is("a | b ^ c & d", "(a | (b ^ (c & d)))");
	expr_is("-a * !b", "((-a) * (!b))");
	expr_is("~~x", "(~(~x))");
	expr_is("(1 + 2) * 3", "((1 + 2) * 3)");
	expr_is("a >= 1 && a <= 2", "((a >= 1) && (a <= 2))");
	expr_is("a % 3 / 2", "((a % 3) / 2)");
}

static void test_names_args_and_builtins(void **state)
{
	(void)state;
	expr_is("arg1 + arg6", "(arg1 + arg6)");
	expr_is("retval < 0", "(retval < 0)");
	expr_is("$pid == pid", "($pid == pid)");
	expr_is("comm", "comm");
	expr_is("arg10", "arg10");   /* not an argument: a name, resolved later */
	expr_fails("arg7", 0, "arguments are arg1 to arg6");
	expr_fails("$", 0, "'$' without a builtin's name");
}

static void test_members_casts_and_container_of(void **state)
{
	(void)state;
	expr_is("file->f_path.dentry->d_name.name", "file->f_path.dentry->d_name.name");
	expr_is("(struct task_struct *)arg1", "((struct task_struct *)arg1)");
	expr_is("((struct task_struct *)arg1)->pid", "((struct task_struct *)arg1)->pid");
	/* A cast binds looser than '->', as in C. */
	expr_is("(u32)p->len", "((u32)p->len)");
	expr_is("(unsigned long long)x", "((unsigned long long)x)");
	expr_is("(const char **)x", "((char **)x)");
	expr_is("(size_t)x", "((size_t)x)");
	expr_is("*p + 1", "((*p) + 1)");
	expr_is("container_of(dl_se, struct task_struct, dl)->pid",
		"container_of(dl_se, struct task_struct, dl)->pid");
	expr_is("container_of(arg1, struct sock, sk_common.skc_node)",
		"container_of(arg1, struct sock, sk_common.skc_node)");
	expr_is("(x)", "x");  /* not a type: parentheses */
	expr_fails("container_of(p, struct foo *, m)", 0, "not a pointer");
	expr_fails("container_of(p, u32, m)", 16, "takes a struct type");
	expr_fails("container_of(p, struct foo)", 26, "expected ','");
	expr_fails("strlen(p)", 0, "'strlen' is not a function of the probe language");
	expr_fails("1 + strlen (p)", 4, "'strlen' is not a function");
	expr_fails("u32 + 1", 0, "'u32' is a type: a cast is written (u32)VALUE");
	expr_fails("(int)", 5, "expected an expression at the end");
	expr_fails("p->", 3, "expected a member name after '->'");
	expr_fails("(struct)x", 7, "expected the struct's name");
}

static void test_literals(void **state)
{
	(void)state;
	expr_is("0x10 + 10", "(16 + 10)");
	expr_is("18446744073709551615", "18446744073709551615");
	expr_is("comm == \"sshd\"", "(comm == \"sshd\")");
	expr_is("name == \"ssh*\"", "(name == \"ssh*\")");
	expr_is("name == \"a\\*\"", "(name == \"a\\*\")");     /* a literal star */
	expr_is("s == \"q\\\"\\\\\\n\\t\\x7f\"", "(s == \"q\\\"\\\\\\n\\t\\x7f\")");
	expr_fails("18446744073709551616", 0, "too large");
	expr_fails("0x", 0, "0x without hex digits");
	expr_fails("12ab", 2, "unexpected 'a' in a number");
	expr_fails("\"abc", 0, "unterminated string");
	expr_fails("\"a\\q\"", 2, "unknown escape");
	expr_fails("\"a\\x00\"", 2, "not 00");
}

static void test_string_prefix_flag(void **state)
{
	struct tk_perr err;
	struct tk_px *x = tk_px_parse("\"/tmp/*\"", &err);

	(void)state;
	assert_non_null(x);
	assert_int_equal(x->kind, TK_PX_STR);
	assert_true(x->prefix);
	assert_int_equal(x->len, 5);
	assert_string_equal(x->str, "/tmp/");
	tk_px_free(x);
	x = tk_px_parse("\"a\\*\"", &err);
	assert_non_null(x);
	assert_false(x->prefix);
	assert_string_equal(x->str, "a*");
	tk_px_free(x);
}

static void test_syntax_errors_point_at_the_place(void **state)
{
	(void)state;
	expr_fails("", 0, "expected an expression at the end");
	expr_fails("1 +", 3, "expected an expression at the end");
	expr_fails("(1 + 2", 6, "expected ')'");
	expr_fails("1 2", 2, "unexpected text after the expression");
	expr_fails("a @ b", 2, "unexpected '@'");
	expr_fails("a \x01", 2, "unexpected byte 0x01");
	expr_fails("a == ", 5, "expected an expression");
}

static void test_deep_nesting_is_an_error(void **state)
{
	char deep[400];

	(void)state;
	memset(deep, '(', 200);
	strcpy(deep + 200, "1");
	memset(deep + 201, ')', 150);
	deep[351] = 0;
	expr_fails(deep, 64, "nested too deeply (64 levels)");
	memset(deep, '-', 300);
	strcpy(deep + 300, "1");
	expr_fails(deep, 64, "nested too deeply");
}

/* --- probes --- */

static void probe_ok(const char *text, struct tk_probe_spec *s)
{
	struct tk_perr err;

	if (tk_probe_parse(text, s, &err))
		fail_msg("'%s': %s at %d", text, err.msg, err.pos);
}

static void probe_fails(const char *text, int pos, const char *msg)
{
	struct tk_probe_spec s;
	struct tk_perr err;

	if (!tk_probe_parse(text, &s, &err))
		fail_msg("'%s' parsed", text);
	tk_probe_spec_free(&s);
	if (!strstr(err.msg, msg) || err.pos != pos)
		fail_msg("'%s': '%s' at %d, not '%s' at %d", text, err.msg, err.pos, msg, pos);
}

static void test_probe_kinds(void **state)
{
	static const struct {
		const char *text;
		enum tk_probe_kind kind;
		const char *target, *provider, *name;
	} cases[] = {
		{ "t:timer:hrtimer_expire_entry", TK_PROBE_TRACEPOINT, "timer", NULL, "hrtimer_expire_entry" },
		{ "k:vfs_read", TK_PROBE_KPROBE, NULL, NULL, "vfs_read" },
		{ "kr:do_sys_openat2", TK_PROBE_KRETPROBE, NULL, NULL, "do_sys_openat2" },
		{ "u:c:malloc", TK_PROBE_UPROBE, "c", NULL, "malloc" },
		{ "ur:/usr/bin/bash:readline", TK_PROBE_URETPROBE, "/usr/bin/bash", NULL, "readline" },
		{ "U:/usr/bin/python3:python:function__entry", TK_PROBE_USDT, "/usr/bin/python3",
		  "python", "function__entry" },
		{ "p::vfs_write", TK_PROBE_KPROBE, NULL, NULL, "vfs_write" },
		{ "r::vfs_write", TK_PROBE_KRETPROBE, NULL, NULL, "vfs_write" },
		{ "p:c:write", TK_PROBE_UPROBE, "c", NULL, "write" },
		{ "r:c:write", TK_PROBE_URETPROBE, "c", NULL, "write" },
		{ "  k:foo.isra.0  ", TK_PROBE_KPROBE, NULL, NULL, "foo.isra.0" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct tk_probe_spec s;

		probe_ok(cases[i].text, &s);
		assert_int_equal(s.kind, cases[i].kind);
		if (cases[i].target)
			assert_string_equal(s.target, cases[i].target);
		else
			assert_null(s.target);
		if (cases[i].provider)
			assert_string_equal(s.provider, cases[i].provider);
		else
			assert_null(s.provider);
		assert_string_equal(s.name, cases[i].name);
		assert_null(s.filter);
		assert_null(s.format);
		assert_int_equal(s.nargs, 0);
		tk_probe_spec_free(&s);
	}
}

static void test_probe_filter_format_and_values(void **state)
{
	struct tk_probe_spec s;
	char buf[256];

	(void)state;
	probe_ok("t:timer:hrtimer_expire_entry (function != hrtimer_wakeup) \"%s %-8llx %%\", "
		 "function, now", &s);
	assert_int_equal(s.kind, TK_PROBE_TRACEPOINT);
	tk_px_format(s.filter, buf, sizeof(buf));
	assert_string_equal(buf, "(function != hrtimer_wakeup)");
	assert_string_equal(s.format, "%s %-8llx %%");
	assert_int_equal(s.nargs, 2);
	assert_string_equal(s.conv[0].text, "%s");
	assert_int_equal(s.conv[0].conv, 's');
	assert_string_equal(s.conv[1].text, "%-8llx");
	assert_int_equal(s.conv[1].conv, 'x');
	assert_int_equal(s.conv[1].length, 'L');
	tk_px_format(s.args[1], buf, sizeof(buf));
	assert_string_equal(buf, "now");
	tk_probe_spec_free(&s);

	probe_ok("k:vfs_read \"%s\", file->f_path.dentry->d_name.name", &s);
	assert_null(s.filter);
	assert_int_equal(s.nargs, 1);
	tk_probe_spec_free(&s);

	probe_ok("k:vfs_read \"x*\"", &s);
	assert_string_equal(s.format, "x*");
	tk_probe_spec_free(&s);

	probe_ok("kr:vfs_read (retval < 0)", &s);
	assert_non_null(s.filter);
	assert_null(s.format);
	tk_probe_spec_free(&s);

	probe_ok("u:c:write \"fd %d wrote %K %U %hhu %zd\", arg1, arg2, arg3, arg1, arg3", &s);
	assert_int_equal(s.nargs, 5);
	assert_int_equal(s.conv[1].conv, 'K');
	assert_int_equal(s.conv[3].length, 'H');
	assert_int_equal(s.conv[4].length, 'z');
	tk_probe_spec_free(&s);
}

static void test_probe_errors(void **state)
{
	(void)state;
	probe_fails("", 0, "expected a probe");
	probe_fails("x:foo", 0, "unknown probe type");
	probe_fails("vfs_read", 0, "unknown probe type");
	probe_fails("t:sched", 0, "expected t:CATEGORY:EVENT");
	probe_fails("t:sched:", 8, "empty name in t:CATEGORY:EVENT");
	probe_fails("t::x", 2, "empty name");
	probe_fails("U:lib:probe", 0, "expected U:LIB:PROVIDER:PROBE");
	probe_fails("u:a:b:c:d:e", 9, "too many ':'");
	probe_fails("k:vfs_read(arg3 > 0)", 10, "a blank goes between the probe and its (FILTER)");
	probe_fails("k:vfs_read\"%d\",arg3", 10, "a blank goes between the probe and its \"FORMAT\"");
	probe_fails("k:vfs_read (arg3 > )", 19, "expected an expression");
	probe_fails("k:vfs_read (arg3", 16, "expected ')'");
	probe_fails("k:vfs_read arg3", 11, "expected (FILTER) or \"FORMAT\"");
	probe_fails("k:vfs_read (1) arg3", 15, "expected \"FORMAT\" after the filter");
	probe_fails("k:vfs_read \"%d %d\", arg1", 11, "the format has 2 conversions and 1 value");
	probe_fails("k:vfs_read \"%d\", arg1, arg2", 11, "the format has 1 conversion and 2 values");
	probe_fails("k:vfs_read \"%q\", arg1", 11, "unknown conversion '%q'");
	probe_fails("k:vfs_read \"%\", arg1", 11, "ends in a '%'");
	probe_fails("k:vfs_read \"%ls\", arg1", 11, "a length");
	probe_fails("k:vfs_read \"%d\" arg1", 16, "expected ',' or the end");
}

static void test_error_display_has_a_caret(void **state)
{
	struct tk_probe_spec s;
	struct tk_perr err;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	const char *text = "k:vfs_read (arg3 >\t)";

	(void)state;
	assert_int_not_equal(tk_probe_parse(text, &s, &err), 0);
	tk_probe_spec_free(&s);
	tk_perr_print(f, "trace", text, &err);
	fclose(f);
	assert_string_equal(buf, "trace: expected an expression\n"
				 "  k:vfs_read (arg3 > )\n"
				 "                     ^\n");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_precedence_is_c),
		cmocka_unit_test(test_names_args_and_builtins),
		cmocka_unit_test(test_members_casts_and_container_of),
		cmocka_unit_test(test_literals),
		cmocka_unit_test(test_string_prefix_flag),
		cmocka_unit_test(test_syntax_errors_point_at_the_place),
		cmocka_unit_test(test_deep_nesting_is_an_error),
		cmocka_unit_test(test_probe_kinds),
		cmocka_unit_test(test_probe_filter_format_and_values),
		cmocka_unit_test(test_probe_errors),
		cmocka_unit_test(test_error_display_has_a_caret),
	};

	return cmocka_run_group_tests_name("probe", tests, NULL, NULL);
}
