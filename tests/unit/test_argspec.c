/* Unit tests of argdist's specifier (libtrace/probe/argspec.c): where
 * 'PROBE:EXPR[,EXPR...][:FILTER]' splits for each probe kind (its own
 * ':' fields kept whole; no split inside a string or parentheses), the
 * values and filter it parses to, and each error's message and caret. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/argspec.h"

/* text splits into probe, exprs and filter (NULL: none). */
static void split_is(const char *text, const char *probe, const char *exprs, const char *filter)
{
	struct tk_argspec_split sp;
	struct tk_perr err;

	if (tk_argspec_split(text, &sp, &err))
		fail_msg("'%s': %s at %d", text, err.msg, err.pos);
	if ((int)strlen(probe) != sp.probe_end || strncmp(text, probe, strlen(probe)))
		fail_msg("'%s': probe '%.*s', not '%s'", text, sp.probe_end, text, probe);
	if (!exprs) {
		assert_int_equal(sp.exprs, -1);
	} else if (sp.exprs < 0 || (int)strlen(exprs) != sp.exprs_end - sp.exprs ||
		   strncmp(text + sp.exprs, exprs, strlen(exprs))) {
		fail_msg("'%s': exprs at %d..%d, not '%s'", text, sp.exprs, sp.exprs_end, exprs);
	}
	if (!filter)
		assert_int_equal(sp.filter, -1);
	else if (sp.filter < 0 || strcmp(text + sp.filter, filter))
		fail_msg("'%s': filter at %d, not '%s'", text, sp.filter, filter);
}

static void test_split_by_probe_kind(void **state)
{
	(void)state;
	split_is("t:syscalls:sys_exit_read:ret", "t:syscalls:sys_exit_read", "ret", NULL);
	split_is("t:syscalls:sys_exit_read:ret:ret > 0", "t:syscalls:sys_exit_read", "ret",
		 "ret > 0");
	split_is("k:vfs_read:arg3", "k:vfs_read", "arg3", NULL);
	split_is("kr:vfs_read:retval:retval < 0", "kr:vfs_read", "retval", "retval < 0");
	split_is("u:c:malloc:arg1", "u:c:malloc", "arg1", NULL);
	split_is("ur:/bin/x:f:retval", "ur:/bin/x:f", "retval", NULL);
	split_is("U:python3:python:function__entry:arg2", "U:python3:python:function__entry",
		 "arg2", NULL);
	split_is("p::vfs_read:arg3", "p::vfs_read", "arg3", NULL);
	split_is("r:c:malloc:retval", "r:c:malloc", "retval", NULL);
	split_is("t:sched:sched_switch", "t:sched:sched_switch", NULL, NULL);
	split_is("k:vfs_read", "k:vfs_read", NULL, NULL);
	/* An empty EXPR with a filter: hits are counted. */
	split_is("t:a:b::pid == 1", "t:a:b", "", "pid == 1");
	split_is("t:a:b:", "t:a:b", "", NULL);
}

static void test_split_skips_strings_and_parentheses(void **state)
{
	(void)state;
	split_is("t:a:b:comm:comm == \"x:y\"", "t:a:b", "comm", "comm == \"x:y\"");
	split_is("t:a:b:comm == \"x:y\":pid", "t:a:b", "comm == \"x:y\"", "pid");
	split_is("t:a:b:(\"a:\\\":\"):1", "t:a:b", "(\"a:\\\":\")", "1");
	split_is("u:c:f:container_of(arg1, struct s, m):(arg2 == (1))", "u:c:f",
		 "container_of(arg1, struct s, m)", "(arg2 == (1))");
	split_is("u:c:f:arg1,(char *)arg2,comm", "u:c:f", "arg1,(char *)arg2,comm", NULL);
}

