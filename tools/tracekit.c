/* tracekit: the front command. `tracekit list` shows every tool beside it
 * with its purpose and whether it runs on this kernel (each tool's own
 * dry run, as tracekit-doctor makes them); `tracekit TOOL ARGS` runs a
 * tool; `tracekit doctor` runs the doctor. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "closest.h"
#include "json.h"
#include "opts.h"
#include "output.h"
#include "setup.h"
#include "toolset.h"
#include "version.h"

extern char **environ;

/* In argp's layout, as the tools' --help, for tools/man/mkman.py. */
static const char usage[] =
"Usage: tracekit COMMAND [ARG...]\n"
"  or:  tracekit TOOL [ARG...]\n"
"The tracekit tracing tools under one command.\n"
"\n"
" Commands:\n"
"  list [-j] [-v] [--no-check] [--parallel N]\n"
"                             Every tool: whether it runs on this kernel (its\n"
"                             dry run, as tracekit-doctor makes them) and what\n"
"                             it is for; -v: why a tool or a part of it cannot\n"
"                             run; --no-check: the purposes only, without\n"
"                             running the tools; --parallel: dry runs at once\n"
"                             (default 16)\n"
"  doctor [ARG...]            What this kernel and process can do\n"
"                             (tracekit-doctor)\n"
"  help [TOOL]                This text, or the tool's --help\n"
"  TOOL [ARG...]              Run a tool: tracekit execsnoop -T is\n"
"                             execsnoop -T\n"
"  -V, --version              The version of tracekit (every tool has the same)\n"
"  -h, --help                 This text\n"
"\n"
"RUNS in the list: yes, no, or some (the tool runs for part of what it\n"
"can trace, such as funclatency on user functions where kernel functions\n"
"cannot be traced). Exit status: 0, 2 for a usage error or an unknown tool,\n"
"or the tool's own.\n"
"\n"
"Examples:\n"
"  tracekit list              # which tools run here\n"
"  tracekit list -j | jq -r 'select(.runs == \"yes\") | .tool'\n"
"  tracekit execsnoop -T      # run execsnoop\n"
"  tracekit help runqlat      # runqlat --help\n";

static struct tk_toolset tools;

/* An unknown tool: the nearest names of the tools and commands. */
static void __attribute__((noreturn)) unknown_tool(const char *name)
{
	static const char *const commands[] = { "list", "doctor", "help" };
	struct tk_closest c;
	char near[256];
	size_t i;

	tk_toolset_find(&tools);
	tk_closest_init(&c, name);
	for (i = 0; i < tools.n; i++)
		if (!i || strcmp(tools.runs[i].tool, tools.runs[i - 1].tool))
			tk_closest_add(&c, tools.runs[i].tool);
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		tk_closest_add(&c, commands[i]);
	tk_closest_text(&c, near, sizeof(near));
	fprintf(stderr, "tracekit: no tool or command '%s' (tools are in %s)%s; "
		"'tracekit list' shows them\n", name, tools.dir, near);
	exit(2);
}

/* Replace this process with a tool (or the doctor), argv[0] its name. */
static void __attribute__((noreturn)) run_tool(const char *name, char **argv)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];

	if (!strcmp(name, "tracekitd")) {
		fprintf(stderr, "tracekit: tracekitd is the daemon, not a tool: run it as "
			"tracekitd, or under systemd (systemctl start tracekitd)\n");
		exit(2);
	}
	if (!name[0] || name[0] == '.' || strchr(name, '/') ||
	    !strcmp(name, "tracekit") || !strncmp(name, "tracekitd", 9))
		unknown_tool(name);
	tk_toolset_dir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!tk_is_tracekit_tool(path))
		unknown_tool(name);
	argv[0] = (char *)name;
	execv(path, argv);
	fprintf(stderr, "tracekit: cannot run %s: %s\n", path, strerror(errno));
	exit(126);
}

/* The first sentence of a tool's --help text (after its usage lines),
 * its lines joined. */
