/* Unit tests of libtrace/opts.c: option value parsers and tk_parse_args.
 * Whatever may exit (usage errors, --help) or touches the parser's static
 * state runs in a forked child; the parent checks its exit status, its
 * stderr and stdout, and the tk_opts it ended with. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "opts.h"
#include "perfevent.h"
#include "setup.h"
#include "stacks.h"

/* ---- the fake tools ---- */

/* What the tools' own parsers saw. */
struct fake {
	long top;        /* -T/--top N (topper) */
	long level;      /* -L/--level N (faketool) */
	int extra;       /* -x/--extra */
};

static struct fake fake;

static const struct argp_option plain_options[] = {
	{ "extra", 'x', 0, 0, "An extra flag", 0 },
	{ "level", 'L', "N", 0, "A level from 1 to 9", 0 },
	{ 0 },
};

static error_t plain_parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'x': fake.extra = 1; break;
	case 'L': fake.level = tk_arg_long("--level", arg, 1, 9); break;
	default: return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool_plain = {
	.name = "faketool",
	.doc = "A fake tool for tests.\vExamples:\n  faketool -x\n",
	.options = plain_options,
	.parser = plain_parse,
};

/* Like syscount: takes -T for its own --top, and is periodic. */
static const struct argp_option top_options[] = {
	{ "top", 'T', "N", 0, "Show the top N", 0 },
	{ "extra", 'x', 0, 0, "An extra flag", 0 },
	{ 0 },
};

static error_t top_parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'T': fake.top = tk_arg_long("--top", arg, 1, 1000); break;
	case 'x': fake.extra = 1; break;
	default: return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool_top = {
	.name = "topper",
	.doc = "A periodic fake tool that owns -T.",
	.options = top_options,
	.parser = top_parse,
	.own_letters = "T",
	.periodic = true,
};

/* No options and no parser of its own. */
static const struct tk_tool tool_bare = {
	.name = "bare",
	.doc = "Nothing of its own.",
	.periodic = true,
};

/* Like the stack tools: the stack options as a family, -d its own. */
static const struct tk_tool tool_stacker = {
	.name = "stacker",
	.doc = "A fake stack tool.",
	.extra = &tk_stack_argp,
	.own_letters = "d",
};

/* Like syscount: -c is --ppid, -t is --tid; --cgroup keeps its name. */
static const struct tk_letter lettered_letters[] = {
	{ 'c', "ppid" }, { 't', "tid" }, { 0 },
};

static const struct tk_tool tool_lettered = {
	.name = "lettered",
	.doc = "Letters for long-only common options.",
	.own_letters = "c",
	.letters = lettered_letters,
};

/* ---- running code in a child ---- */

struct shared {
	struct tk_opts opts;
	struct fake fake;
	struct tk_stack_opts stack;
	char comm[sizeof(((struct tk_filter *)0)->comm)];
	char cgroup_path[256];
	char btf_path[256];
	char command[256];   /* -- COMMAND's words, each followed by '|' */
	long long_result;
	double double_result;
	int parsed;   /* the child got past the call */
};

static struct shared *sh;

struct child {
	int status;
	char err[4096];
	char out[65536];
};

typedef void (*child_fn)(const void *arg);

static void read_all(int fd, char *buf, size_t size)
{
	size_t n = 0;
	ssize_t r;

	for (;;) {
		r = read(fd, buf + n, size - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += r;
		if (n == size - 1) {  /* drain what does not fit */
			char junk[512];

			while ((r = read(fd, junk, sizeof(junk))) > 0 ||
			       (r < 0 && errno == EINTR))
				;
			break;
		}
	}
	buf[n] = 0;
}

/* Run fn(arg) in a child with stderr on a pipe and stdout in a temporary
 * file; the child exits 0 if fn returns. */
static void run_child(child_fn fn, const void *arg, struct child *c)
{
	FILE *out = tmpfile();
	int errp[2];
	pid_t pid;

	assert_non_null(out);
	assert_int_equal(pipe(errp), 0);
	memset(sh, 0, sizeof(*sh));
	memset(c, 0, sizeof(*c));
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(errp[0]);
		dup2(errp[1], STDERR_FILENO);
		dup2(fileno(out), STDOUT_FILENO);
		close(errp[1]);
		alarm(20);
		fn(arg);
		fflush(NULL);
		_exit(0);
	}
	close(errp[1]);
	read_all(errp[0], c->err, sizeof(c->err));
	close(errp[0]);
	while (waitpid(pid, &c->status, 0) < 0)
		assert_int_equal(errno, EINTR);
	rewind(out);
	read_all(fileno(out), c->out, sizeof(c->out));
	fclose(out);
}

static int exit_code(const struct child *c)
{
	if (WIFSIGNALED(c->status))
		fail_msg("child killed by signal %d; stderr: %s",
			 WTERMSIG(c->status), c->err);
	assert_true(WIFEXITED(c->status));
	return WEXITSTATUS(c->status);
}

/* Exit 2 with exactly this one stderr line, nothing on stdout. */
static void assert_usage_error(const struct child *c, const char *line)
{
	const char *nl = strchr(c->err, '\n');

	assert_int_equal(exit_code(c), 2);
	assert_non_null(nl);
	assert_int_equal(nl[1], 0);  /* one line, and it ends in \n */
	assert_string_equal(c->err, line);
	assert_string_equal(c->out, "");
	assert_int_equal(sh->parsed, 0);
}

static void assert_success(const struct child *c)
{
	assert_string_equal(c->err, "");
	assert_int_equal(exit_code(c), 0);
	assert_int_equal(sh->parsed, 1);
}

