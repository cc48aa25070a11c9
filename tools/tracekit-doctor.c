/* tracekit-doctor: what this kernel and this process can do for tracing,
 * and for each tracekit tool next to it, whether it runs here and how. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "tk_features.h"
#include "toolset.h"
#include "tracekit.h"

enum { K_TIMEOUT = 0x2000, K_NO_TOOLS, K_PARALLEL };

static struct {
	double timeout;
	bool no_tools;
	long parallel;
} env = { .timeout = 60, .parallel = 8 };

static const struct argp_option options[] = {
	{ "timeout", K_TIMEOUT, "SEC", 0,
	  "Time limit of each tool's dry run (default 60)", 0 },
	{ "no-tools", K_NO_TOOLS, 0, 0,
	  "Probe the kernel and this process only; run no tool", 0 },
	{ "parallel", K_PARALLEL, "N", 0,
	  "Dry runs at once (default 8; 1: one after another)", 0 },
	{ 0 },
};

static const char doc[] =
"Report what this kernel and this process can do for tracing, and whether\n"
"each tracekit tool runs here and by which attach method.\n"
"\v"
"Every feature is probed by trying it (loading and attaching a trivial BPF\n"
"program, creating a map), never by kernel version; the kernel's build\n"
"configuration, when found, only sharpens the explanations. Nothing is left\n"
"changed: tracefs and securityfs are mounted, when needed, in a private\n"
"mount namespace of a short-lived child.\n"
"\n"
"The tools are the tracekit programs in this program's directory (except\n"
"tracekitd), each run as `TOOL --dry-run` with a time limit, eight at a\n"
"time (--parallel): a dry run spends most of its time waiting for the\n"
"kernel to take its probes down as it exits. They are reported in order\n"
"of name. A tool that cannot run is reported with its own error line.\n"
"Exit status 0 whenever the report was made, whatever it says.\n"
"\n"
"Examples:\n"
"  tracekit-doctor              # report as text\n"
"  tracekit-doctor -v           # also each probe of each tool\n"
"  tracekit-doctor -j | jq .features.fentry\n"
"  tracekit-doctor --no-tools   # kernel and process only\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case K_TIMEOUT:
		env.timeout = tk_arg_double("--timeout", arg, 0.1, 86400);
		break;
	case K_NO_TOOLS:
		env.no_tools = true;
		break;
	case K_PARALLEL:
		env.parallel = tk_arg_long("--parallel", arg, 1, 64);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "tracekit-doctor",
	.doc = doc,
	.options = options,
	.parser = parse,
};

static struct tk_feature feats[TK_FEAT_COUNT];
static struct tk_toolset tools;
static int width = 20;  /* of the name column */

/* ---- text ---- */

static void row(const char *name, const char *status, const char *detail)
{
	printf("  %-*s  %-3s  %s\n", width, name, status, detail);
}

static void print_group(enum tk_feature_group g)
{
	int i;

	for (i = 0; i < TK_FEAT_COUNT; i++)
		if (tk_feature_group(i) == g)
			row(tk_feature_name(i), feats[i].ok ? "yes" : "no",
			    feats[i].detail);
}

static void print_tool_text(struct tk_tool_run *r, void *arg)
{
	char summary[512];
	int i;

	(void)arg;
	if (!r->check.ok) {
		row(r->label, "no", r->check.error);
		fflush(stdout);
		return;
	}
	tk_tool_check_summary(&r->check, summary, sizeof(summary));
	row(r->label, "yes", summary);
	for (i = 0; tk_opts.verbose && i < r->check.n_probes; i++)
		printf("  %-*s       %s %s %s\n", width, "", r->check.probes[i].probe,
		       r->check.probes[i].method, r->check.probes[i].target);
	fflush(stdout);
}

/* ---- JSON: one line ---- */

