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
#include "tracekit.h"

/* Tools that need an argument to run: one dry run per entry, reported
 * under its label. Every other tool runs as `TOOL --dry-run`. */
static const struct {
	const char *tool, *label;
	const char *args[3];
} tool_args[] = {
	{ "funclatency", "funclatency (kernel function)", { "vfs_read" } },
	{ "funclatency", "funclatency (user function)", { "c:getpid" } },
	{ "stackcount", "stackcount (tracepoint)", { "t:sched:sched_switch" } },
	{ "stackcount", "stackcount (kernel function)", { "vfs_read" } },
	{ "stackcount", "stackcount (user function)", { "c:getpid" } },
	{ "funccount", "funccount (tracepoint)", { "t:sched:sched_switch" } },
	{ "funccount", "funccount (kernel function)", { "vfs_read" } },
	{ "funccount", "funccount (user function)", { "c:getpid" } },
	{ "trace", "trace (tracepoint)", { "t:sched:sched_switch" } },
	{ "trace", "trace (kernel function)", { "k:vfs_read" } },
	{ "trace", "trace (user function)", { "u:c:getpid" } },
	{ "argdist", "argdist (tracepoint)", { "-C", "t:sched:sched_switch" } },
	{ "argdist", "argdist (kernel function)", { "-C", "k:vfs_read" } },
	{ "argdist", "argdist (user function)", { "-C", "u:c:getpid" } },
	/* the others by name: ext4slower, xfsdist, ... */
	{ "fsslower", "fsslower (-t ext4)", { "-t", "ext4" } },
	{ "fsdist", "fsdist (-t ext4)", { "-t", "ext4" } },
};
#define N_TOOL_ARGS (sizeof(tool_args) / sizeof(tool_args[0]))

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

struct tool_run {
	char label[64];
	char path[PATH_MAX];
	const char *const *args;
	struct tk_tool_check check;
	bool done;      /* its check finished, not cut short by a signal */
	bool finished;  /* its worker is through with it */
};

static struct tk_feature feats[TK_FEAT_COUNT];
static struct tool_run *runs;
static size_t n_runs;
static char tool_dir[PATH_MAX];
static int width = 20;  /* of the name column */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_run(const char *label, const char *path,
		    const char *const *args)
{
	struct tool_run *r = realloc(runs, (n_runs + 1) * sizeof(*r));

	if (!r)
		tk_fail("out of memory");
	runs = r;
	r += n_runs++;
	memset(r, 0, sizeof(*r));
	snprintf(r->label, sizeof(r->label), "%s", label);
	snprintf(r->path, sizeof(r->path), "%s", path);
	r->args = args;
	if ((int)strlen(label) > width)
		width = strlen(label);
}

/* The tracekit tools in this program's directory, by name. */
static void find_tools(void)
{
	char self[PATH_MAX], path[PATH_MAX], **names = NULL;
	const char *me;
	size_t n = 0, i, k;
	struct dirent *d;
	ssize_t len;
	DIR *dir;

	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len < 0)
		tk_fail("cannot find my own directory (/proc/self/exe: %s)", strerror(errno));
	self[len] = 0;
	me = strrchr(self, '/') + 1;
	snprintf(tool_dir, sizeof(tool_dir), "%.*s", (int)(me - self - 1), self);
	if (!tool_dir[0])
		strcpy(tool_dir, "/");
	dir = opendir(tool_dir);
	if (!dir)
		tk_fail("cannot list %s: %s", tool_dir, strerror(errno));
	while ((d = readdir(dir))) {
		char **nn;

		if (d->d_name[0] == '.' || !strcmp(d->d_name, me) ||
		    !strncmp(d->d_name, "tracekitd", 9))
			continue;
		snprintf(path, sizeof(path), "%s/%s", tool_dir, d->d_name);
		if (!tk_is_tracekit_tool(path)) {
			if (access(path, X_OK) == 0)
				tk_info("skipping %s: not a tracekit tool", path);
			continue;
		}
		nn = realloc(names, (n + 1) * sizeof(*names));
		if (!nn || !(nn[n] = strdup(d->d_name)))
			tk_fail("out of memory");
		names = nn;
		n++;
	}
	closedir(dir);
	qsort(names, n, sizeof(*names), cmp_str);
	for (i = 0; i < n; i++) {
		bool special = false;

		snprintf(path, sizeof(path), "%s/%s", tool_dir, names[i]);
		for (k = 0; k < N_TOOL_ARGS; k++)
			if (!strcmp(tool_args[k].tool, names[i])) {
				add_run(tool_args[k].label, path, tool_args[k].args);
				special = true;
			}
		if (!special)
			add_run(names[i], path, NULL);
		free(names[i]);
	}
	free(names);
}

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