/* ---- tk_arg_long / tk_arg_double ---- */

struct arg_call {
	const char *option, *arg;
	double min, max;
	long lmin, lmax;
};

static void call_arg_long(const void *p)
{
	const struct arg_call *a = p;

	tk_set_tool_name("argtest");
	sh->long_result = tk_arg_long(a->option, a->arg, a->lmin, a->lmax);
	sh->parsed = 1;
}

static void call_arg_double(const void *p)
{
	const struct arg_call *a = p;

	tk_set_tool_name("argtest");
	sh->double_result = tk_arg_double(a->option, a->arg, a->min, a->max);
	sh->parsed = 1;
}

static void test_arg_long_valid(void **state)
{
	(void)state;
	assert_int_equal(tk_arg_long("--pid", "42", 1, INT_MAX), 42);
	assert_int_equal(tk_arg_long("--pid", "1", 1, INT_MAX), 1);
	assert_int_equal(tk_arg_long("--pid", "2147483647", 1, INT_MAX), INT_MAX);
	assert_int_equal(tk_arg_long("--x", "-7", -10, 10), -7);
	assert_int_equal(tk_arg_long("--x", "10", -10, 10), 10);
	assert_int_equal(tk_arg_long("--x", "+5", 0, 10), 5);
	assert_int_equal(tk_arg_long("count", "9223372036854775807", 1, LONG_MAX),
			 LONG_MAX);
}

static void check_long_error(const char *option, const char *arg, long min,
			     long max, const char *line)
{
	const struct arg_call a = { option, arg, 0, 0, min, max };
	struct child c;

	run_child(call_arg_long, &a, &c);
	assert_usage_error(&c, line);
}

static void test_arg_long_invalid(void **state)
{
	(void)state;
	check_long_error("--pid", "abc", 1, INT_MAX,
		"argtest: invalid --pid value 'abc': expected an integer from 1 to 2147483647; see 'argtest --help'\n");
	check_long_error("--pid", "", 1, INT_MAX,
		"argtest: invalid --pid value '': expected an integer from 1 to 2147483647; see 'argtest --help'\n");
	check_long_error("--pid", "12x", 1, INT_MAX,
		"argtest: invalid --pid value '12x': expected an integer from 1 to 2147483647; see 'argtest --help'\n");
	check_long_error("--pid", "1.5", 1, INT_MAX,
		"argtest: invalid --pid value '1.5': expected an integer from 1 to 2147483647; see 'argtest --help'\n");
	check_long_error("--pid", "0", 1, INT_MAX,
		"argtest: invalid --pid value '0': expected an integer from 1 to 2147483647; see 'argtest --help'\n");
	check_long_error("--pid", "2147483648", 1, INT_MAX,
		"argtest: invalid --pid value '2147483648': expected an integer from 1 to 2147483647; see 'argtest --help'\n");
	check_long_error("--pid", "99999999999999999999", 1, INT_MAX,
		"argtest: invalid --pid value '99999999999999999999': expected an integer from 1 to 2147483647; see 'argtest --help'\n");
	check_long_error("--level", "10", 1, 9,
		"argtest: invalid --level value '10': expected an integer from 1 to 9; see 'argtest --help'\n");
	check_long_error("--x", "-11", -10, 10,
		"argtest: invalid --x value '-11': expected an integer from -10 to 10; see 'argtest --help'\n");
	/* Without an upper bound the message has none either. */
	check_long_error("count", "0", 1, LONG_MAX,
		"argtest: invalid count value '0': expected an integer >= 1; see 'argtest --help'\n");
	check_long_error("count", "99999999999999999999", 1, LONG_MAX,
		"argtest: invalid count value '99999999999999999999': expected an integer >= 1; see 'argtest --help'\n");
}

/* ---- tk_arg_choice ---- */

static const char *const choices[] = { "size", "count", "name" };

static void call_arg_choice(const void *p)
{
	const struct arg_call *a = p;

	tk_set_tool_name("argtest");
	sh->long_result = tk_arg_choice(a->option, a->arg, choices, a->lmax);
	sh->parsed = 1;
}

static void test_arg_choice(void **state)
{
	const struct arg_call bad3 = { "--sort", "bytes", 0, 0, 0, 3 };
	const struct arg_call bad2 = { "--sort", "", 0, 0, 0, 2 };
	const struct arg_call bad1 = { "--sort", "Size", 0, 0, 0, 1 };
	struct child c;

	(void)state;
	assert_int_equal(tk_arg_choice("--sort", "size", choices, 3), 0);
	assert_int_equal(tk_arg_choice("--sort", "name", choices, 3), 2);
	run_child(call_arg_choice, &bad3, &c);
	assert_usage_error(&c,
		"argtest: invalid --sort value 'bytes': expected size, count or name; see 'argtest --help'\n");
	run_child(call_arg_choice, &bad2, &c);
	assert_usage_error(&c,
		"argtest: invalid --sort value '': expected size or count; see 'argtest --help'\n");
	run_child(call_arg_choice, &bad1, &c);
	assert_usage_error(&c,
		"argtest: invalid --sort value 'Size': expected size; see 'argtest --help'\n");
}