static void print_json(const char *release)
{
	struct tk_json j;
	size_t i;
	int f, p;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "doctor");
	tk_json_str(&j, "kernel", release);
	tk_json_obj_open(&j, "features");
	for (f = 0; f < TK_FEAT_COUNT; f++) {
		tk_json_obj_open(&j, tk_feature_name(f));
		tk_json_bool(&j, "ok", feats[f].ok);
		tk_json_str(&j, "detail", feats[f].detail);
		if (f == TK_FEAT_LOCKDOWN && feats[f].mode[0])
			tk_json_str(&j, "mode", feats[f].mode);
		else if (f == TK_FEAT_LOCKDOWN)
			tk_json_null(&j, "mode");
		if (feats[f].value_kind == TK_VALUE_INT)
			tk_json_int(&j, "value", feats[f].value);
		else if (feats[f].value_kind == TK_VALUE_NULL)
			tk_json_null(&j, "value");
		tk_json_obj_close(&j);
	}
	tk_json_obj_close(&j);
	tk_json_obj_open(&j, "tools");
	for (i = 0; i < tools.n; i++) {
		const struct tk_tool_check *c = &tools.runs[i].check;

		if (!tools.runs[i].done)
			continue;
		tk_json_obj_open(&j, tools.runs[i].label);
		tk_json_bool(&j, "ok", c->ok);
		if (!c->ok) {
			tk_json_str(&j, "error", c->error);
			tk_json_obj_close(&j);
			continue;
		}
		tk_json_arr_open(&j, "probes");
		for (p = 0; p < c->n_probes; p++) {
			tk_json_obj_open(&j, NULL);
			tk_json_str(&j, "probe", c->probes[p].probe);
			tk_json_str(&j, "method", c->probes[p].method);
			tk_json_str(&j, "target", c->probes[p].target);
			tk_json_obj_close(&j);
		}
		tk_json_arr_close(&j);
		if (c->transport[0])
			tk_json_str(&j, "transport", c->transport);
		else
			tk_json_null(&j, "transport");
		tk_json_obj_close(&j);
	}
	tk_json_obj_close(&j);
	tk_json_end(&j);
}

int main(int argc, char **argv)
{
	struct utsname u;
	size_t i;
	int f;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	if (uname(&u))
		tk_fail("uname: %s", strerror(errno));
	if (!env.no_tools)
		tk_toolset_find(&tools);
	for (i = 0; i < tools.n; i++)
		if ((int)strlen(tools.runs[i].label) > width)
			width = strlen(tools.runs[i].label);
	for (f = 0; f < TK_FEAT_COUNT; f++) {
		if ((int)strlen(tk_feature_name(f)) > width)
			width = strlen(tk_feature_name(f));
		tk_feature_probe(f, &feats[f]);
	}

	if (!tk_opts.json) {
		printf("Kernel %s %s (configuration: %s)\n", u.release, u.machine,
		       tk_kconfig_source() ? tk_kconfig_source() : "not found");
		print_group(TK_FGROUP_KERNEL);
		printf("\nFeatures\n");
		print_group(TK_FGROUP_ATTACH);
		printf("\nProcess (pid %d, uid %d)\n", (int)getpid(), (int)geteuid());
		print_group(TK_FGROUP_PROCESS);
		if (!env.no_tools)
			printf("\nTools (in %s)\n", tools.dir);
		if (!env.no_tools && !tools.n)
			printf("  (no tracekit tools there)\n");
		fflush(stdout);
	}
	tk_toolset_check(&tools, env.parallel, env.timeout,
			 tk_opts.json ? NULL : print_tool_text, NULL);
	if (tk_opts.json)
		print_json(u.release);
	if (fflush(stdout) || ferror(stdout))
		tk_fail("cannot write the report: %s", strerror(errno));
	for (i = 0, f = 0; i < tools.n; i++)
		f += !tools.runs[i].done;
	if (f)
		tk_fail("interrupted: %d of %zu tool checks not done", f, tools.n);
	tk_toolset_free(&tools);
	return 0;
}