/* Each EXPR's span, blanks around it dropped: what argdist prints. */
static void test_expression_spans(void **state)
{
	const char *text = "u:c:f: arg1 , container_of(arg1, struct s, m) ,comm:pid";
	struct tk_argspec_split sp;
	struct tk_perr err;

	(void)state;
	assert_int_equal(tk_argspec_split(text, &sp, &err), 0);
	assert_int_equal(sp.nexprs, 3);
	assert_int_equal(sp.start[0], 7);
	assert_int_equal(sp.end[0], 11);
	assert_memory_equal(text + sp.start[1], "container_of(arg1, struct s, m)", 31);
	assert_int_equal(sp.end[1] - sp.start[1], 31);
	assert_memory_equal(text + sp.start[2], "comm", 4);
	assert_int_equal(sp.end[2] - sp.start[2], 4);
	assert_string_equal(text + sp.filter, "pid");
	assert_int_equal(tk_argspec_split("t:a:b: :1", &sp, &err), 0);
	assert_int_equal(sp.nexprs, 0);
}

/* text fails at pos with a message that contains msg. */
static void fails(const char *text, int pos, const char *msg)
{
	struct tk_probe_spec spec;
	struct tk_perr err;

	if (!tk_argspec_parse(text, &spec, &err))
		fail_msg("'%s' parsed", text);
	if (!strstr(err.msg, msg) || err.pos != pos)
		fail_msg("'%s': '%s' at %d, not '%s' at %d", text, err.msg, err.pos, msg, pos);
	tk_probe_spec_free(&spec);
}

static void test_errors(void **state)
{
	(void)state;
	fails("x:a:b:c", 0, "unknown probe type");
	fails("sched_switch", 0, "unknown probe type");
	fails("t:sched", 0, "expected t:CATEGORY:EVENT");
	fails("t:a:b:(pid", 6, "unbalanced '('");
	fails("t:a:b:pid)", 9, "unbalanced ')'");
	fails("t:a:b:comm == \"x", 14, "unterminated string");
	fails("t:a:b:pid:comm:x", 14, "a ':' after the filter");
	fails("t:a:b:pid +", 11, "expected");
	fails("t:a:b:pid,", 10, "expected an expression");
	fails("t:a:b:pid pid", 10, "expected ',' or ':'");
	fails("t:a:b:pid:", 10, "expected a filter");
	fails("t:a:b:pid:pid pid", 14, "expected the end of the filter");
	fails("t:a:b:pid:pid == \"x\" 1", 21, "expected the end of the filter");
}

static void test_parse_values_and_filter(void **state)
{
	struct tk_probe_spec spec;
	struct tk_perr err;
	char buf[256];

	(void)state;
	assert_int_equal(tk_argspec_parse("u:/bin/x:item:arg1,(char *)arg2:arg1 != 1 && comm == \"a:b\"",
					  &spec, &err), 0);
	assert_int_equal(spec.kind, TK_PROBE_UPROBE);
	assert_string_equal(spec.target, "/bin/x");
	assert_string_equal(spec.name, "item");
	assert_int_equal(spec.nargs, 2);
	assert_int_equal(spec.conv[0].conv, 0);
	tk_px_format(spec.args[1], buf, sizeof(buf));
	assert_string_equal(buf, "((char *)arg2)");
	assert_int_equal(spec.args[1]->pos, 19);
	tk_px_format(spec.filter, buf, sizeof(buf));
	assert_string_equal(buf, "((arg1 != 1) && (comm == \"a:b\"))");
	assert_int_equal(spec.filter->kid[0]->kid[0]->pos, 32);  /* arg1 */
	tk_probe_spec_free(&spec);

	assert_int_equal(tk_argspec_parse("p::vfs_read", &spec, &err), 0);
	assert_int_equal(spec.kind, TK_PROBE_KPROBE);
	assert_int_equal(spec.nargs, 0);
	assert_null(spec.filter);
	tk_probe_spec_free(&spec);

	assert_int_equal(tk_argspec_parse("t:a:b: :pid == 7", &spec, &err), 0);
	assert_int_equal(spec.nargs, 0);
	assert_non_null(spec.filter);
	tk_probe_spec_free(&spec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_by_probe_kind),
		cmocka_unit_test(test_split_skips_strings_and_parentheses),
		cmocka_unit_test(test_expression_spans),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_parse_values_and_filter),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