static void test_arg_double_valid(void **state)
{
	(void)state;
	assert_float_equal(tk_arg_double("--duration", "1.5", 0.001, 1e9), 1.5, 0);
	assert_float_equal(tk_arg_double("--duration", "2", 0.001, 1e9), 2.0, 0);
	assert_float_equal(tk_arg_double("--duration", "1e3", 0.001, 1e9), 1000.0, 0);
	assert_float_equal(tk_arg_double("--duration", "0.001", 0.001, 1e9), 0.001, 0);
	assert_float_equal(tk_arg_double("--duration", "1e9", 0.001, 1e9), 1e9, 0);
	assert_float_equal(tk_arg_double("--ratio", "-0.25", -1, 1), -0.25, 0);
}

static void check_double_error(const char *arg, const char *line)
{
	const struct arg_call a = { "--duration", arg, 0.001, 1e9, 0, 0 };
	struct child c;

	run_child(call_arg_double, &a, &c);
	assert_usage_error(&c, line);
}

static void test_arg_double_invalid(void **state)
{
	(void)state;
	check_double_error("abc",
		"argtest: invalid --duration value 'abc': expected a number from 0.001 to 1e+09; see 'argtest --help'\n");
	check_double_error("",
		"argtest: invalid --duration value '': expected a number from 0.001 to 1e+09; see 'argtest --help'\n");
	check_double_error("1.5s",
		"argtest: invalid --duration value '1.5s': expected a number from 0.001 to 1e+09; see 'argtest --help'\n");
	check_double_error("0",
		"argtest: invalid --duration value '0': expected a number from 0.001 to 1e+09; see 'argtest --help'\n");
	check_double_error("-1",
		"argtest: invalid --duration value '-1': expected a number from 0.001 to 1e+09; see 'argtest --help'\n");
	check_double_error("2e9",
		"argtest: invalid --duration value '2e9': expected a number from 0.001 to 1e+09; see 'argtest --help'\n");
	check_double_error("nan",
		"argtest: invalid --duration value 'nan': expected a number from 0.001 to 1e+09; see 'argtest --help'\n");
	check_double_error("inf",
		"argtest: invalid --duration value 'inf': expected a number from 0.001 to 1e+09; see 'argtest --help'\n");
	check_double_error("1e999",
		"argtest: invalid --duration value '1e999': expected a number from 0.001 to 1e+09; see 'argtest --help'\n");
}

/* ---- tk_parse_args ---- */

struct parse_call {
	const struct tk_tool *tool;
	const char *argv[32];
};

static void call_parse(const void *p)
{
	const struct parse_call *pc = p;
	char *argv[33];
	int argc = 0;

	while (pc->argv[argc]) {
		argv[argc] = (char *)pc->argv[argc];
		argc++;
	}
	argv[argc] = NULL;
	memset(&fake, 0, sizeof(fake));
	tk_parse_args(pc->tool, argc, argv);
	sh->opts = tk_opts;
	sh->fake = fake;
	sh->stack = tk_stack_opts;
	sh->stack.debug_dirs = NULL;  /* a pointer into the child */
	memcpy(sh->comm, tk_opts.filter.comm, sizeof(sh->comm));
	if (tk_opts.cgroup_path)
		snprintf(sh->cgroup_path, sizeof(sh->cgroup_path), "%s",
			 tk_opts.cgroup_path);
	if (tk_opts.btf_path)
		snprintf(sh->btf_path, sizeof(sh->btf_path), "%s",
			 tk_opts.btf_path);
	for (char **w = tk_opts.command; w && *w; w++) {
		strncat(sh->command, *w, sizeof(sh->command) - strlen(sh->command) - 2);
		strcat(sh->command, "|");
	}
	sh->parsed = 1;
}

/* PARSE(&c, tool, "arg", ...): argv[0] is the tool's name. */
#define PARSE(c, t, ...) do {                                             \
		const struct parse_call pc_ = { (t), { (t)->name, __VA_ARGS__ } }; \
		run_child(call_parse, &pc_, (c));                          \
	} while (0)

static void test_parse_defaults(void **state)
{
	const struct parse_call pc = { &tool_plain, { "faketool", NULL } };
	struct child c;

	(void)state;
	run_child(call_parse, &pc, &c);
	assert_success(&c);
	assert_int_equal(sh->opts.filter.tgid, 0);
	assert_int_equal(sh->opts.filter.tid, 0);
	assert_int_equal(sh->opts.filter.uid, -1);
	assert_int_equal(sh->opts.filter.use_cgroup, 0);
	assert_string_equal(sh->comm, "");
	assert_null(sh->opts.cgroup_path);
	assert_null(sh->opts.btf_path);
	assert_false(sh->opts.time);
	assert_false(sh->opts.json);
	assert_false(sh->opts.verbose);
	assert_float_equal(sh->opts.duration, 0, 0);
	assert_int_equal(sh->opts.buffer_kb, 0);
	assert_int_equal(sh->opts.interval, 0);
	assert_int_equal(sh->opts.count, 0);
	assert_string_equal(c.out, "");
}

static void test_parse_common_short(void **state)
{
	struct child c;

	(void)state;
	PARSE(&c, &tool_plain, "-p", "42", "--tid", "7", "-u", "1000",
	      "-n", "bash", "-j", "-T", "-d", "1.5", "--buffer-kb", "64", "-v",
	      NULL);
	assert_success(&c);
	assert_int_equal(sh->opts.filter.tgid, 42);
	assert_int_equal(sh->opts.filter.tid, 7);
	assert_int_equal(sh->opts.filter.uid, 1000);
	assert_string_equal(sh->comm, "bash");
	assert_true(sh->opts.json);
	assert_true(sh->opts.time);
	assert_true(sh->opts.verbose);
	assert_float_equal(sh->opts.duration, 1.5, 0);
	assert_int_equal(sh->opts.buffer_kb, 64);
	assert_int_equal(sh->opts.interval, 0);
	assert_int_equal(sh->opts.count, 0);
	assert_int_equal(sh->fake.extra, 0);
}