static void purpose_of(const char *path, char *buf, size_t size)
{
	char *argv[] = { (char *)path, "--help", NULL }, line[512];
	posix_spawn_file_actions_t fa;
	int pfd[2], status;
	bool usage_done = false;
	size_t len = 0;
	char *stop;
	pid_t pid;
	FILE *f;

	snprintf(buf, size, "?");
	if (pipe2(pfd, O_CLOEXEC))
		return;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	if (posix_spawn(&pid, path, &fa, NULL, argv, environ)) {
		posix_spawn_file_actions_destroy(&fa);
		close(pfd[0]);
		close(pfd[1]);
		return;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	f = fdopen(pfd[0], "r");
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "Usage:", 6) || !strncmp(line, "  or:", 5)) {
			usage_done = true;
			continue;
		}
		if (!usage_done)
			continue;
		if (!line[0] || line[0] == ' ')
			break;  /* the paragraph, or the options, begin */
		len += snprintf(buf + len, len < size ? size - len : 0, "%s%s",
				len ? " " : "", line);
		if (len >= size || strstr(buf, ". "))
			break;
	}
	if (f)
		fclose(f);  /* a tool still writing gets SIGPIPE */
	else
		close(pfd[0]);
	waitpid(pid, &status, 0);
	stop = strstr(buf, ". ");
	if (stop)
		stop[1] = 0;
}

struct list_opts {
	bool json, verbose, check;
	long parallel;
};

/* "yes", "no" or "some" over a tool's runs [first, end). */
static const char *runs_here(size_t first, size_t end)
{
	size_t i, ok = 0;

	for (i = first; i < end; i++)
		ok += tools.runs[i].check.ok;
	return ok == end - first ? "yes" : ok ? "some" : "no";
}

/* The variant in "funclatency (user function)", or "" */
static const char *variant_of(const struct tk_tool_run *r)
{
	const char *p = strchr(r->label, '(');

	return p ? p : "";
}

/* A text row's purpose: the sentence up to its first ": " or " (", the
 * rest being detail (-j keeps the whole sentence). */
static void shorten(char *purpose)
{
	char *colon = strstr(purpose, ": "), *paren = strstr(purpose, " (");
	char *cut = !colon ? paren : !paren ? colon : colon < paren ? colon : paren;

	if (cut && cut - purpose >= 16)
		*cut = 0;
}

static void print_tool(size_t first, size_t end, const struct list_opts *o)
{
	const struct tk_tool_run *r = &tools.runs[first];
	char purpose[512];
	size_t i;

	purpose_of(r->path, purpose, sizeof(purpose));
	if (o->json) {
		struct tk_json j;

		tk_json_begin(&j, stdout);
		tk_json_str(&j, "type", "tool");
		tk_json_str(&j, "tool", r->tool);
		tk_json_str(&j, "purpose", purpose);
		if (!o->check) {
			tk_json_null(&j, "runs");
			tk_json_end(&j);
			return;
		}
		tk_json_str(&j, "runs", runs_here(first, end));
		tk_json_arr_open(&j, "checks");
		for (i = first; i < end; i++) {
			const struct tk_tool_check *c = &tools.runs[i].check;
			char summary[512];

			tk_json_obj_open(&j, NULL);
			tk_json_str(&j, "label", tools.runs[i].label);
			tk_json_bool(&j, "ok", c->ok);
			if (c->ok) {
				tk_tool_check_summary(c, summary, sizeof(summary));
				tk_json_str(&j, "how", summary);
			} else {
				tk_json_str(&j, "error", c->error);
			}
			tk_json_obj_close(&j);
		}
		tk_json_arr_close(&j);
		tk_json_end(&j);
		return;
	}
	shorten(purpose);
	if (!o->check) {
		printf("%-16s %s\n", r->tool, purpose);
		return;
	}
	printf("%-16s %-4s  %s\n", r->tool, runs_here(first, end), purpose);
	for (i = first; o->verbose && i < end; i++) {
		const struct tk_tool_check *c = &tools.runs[i].check;
		char summary[512];

		if (c->ok)
			tk_tool_check_summary(c, summary, sizeof(summary));
		printf("%-16s   %-4s  %s%s%s\n", "", c->ok ? "yes" : "no", variant_of(&tools.runs[i]),
		       variant_of(&tools.runs[i])[0] ? " " : "", c->ok ? summary : c->error);
	}
}

