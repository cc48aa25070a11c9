/* bashreadline: print the commands typed into bash. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "bashreadline.h"
#include "bashreadline.skel.h"
#include "functarget.h"
#include "tracekit.h"

static struct {
	const char *shared;          /* -s */
	bool any_comm;               /* --all-programs */
	char binary[PATH_MAX];
	const char *func;            /* the function probed */
} env;

enum { K_ALL_PROGRAMS = 0x2000 };

static const struct argp_option options[] = {
	{ "shared", 's', "LIB", 0, "The library holding readline(), for a bash linked with a shared libreadline (default: /bin/bash's own)", 0 },
	{ "all-programs", K_ALL_PROGRAMS, 0, 0, "Every program calling that readline(), not only those named bash", 0 },
	{ 0 },
};

static const char doc[] =
"Print the commands typed into any running bash: each line readline()\n"
"reads, by a uretprobe on readline_internal_teardown(), which returns it\n"
"(in /bin/bash, or -s LIB; readline() itself where there is none).\n"
"\v"
"bcc's columns: TIME, PID, COMMAND. Only tasks named bash, as bcc; an\n"
"empty line (Enter alone) is shown empty. A line is read up to 255 bytes\n"
"(JSON \"truncated\": true beyond). End of input (Ctrl-D: readline returns\n"
"NULL) is shown in JSON only, as \"line\": null. Shells that started\n"
"before the tool are seen too, from the first line typed after it\n"
"started (bcc probes readline()'s return, and misses that first line of\n"
"a shell already waiting at its prompt).\n"
"\n"
"Examples:\n"
"  bashreadline           # every bash's commands\n"
"  bashreadline -p 181    # only PID 181\n"
"  bashreadline -j -u alice   # NDJSON, one user's shells\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 's': env.shared = arg; break;
	case K_ALL_PROGRAMS: env.any_comm = true; break;
	default: return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "bashreadline",
	.doc = doc,
	.options = options,
	.parser = parse,
};

static void resolve(void)
{
	char err[PATH_MAX + 256];
	const char *obj = env.shared ? env.shared : "/bin/bash";

	if (tk_func_object_resolve(obj, 0, env.binary, sizeof(env.binary), err, sizeof(err)) < 0)
		tk_usage_error("invalid %s value '%s': %s", env.shared ? "--shared" : "bash", obj, err);
	/* readline() of a bash already waiting at its prompt was entered
	 * before the probe: its return would be missed, and the first line
	 * typed with it. readline_internal_teardown(), which readline 6 and
	 * later call once the line is in and which return it, is entered
	 * after; readline() where there is none. */
	env.func = "readline_internal_teardown";
	if (!tk_elf_func_check(env.binary, env.func, err, sizeof(err)))
		return;
	env.func = "readline";
	if (tk_elf_func_check(env.binary, env.func, err, sizeof(err)))
		tk_usage_error("invalid %s value '%s': %s", env.shared ? "--shared" : "bash", obj, err);
	tk_info("%s has no readline_internal_teardown: probing readline(), whose return in a "
		"shell already at its prompt is not seen", env.binary);
}

static bool has_line(const struct readline_event *e)
{
	return e->len > 0;
}

static size_t line_len(const struct readline_event *e)
{
	return strnlen(e->line, sizeof(e->line));
}

static void print_json(const struct readline_event *e)
{
	struct tk_json j;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "readline");
	tk_json_time(&j);
	tk_json_task(&j, e->pid, e->tid, e->uid, e->comm, sizeof(e->comm), e->cgroup_id);
	if (has_line(e))
		tk_json_strn(&j, "line", e->line, line_len(e));
	else
		tk_json_null(&j, "line");
	tk_json_bool(&j, "truncated", e->len == BASHREADLINE_MAX);
	tk_json_end(&j);
}

/* bcc: "%-9s %-7d %s" */
static void print_text(const struct readline_event *e)
{
	char buf[16];

	if (e->len == -1)
		return;  /* end of input */
	/* TIME is already the wall clock: --time adds nothing here. */
	printf("%-9s %-7d ", tk_time_str(buf, sizeof(buf)), e->pid);
	if (tk_opts.filter.cgroup_ids)
		tk_print_cgroup(stdout, e->cgroup_id, TK_CGROUP_WIDTH);
	if (has_line(e))
		tk_print_safe(stdout, e->line, line_len(e));
	else
		putchar('?');   /* could not be read */
	putchar('\n');
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	const struct readline_event *e = data;

	(void)ctx;
	if (size < sizeof(*e))
		return 0;  /* malformed */
	if (tk_opts.json)
		print_json(e);
	else
		print_text(e);
	return 0;
}

static int configure(void *s, void *ctx)
{
	struct bashreadline_bpf *skel = s;

	(void)ctx;
	skel->rodata->any_comm = env.any_comm;
	return 0;
}

TK_SKEL_OPS(bashreadline_bpf);

int main(int argc, char **argv)
{
	struct bashreadline_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	resolve();
	tk_set_target("line", env.binary, env.func, tk_filter_attach_pid());
	skel = tk_load(&bashreadline_bpf_ops, configure, NULL);
	tk_events_open(skel->obj, handle_event, NULL);
	if (!tk_opts.json) {
		printf("%-9s %-7s ", "TIME", "PID");
		if (tk_opts.filter.cgroup_ids)
			printf("%-*s ", TK_CGROUP_WIDTH, TK_CGROUP_HEADER);
		printf("COMMAND\n");
	}
	tk_ready();
	tk_events_loop();
	tk_losses_report(skel->obj);
	bashreadline_bpf__destroy(skel);
	return tk_exit_status();
}