static void test_parse_common_long(void **state)
{
	struct child c;

	(void)state;
	PARSE(&c, &tool_plain, "--pid=43", "--uid", "0", "--name=x",
	      "--json", "--time", "--duration", "2", "--verbose",
	      "--cgroup", "/", "--btf", "/etc/passwd", "--buffer-kb=4",
	      "--tid=1", NULL);
	assert_success(&c);
	assert_int_equal(sh->opts.filter.tgid, 43);
	assert_int_equal(sh->opts.filter.tid, 1);
	assert_int_equal(sh->opts.filter.uid, 0);
	assert_string_equal(sh->comm, "x");
	assert_true(sh->opts.json);
	assert_true(sh->opts.time);
	assert_true(sh->opts.verbose);
	assert_float_equal(sh->opts.duration, 2.0, 0);
	assert_int_equal(sh->opts.filter.use_cgroup, 1);
	assert_string_equal(sh->cgroup_path, "/");
	assert_string_equal(sh->btf_path, "/etc/passwd");
	assert_int_equal(sh->opts.buffer_kb, 4);
}

static void test_parse_clustered_and_attached(void **state)
{
	struct child c;

	(void)state;
	PARSE(&c, &tool_plain, "-jTv", "-p42", "-n123456789012345", NULL);
	assert_success(&c);
	assert_true(sh->opts.json);
	assert_true(sh->opts.time);
	assert_true(sh->opts.verbose);
	assert_int_equal(sh->opts.filter.tgid, 42);
	assert_string_equal(sh->comm, "123456789012345");  /* 15: the most */

	PARSE(&c, &tool_plain, "-jp", "7", "-xd0.5", NULL);
	assert_success(&c);
	assert_true(sh->opts.json);
	assert_int_equal(sh->opts.filter.tgid, 7);
	assert_int_equal(sh->fake.extra, 1);
	assert_float_equal(sh->opts.duration, 0.5, 0);
}

static void test_parse_tool_options(void **state)
{
	struct child c;

	(void)state;
	PARSE(&c, &tool_plain, "-x", "-L", "3", "-p", "9", NULL);
	assert_success(&c);
	assert_int_equal(sh->fake.extra, 1);
	assert_int_equal(sh->fake.level, 3);
	assert_int_equal(sh->opts.filter.tgid, 9);

	PARSE(&c, &tool_plain, "--extra", "--level=9", NULL);
	assert_success(&c);
	assert_int_equal(sh->fake.extra, 1);
	assert_int_equal(sh->fake.level, 9);

	PARSE(&c, &tool_plain, "-L", "10", NULL);
	assert_usage_error(&c,
		"faketool: invalid --level value '10': expected an integer from 1 to 9; see 'faketool --help'\n");
}

/* A tool that owns -T gets it; --time stays, long only. */
static void test_parse_tool_letters(void **state)
{
	struct child c;

	(void)state;
	PARSE(&c, &tool_lettered, "-c", "12", "-t", "34", "--cgroup", "/", NULL);
	assert_success(&c);
	assert_int_equal(sh->opts.filter.ppid, 12);
	assert_int_equal(sh->opts.filter.tid, 34);
	assert_int_equal(sh->opts.filter.use_cgroup, 1);
	assert_string_equal(sh->cgroup_path, "/");

	PARSE(&c, &tool_lettered, "--ppid=5", "--tid", "6", NULL);
	assert_success(&c);
	assert_int_equal(sh->opts.filter.ppid, 5);
	assert_int_equal(sh->opts.filter.tid, 6);
	assert_int_equal(sh->opts.filter.use_cgroup, 0);

	PARSE(&c, &tool_lettered, "-c", "x", NULL);
	assert_usage_error(&c,
		"lettered: invalid --ppid value 'x': expected an integer from 1 to 2147483647; see 'lettered --help'\n");
}

static void test_parse_own_letters(void **state)
{
	struct child c;

	(void)state;
	PARSE(&c, &tool_top, "-T", "5", NULL);
	assert_success(&c);
	assert_int_equal(sh->fake.top, 5);
	assert_false(sh->opts.time);

	PARSE(&c, &tool_top, "--time", NULL);
	assert_success(&c);
	assert_true(sh->opts.time);
	assert_int_equal(sh->fake.top, 0);

	PARSE(&c, &tool_top, "-T3", "--time", "-j", NULL);
	assert_success(&c);
	assert_int_equal(sh->fake.top, 3);
	assert_true(sh->opts.time);
	assert_true(sh->opts.json);

	PARSE(&c, &tool_top, "--top=7", NULL);
	assert_success(&c);
	assert_int_equal(sh->fake.top, 7);
	assert_false(sh->opts.time);

	/* -T needs the tool's value now. */
	PARSE(&c, &tool_top, "-T", NULL);
	assert_usage_error(&c,
		"topper: option '-T' needs a value; see 'topper --help'\n");
	PARSE(&c, &tool_top, "-T", "x", NULL);
	assert_usage_error(&c,
		"topper: invalid --top value 'x': expected an integer from 1 to 1000; see 'topper --help'\n");

	/* A tool that does not own -T leaves it to --time. */
	PARSE(&c, &tool_plain, "-T", NULL);
	assert_success(&c);
	assert_true(sh->opts.time);
}