/* "tp (4 probes), raw_tp (1 probe); transport ringbuf" */
static void summarize(const struct tk_tool_check *c, char *buf, size_t size)
{
	size_t len = 0;
	int i, j;

	buf[0] = 0;
	for (i = 0; i < c->n_probes; i++) {
		int count = 0;

		for (j = 0; j < i; j++)
			if (!strcmp(c->probes[j].method, c->probes[i].method))
				break;
		if (j < i)
			continue;  /* counted already */
		for (j = i; j < c->n_probes; j++)
			count += !strcmp(c->probes[j].method, c->probes[i].method);
		len += snprintf(buf + len, len < size ? size - len : 0, "%s%s (%d probe%s)",
				len ? ", " : "", c->probes[i].method, count,
				count == 1 ? "" : "s");
	}
	if (!c->n_probes)
		len += snprintf(buf + len, len < size ? size - len : 0, "no probes");
	if (c->transport[0])
		snprintf(buf + len, len < size ? size - len : 0, "; transport %s",
			 c->transport);
}

static void print_tool_text(const struct tool_run *r)
{
	char summary[512];
	int i;

	if (!r->check.ok) {
		row(r->label, "no", r->check.error);
		return;
	}
	summarize(&r->check, summary, sizeof(summary));
	row(r->label, "yes", summary);
	for (i = 0; tk_opts.verbose && i < r->check.n_probes; i++)
		printf("  %-*s       %s %s %s\n", width, "", r->check.probes[i].probe,
		       r->check.probes[i].method, r->check.probes[i].target);
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
	for (i = 0; i < n_runs; i++) {
		const struct tk_tool_check *c = &runs[i].check;

		if (!runs[i].done)
			continue;
		tk_json_obj_open(&j, runs[i].label);
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

/* The dry runs, env.parallel at once: workers take the next run in
 * order; the caller prints each (text) as soon as it and every run before
 * it are finished. */
static pthread_mutex_t runs_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t run_finished = PTHREAD_COND_INITIALIZER;
static size_t next_run;
static int workers_left;

static void *dry_run_worker(void *unused)
{
	(void)unused;
	for (;;) {
		size_t i;
		int err;

		pthread_mutex_lock(&runs_lock);
		i = !tk_exiting() && next_run < n_runs ? next_run++ : n_runs;
		if (i == n_runs) {
			workers_left--;
			pthread_cond_broadcast(&run_finished);
		}
		pthread_mutex_unlock(&runs_lock);
		if (i == n_runs)
			return NULL;
		tk_info("running %s --dry-run%s%s", runs[i].path,
			runs[i].args ? " " : "", runs[i].args ? runs[i].args[0] : "");
		err = tk_tool_check_run(runs[i].path, runs[i].args, env.timeout,
					&runs[i].check);
		if (err)
			snprintf(runs[i].check.error, sizeof(runs[i].check.error),
				 "%s: cannot run it: %s", runs[i].label, strerror(-err));
		pthread_mutex_lock(&runs_lock);
		runs[i].done = !tk_exiting();
		runs[i].finished = true;
		pthread_cond_broadcast(&run_finished);
		pthread_mutex_unlock(&runs_lock);
	}
}

static void run_tools(void)
{
	pthread_t tids[64];
	int n = env.parallel < (long)n_runs ? (int)env.parallel : (int)n_runs, k, err;

	workers_left = n;
	for (k = 0; k < n; k++)
		if ((err = pthread_create(&tids[k], NULL, dry_run_worker, NULL)))
			tk_fail("cannot start a thread: %s", strerror(err));
	for (size_t i = 0; i < n_runs; i++) {
		pthread_mutex_lock(&runs_lock);
		while (!runs[i].finished && workers_left)
			pthread_cond_wait(&run_finished, &runs_lock);
		pthread_mutex_unlock(&runs_lock);
		if (runs[i].done && !tk_opts.json) {
			print_tool_text(&runs[i]);
			fflush(stdout);
		}
	}
	for (k = 0; k < n; k++)
		pthread_join(tids[k], NULL);
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
		find_tools();
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
			printf("\nTools (in %s)\n", tool_dir);
		if (!env.no_tools && !n_runs)
			printf("  (no tracekit tools there)\n");
		fflush(stdout);
	}
	run_tools();
	if (tk_opts.json)
		print_json(u.release);
	if (fflush(stdout) || ferror(stdout))
		tk_fail("cannot write the report: %s", strerror(errno));
	for (i = 0, f = 0; i < n_runs; i++) {
		f += !runs[i].done;
		tk_tool_check_free(&runs[i].check);
	}
	if (f)
		tk_fail("interrupted: %d of %zu tool checks not done", f, n_runs);
	free(runs);
	return 0;
}