/* Called for each finished run in order: a tool is printed once its
 * last run is in. */
static void on_checked(struct tk_tool_run *r, void *arg)
{
	size_t i = r - tools.runs, first = i;

	if (i + 1 < tools.n && !strcmp(tools.runs[i + 1].tool, r->tool))
		return;
	while (first > 0 && !strcmp(tools.runs[first - 1].tool, r->tool))
		first--;
	print_tool(first, i + 1, arg);
	fflush(stdout);
}

static int list(int argc, char **argv)
{
	struct list_opts o = { .check = true, .parallel = 16 };
	size_t i, end, missed = 0;
	int k;

	for (k = 1; k < argc; k++) {
		if (!strcmp(argv[k], "-j") || !strcmp(argv[k], "--json"))
			o.json = true;
		else if (!strcmp(argv[k], "-v") || !strcmp(argv[k], "--verbose"))
			o.verbose = true;
		else if (!strcmp(argv[k], "--no-check"))
			o.check = false;
		else if (!strcmp(argv[k], "--parallel") && k + 1 < argc)
			o.parallel = tk_arg_long("--parallel", argv[++k], 1, 64);
		else if (!strncmp(argv[k], "--parallel=", 11))
			o.parallel = tk_arg_long("--parallel", argv[k] + 11, 1, 64);
		else if (!strcmp(argv[k], "--parallel"))
			tk_usage_error("option '%s' needs a value", argv[k]);
		else
			tk_usage_error("list: unknown option '%s'", argv[k]);
	}
	tk_opts.json = o.json;
	tk_init();
	tk_toolset_find(&tools);
	if (!tools.n)
		tk_fail("no tracekit tools in %s", tools.dir);
	if (!o.json && o.check)
		printf("%-16s %-4s  %s\n", "TOOL", "RUNS", "PURPOSE");
	else if (!o.json)
		printf("%-16s %s\n", "TOOL", "PURPOSE");
	if (!o.check) {
		for (i = 0; i < tools.n; i = end) {
			for (end = i + 1; end < tools.n &&
			     !strcmp(tools.runs[end].tool, tools.runs[i].tool); end++)
				;
			print_tool(i, end, &o);
		}
	} else {
		/* The dry runs' own time limit: as tracekit-doctor's. */
		tk_toolset_check(&tools, o.parallel, 60, on_checked, &o);
	}
	for (i = 0; o.check && i < tools.n; i++)
		missed += !tools.runs[i].done;
	if (fflush(stdout) || ferror(stdout))
		tk_fail("cannot write the list: %s", strerror(errno));
	if (missed)
		tk_fail("interrupted: %zu of %zu tool checks not done", missed, tools.n);
	tk_toolset_free(&tools);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "--help";

	tk_set_tool_name("tracekit");
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") ||
	    (!strcmp(cmd, "help") && argc == 2)) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
		tk_version_print(stdout, "tracekit");
		return 0;
	}
	if (!strcmp(cmd, "list"))
		return list(argc - 1, argv + 1);
	if (!strcmp(cmd, "doctor"))
		run_tool("tracekit-doctor", argv + 1);
	if (!strcmp(cmd, "help")) {
		char *help[] = { argv[2], "--help", NULL };

		if (argc > 3)
			tk_usage_error("help takes one tool; not '%s'", argv[3]);
		run_tool(argv[2], help);
	}
	if (cmd[0] == '-')
		tk_usage_error("unknown option '%s'", cmd);
	run_tool(cmd, argv + 1);
}