static void test_parse_periodic(void **state)
{
	struct child c;

	(void)state;
	PARSE(&c, &tool_top, "2", NULL);
	assert_success(&c);
	assert_int_equal(sh->opts.interval, 2);
	assert_int_equal(sh->opts.count, 0);

	PARSE(&c, &tool_top, "2", "5", NULL);
	assert_success(&c);
	assert_int_equal(sh->opts.interval, 2);
	assert_int_equal(sh->opts.count, 5);

	/* Options may come between and after the positionals. */
	PARSE(&c, &tool_top, "1", "-j", "3", "-T", "4", NULL);
	assert_success(&c);
	assert_int_equal(sh->opts.interval, 1);
	assert_int_equal(sh->opts.count, 3);
	assert_true(sh->opts.json);
	assert_int_equal(sh->fake.top, 4);

	PARSE(&c, &tool_bare, "-p", "1", "10", "20", NULL);
	assert_success(&c);
	assert_int_equal(sh->opts.filter.tgid, 1);
	assert_int_equal(sh->opts.interval, 10);
	assert_int_equal(sh->opts.count, 20);

	PARSE(&c, &tool_top, "2", "5", "7", NULL);
	assert_usage_error(&c,
		"topper: unexpected argument '7' after [interval [count]]; see 'topper --help'\n");
	PARSE(&c, &tool_top, "0", NULL);
	assert_usage_error(&c,
		"topper: invalid interval value '0': expected an integer from 1 to 2147483647; see 'topper --help'\n");
	PARSE(&c, &tool_top, "x", NULL);
	assert_usage_error(&c,
		"topper: invalid interval value 'x': expected an integer from 1 to 2147483647; see 'topper --help'\n");
	PARSE(&c, &tool_top, "1", "0", NULL);
	assert_usage_error(&c,
		"topper: invalid count value '0': expected an integer >= 1; see 'topper --help'\n");
	/* "--" starts a COMMAND to run and trace (libtrace/command.c), as
	 * in strace and perf; it no longer lets an interval begin with -. */
	PARSE(&c, &tool_top, "2", "--", "-5", NULL);
	assert_int_equal(exit_code(&c), 127);
	assert_string_equal(c.err, "topper: cannot run '-5': command not found\n");
	assert_int_equal(sh->parsed, 0);
}

/* Where COMMAND starts: the first "--" that is not an option's value,
 * however the option was written (cluster, attached, abbreviated). With
 * --all, so that no transient cgroup is made. */
static void test_parse_command_split(void **state)
{
	struct child c;

	(void)state;
	PARSE(&c, &tool_plain, "--all", "-n", "--", "--", "true", "x", NULL);
	assert_success(&c);
	assert_string_equal(sh->comm, "--");
	assert_string_equal(sh->command, "true|x|");

	PARSE(&c, &tool_plain, "--all", "-jn", "--", "--", "sh", NULL);
	assert_success(&c);
	assert_true(sh->opts.json);
	assert_string_equal(sh->comm, "--");
	assert_string_equal(sh->command, "sh|");

	PARSE(&c, &tool_plain, "--na", "--", "--all", "--", "true", NULL);
	assert_success(&c);
	assert_true(sh->opts.all);
	assert_string_equal(sh->comm, "--");
	assert_string_equal(sh->command, "true|");

	PARSE(&c, &tool_plain, "--name=--", "--all", "--", "true", NULL);
	assert_success(&c);
	assert_string_equal(sh->comm, "--");
	assert_string_equal(sh->command, "true|");

	/* After "--", options are COMMAND's. */
	PARSE(&c, &tool_plain, "-a", "--", "true", "-n", "x", "--", "-j", NULL);
	assert_success(&c);
	assert_string_equal(sh->comm, "");
	assert_false(sh->opts.json);
	assert_string_equal(sh->command, "true|-n|x|--|-j|");

	PARSE(&c, &tool_top, "--all", "2", "--", "true", NULL);
	assert_success(&c);
	assert_int_equal(sh->opts.interval, 2);
	assert_string_equal(sh->command, "true|");

	PARSE(&c, &tool_plain, "-j", NULL);
	assert_success(&c);
	assert_null(sh->opts.command);
}

static void test_parse_extra_positional(void **state)
{
	struct child c;

	(void)state;
	PARSE(&c, &tool_plain, "5", NULL);
	assert_usage_error(&c,
		"faketool: unexpected argument '5'; see 'faketool --help'\n");
	PARSE(&c, &tool_plain, "-j", "stray", "-v", NULL);
	assert_usage_error(&c,
		"faketool: unexpected argument 'stray'; see 'faketool --help'\n");
}

static void test_parse_unknown_option(void **state)
{
	struct child c;

	(void)state;
	PARSE(&c, &tool_plain, "--bogus", NULL);
	assert_usage_error(&c,
		"faketool: unknown option '--bogus'; see 'faketool --help'\n");
	PARSE(&c, &tool_plain, "--bogus=1", NULL);
	assert_usage_error(&c,
		"faketool: unknown option '--bogus=1'; see 'faketool --help'\n");
	PARSE(&c, &tool_plain, "-Z", NULL);
	assert_usage_error(&c,
		"faketool: unknown option '-Z'; see 'faketool --help'\n");
	PARSE(&c, &tool_plain, "-jZ", NULL);
	assert_usage_error(&c,
		"faketool: unknown option '-Z'; see 'faketool --help'\n");
	PARSE(&c, &tool_plain, "-p", "1", "--pidd", "2", NULL);
	assert_usage_error(&c,
		"faketool: unknown option '--pidd'; see 'faketool --help'\n");
	/* topper's own options are not faketool's. */
	PARSE(&c, &tool_plain, "--top", "3", NULL);
	assert_usage_error(&c,
		"faketool: unknown option '--top'; see 'faketool --help'\n");
}

static const struct tk_bcc_missing plain_missing[] = {
	{ "--buffer-pages", "use --buffer-kb KB" },
	{ "-b", "use --buffer-kb KB" },
	{ 0 },
};

static const struct tk_tool tool_bcc = {
	.name = "faketool",
	.doc = "A fake tool for tests.",
	.options = plain_options,
	.parser = plain_parse,
	.bcc_missing = plain_missing,
};

/* A bcc option the tool has not says what to use instead; one it has
 * (-x here) is never caught; an unknown one stays unknown. */
static void test_parse_bcc_missing(void **state)
{
	struct child c;

	(void)state;
	PARSE(&c, &tool_bcc, "--buffer-pages=8", NULL);
	assert_usage_error(&c,
		"faketool: bcc's option '--buffer-pages' is not in tracekit: use --buffer-kb KB; see 'faketool --help'\n");
	PARSE(&c, &tool_bcc, "-jb", "8", NULL);
	assert_usage_error(&c,
		"faketool: bcc's option '-b' is not in tracekit: use --buffer-kb KB; see 'faketool --help'\n");
	PARSE(&c, &tool_plain, "-b", NULL);
	assert_usage_error(&c,
		"faketool: unknown option '-b'; see 'faketool --help'\n");
	PARSE(&c, &tool_plain, "--cgroupmap", "/sys/fs/bpf/m", NULL);
	assert_usage_error(&c,
		"faketool: bcc's option '--cgroupmap' is not in tracekit: filter by cgroup directory with --cgroup PATH (cgroup v2); see 'faketool --help'\n");
	PARSE(&c, &tool_bcc, "--cgroupmapx", NULL);
	assert_usage_error(&c,
		"faketool: unknown option '--cgroupmapx'; see 'faketool --help'\n");
	PARSE(&c, &tool_bcc, "-x", NULL);
	assert_success(&c);
}

/* -p/--tid lists, --ppid, and -u by name. */
static void test_parse_id_lists_and_users(void **state)
{
	struct child c;

	(void)state;
	PARSE(&c, &tool_plain, "-p", "3,1,3", "--tid", "5", "--ppid", "9",
	      "-u", "root", NULL);
	assert_success(&c);
	assert_int_equal(sh->opts.filter.tgid, TK_FILTER_LIST);
	assert_int_equal(sh->opts.filter.tid, 5);
	assert_int_equal(sh->opts.filter.ppid, 9);
	assert_int_equal(sh->opts.filter.uid, 0);
	PARSE(&c, &tool_plain, "-p", "3,3", "--tid", "5,6", NULL);
	assert_success(&c);
	assert_int_equal(sh->opts.filter.tgid, 3);  /* one id, once */
	assert_int_equal(sh->opts.filter.tid, TK_FILTER_LIST);
	PARSE(&c, &tool_plain, "-p", "1,x", NULL);
	assert_usage_error(&c,
		"faketool: invalid --pid value '1,x': 'x' is not an id from 1 to 2147483647 (expected 1,2,3); see 'faketool --help'\n");
	PARSE(&c, &tool_plain, "--tid", "1,", NULL);
	assert_usage_error(&c,
		"faketool: invalid --tid value '1,': expected an id or a comma-separated list (1,2,3); see 'faketool --help'\n");
	PARSE(&c, &tool_plain, "-p", "0", NULL);
	assert_usage_error(&c,
		"faketool: invalid --pid value '0': expected an integer from 1 to 2147483647; see 'faketool --help'\n");
	PARSE(&c, &tool_plain, "-p", "2,0", NULL);
	assert_usage_error(&c,
		"faketool: invalid --pid value '2,0': '0' is not an id from 1 to 2147483647 (expected 1,2,3); see 'faketool --help'\n");
	PARSE(&c, &tool_plain, "--ppid", "-1", NULL);
	assert_usage_error(&c,
		"faketool: invalid --ppid value '-1': expected an integer from 1 to 2147483647; see 'faketool --help'\n");
	PARSE(&c, &tool_plain, "-u", "no-such-user-tk", NULL);
	assert_usage_error(&c,
		"faketool: invalid --uid value 'no-such-user-tk': no such user (a user name or a numeric UID); see 'faketool --help'\n");
	PARSE(&c, &tool_plain, "-u", "", NULL);
	assert_usage_error(&c,
		"faketool: invalid --uid value '': no such user (a user name or a numeric UID); see 'faketool --help'\n");
}

static void test_parse_missing_value(void **state)
{
	struct child c;

	(void)state;
	PARSE(&c, &tool_plain, "-p", NULL);
	assert_usage_error(&c,
		"faketool: option '-p' needs a value; see 'faketool --help'\n");
	PARSE(&c, &tool_plain, "--pid", NULL);
	assert_usage_error(&c,
		"faketool: option '--pid' needs a value; see 'faketool --help'\n");
	PARSE(&c, &tool_plain, "-j", "--tid", NULL);
	assert_usage_error(&c,
		"faketool: option '--tid' needs a value; see 'faketool --help'\n");
	PARSE(&c, &tool_plain, "-x", "-L", NULL);
	assert_usage_error(&c,
		"faketool: option '-L' needs a value; see 'faketool --help'\n");
}

static void test_parse_bad_values(void **state)
{
	struct child c;

	(void)state;
	PARSE(&c, &tool_plain, "-p", "abc", NULL);
	assert_usage_error(&c,
		"faketool: invalid --pid value 'abc': expected an integer from 1 to 2147483647; see 'faketool --help'\n");
	PARSE(&c, &tool_plain, "--tid", "0", NULL);
	assert_usage_error(&c,
		"faketool: invalid --tid value '0': expected an integer from 1 to 2147483647; see 'faketool --help'\n");
	PARSE(&c, &tool_plain, "-u", "-1", NULL);
	assert_usage_error(&c,
		"faketool: invalid --uid value '-1': expected an integer from 0 to 2147483646; see 'faketool --help'\n");
	PARSE(&c, &tool_plain, "-n", "averyveryverylongname", NULL);
	assert_usage_error(&c,
		"faketool: invalid --name value 'averyveryverylongname': expected 1 to 15 characters (comm is at most 15); see 'faketool --help'\n");
	PARSE(&c, &tool_plain, "--name=", NULL);
	assert_usage_error(&c,
		"faketool: invalid --name value '': expected 1 to 15 characters (comm is at most 15); see 'faketool --help'\n");
	PARSE(&c, &tool_plain, "-d", "0", NULL);
	assert_usage_error(&c,
		"faketool: invalid --duration value '0': expected a number from 0.001 to 1e+09; see 'faketool --help'\n");
	PARSE(&c, &tool_plain, "--buffer-kb", "2", NULL);
	assert_usage_error(&c,
		"faketool: invalid --buffer-kb value '2': expected an integer from 4 to 1048576; see 'faketool --help'\n");
	PARSE(&c, &tool_plain, "-c", "/nonexistent/cgroup", NULL);
	assert_usage_error(&c,
		"faketool: invalid --cgroup value '/nonexistent/cgroup': not a cgroup directory (e.g. /sys/fs/cgroup/system.slice); see 'faketool --help'\n");
	PARSE(&c, &tool_plain, "-c", "/etc/passwd", NULL);
	assert_usage_error(&c,
		"faketool: invalid --cgroup value '/etc/passwd': not a cgroup directory (e.g. /sys/fs/cgroup/system.slice); see 'faketool --help'\n");
	PARSE(&c, &tool_plain, "--btf", "/nonexistent.btf", NULL);
	assert_usage_error(&c,
		"faketool: invalid --btf value '/nonexistent.btf': no such file; see 'faketool --help'\n");
	PARSE(&c, &tool_plain, "--btf", "/", NULL);
	assert_usage_error(&c,
		"faketool: invalid --btf value '/': no such file; see 'faketool --help'\n");
}

/* One usage-error line that names what it must: exit 2, "TOOL: ... ; see
 * 'TOOL --help'", printable, containing want. */
static void assert_usage_line_names(const struct child *c, const char *tool,
				    const char *want)
{
	char prefix[64], suffix[64];
	size_t len = strlen(c->err), i;

	snprintf(prefix, sizeof(prefix), "%s: ", tool);
	snprintf(suffix, sizeof(suffix), "; see '%s --help'\n", tool);
	assert_int_equal(exit_code(c), 2);
	assert_true(len > strlen(prefix) + strlen(suffix));
	assert_memory_equal(c->err, prefix, strlen(prefix));
	assert_string_equal(c->err + len - strlen(suffix), suffix);
	for (i = 0; i < len - 1; i++)
		if ((unsigned char)c->err[i] < 0x20 || c->err[i] == 0x7f)
			fail_msg("control byte 0x%02x in: %s", c->err[i], c->err);
	assert_non_null(strstr(c->err, want));
	assert_string_equal(c->out, "");
}

/* A value given to an option that takes none. */
static void test_parse_value_for_flag(void **state)
{
	struct child c;

	(void)state;
	PARSE(&c, &tool_plain, "--json=yes", NULL);
	assert_usage_line_names(&c, "faketool", "--json");
}

/* The same for a common flag that is long-only in this tool. */
static void test_parse_value_for_long_only_flag(void **state)
{
	struct child c;

	(void)state;
	PARSE(&c, &tool_top, "--time=1", NULL);
	assert_usage_line_names(&c, "topper", "--time");
}

static void test_parse_help(void **state)
{
	struct child c;

	(void)state;
	PARSE(&c, &tool_plain, "--help", NULL);
	assert_int_equal(exit_code(&c), 0);
	assert_string_equal(c.err, "");
	assert_int_equal(sh->parsed, 0);
	assert_non_null(strstr(c.out, "A fake tool for tests."));
	assert_non_null(strstr(c.out, "Common options:"));
	assert_non_null(strstr(c.out, "-p, --pid=PID"));
	assert_non_null(strstr(c.out, "-T, --time"));
	assert_non_null(strstr(c.out, "-L, --level=N"));
	assert_non_null(strstr(c.out, "--buffer-kb=KB"));

	/* bcc users type -h. */
	PARSE(&c, &tool_plain, "-h", NULL);
	assert_int_equal(exit_code(&c), 0);
	assert_string_equal(c.err, "");
	assert_non_null(strstr(c.out, "Common options:"));

	PARSE(&c, &tool_plain, "-?", NULL);
	assert_int_equal(exit_code(&c), 0);
	assert_non_null(strstr(c.out, "Common options:"));

	/* topper's -T is --top; --time has no letter there. */
	PARSE(&c, &tool_top, "--help", NULL);
	assert_int_equal(exit_code(&c), 0);
	assert_non_null(strstr(c.out, "-T, --top=N"));
	assert_null(strstr(c.out, "-T, --time"));
	assert_non_null(strstr(c.out, "    --time"));
	assert_non_null(strstr(c.out, "[interval [count]]"));
}

/* ---- option families (tk_tool.extra): the stack tools' options ---- */

static void test_parse_stack_options(void **state)
{
	struct child c;

	(void)state;
	PARSE(&c, &tool_stacker, NULL);
	assert_success(&c);
	assert_false(sh->stack.folded);
	assert_int_equal(sh->stack.storage_size, 16384);
	assert_int_equal(sh->stack.max_depth, 127);
	assert_int_equal(sh->stack.max_stacks, 16384);

	/* -d is --delimited here; --duration keeps its long name. */
	PARSE(&c, &tool_stacker, "-fdaU", "--duration", "3", "--inline",
	      "--stack-storage-size", "1024", "--max-stacks=99",
	      "--perf-max-stack-depth", "20", "-p", "7", NULL);
	assert_success(&c);
	assert_true(sh->stack.folded);
	assert_true(sh->stack.delimited);
	assert_true(sh->stack.annotations);
	assert_true(sh->stack.user_only);
	assert_false(sh->stack.kernel_only);
	assert_true(sh->stack.inline_frames);
	assert_int_equal(sh->stack.storage_size, 1024);
	assert_int_equal(sh->stack.max_stacks, 99);
	assert_int_equal(sh->stack.max_depth, 20);
	assert_float_equal(sh->opts.duration, 3, 0);
	assert_int_equal(sh->opts.filter.tgid, 7);

	PARSE(&c, &tool_stacker, "-U", "-K", NULL);
	assert_usage_error(&c, "stacker: options -U/--user-stacks-only and -K/--kernel-stacks-only cannot be combined; see 'stacker --help'\n");
	PARSE(&c, &tool_stacker, "--stack-storage-size", "0", NULL);
	assert_usage_error(&c, "stacker: invalid --stack-storage-size value '0': expected an integer from 1 to 16777216; see 'stacker --help'\n");
	PARSE(&c, &tool_stacker, "--perf-max-stack-depth", "5000", NULL);
	assert_int_equal(exit_code(&c), 2);
	assert_non_null(strstr(c.err, "kernel.perf_event_max_stack"));
	PARSE(&c, &tool_stacker, "--bogus", NULL);
	assert_usage_error(&c, "stacker: unknown option '--bogus'; see 'stacker --help'\n");

	PARSE(&c, &tool_stacker, "--help", NULL);
	assert_int_equal(exit_code(&c), 0);
	assert_non_null(strstr(c.out, "-d, --delimited"));
	assert_non_null(strstr(c.out, "    --duration=SEC"));
	assert_non_null(strstr(c.out, "--stack-storage-size=N"));
}

/* ---- CPU lists (profile -C) ---- */

static void test_cpu_list(void **state)
{
	bool set[8];

	(void)state;
	assert_int_equal(tk_parse_cpu_list("0", set, 8), 0);
	assert_true(set[0] && !set[1]);
	assert_int_equal(tk_parse_cpu_list("1,3-5,7", set, 8), 0);
	assert_true(!set[0] && set[1] && !set[2] && set[3] && set[4] &&
		    set[5] && !set[6] && set[7]);
	assert_int_equal(tk_parse_cpu_list("8", set, 8), -EINVAL);
	assert_int_equal(tk_parse_cpu_list("", set, 8), -EINVAL);
	assert_int_equal(tk_parse_cpu_list("3-1", set, 8), -EINVAL);
	assert_int_equal(tk_parse_cpu_list("1,", set, 8), -EINVAL);
	assert_int_equal(tk_parse_cpu_list("1-", set, 8), -EINVAL);
	assert_int_equal(tk_parse_cpu_list("a", set, 8), -EINVAL);
	assert_int_equal(tk_parse_cpu_list("-1", set, 8), -EINVAL);
	assert_int_equal(tk_parse_cpu_list("1 ", set, 8), -EINVAL);
}

static int setup(void **state)
{
	(void)state;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	return sh == MAP_FAILED ? -1 : 0;
}

static int teardown(void **state)
{
	(void)state;
	munmap(sh, sizeof(*sh));
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arg_long_valid),
		cmocka_unit_test(test_arg_long_invalid),
		cmocka_unit_test(test_arg_choice),
		cmocka_unit_test(test_arg_double_valid),
		cmocka_unit_test(test_arg_double_invalid),
		cmocka_unit_test(test_parse_defaults),
		cmocka_unit_test(test_parse_common_short),
		cmocka_unit_test(test_parse_common_long),
		cmocka_unit_test(test_parse_tool_letters),
		cmocka_unit_test(test_parse_clustered_and_attached),
		cmocka_unit_test(test_parse_tool_options),
		cmocka_unit_test(test_parse_own_letters),
		cmocka_unit_test(test_parse_periodic),
		cmocka_unit_test(test_parse_command_split),
		cmocka_unit_test(test_parse_extra_positional),
		cmocka_unit_test(test_parse_unknown_option),
		cmocka_unit_test(test_parse_missing_value),
		cmocka_unit_test(test_parse_bad_values),
		cmocka_unit_test(test_parse_value_for_flag),
		cmocka_unit_test(test_parse_value_for_long_only_flag),
		cmocka_unit_test(test_parse_help),
		cmocka_unit_test(test_parse_bcc_missing),
		cmocka_unit_test(test_parse_id_lists_and_users),
		cmocka_unit_test(test_parse_stack_options),
		cmocka_unit_test(test_cpu_list),
	};

	return cmocka_run_group_tests_name("opts", tests, setup, teardown);
}
