#include "opts.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cgroups.h"
#include "command.h"
#include "filter.h"
#include "signames.h"
#include "output.h"
#include "pidns.h"
#include "setup.h"
#include "version.h"

struct tk_opts tk_opts = { .filter = { .uid = -1 }, .saved_stdout = -1 };

enum {  /* internal keys of the common options */
	K_PID = 0x1000, K_TID, K_UID, K_CGROUP, K_NAME, K_TIME, K_JSON,
	K_DURATION, K_VERBOSE, K_BTF, K_BUFFER, K_HELP, K_DRY_RUN, K_PPID,
	K_ALL, K_RUN_AS, K_OUTPUT, K_UNIT, K_PRINT_CGROUP,
};

/* Short letter each common option has unless the tool claims it. */
static const struct { int key; int letter; } default_letters[] = {
	{ K_PID, 'p' }, { K_UID, 'u' }, { K_CGROUP, 'c' }, { K_NAME, 'n' },
	{ K_TIME, 'T' }, { K_JSON, 'j' }, { K_DURATION, 'd' },
	{ K_VERBOSE, 'v' }, { K_HELP, 'h' }, { K_ALL, 'a' }, { K_OUTPUT, 'o' },
};

static struct argp_option common_options[] = {
	{ "pid", K_PID, "PID", 0,
	  "Only this process, or these (1,2,3)", 1 },
	{ "tid", K_TID, "TID", 0, "Only this thread, or these (1,2,3)", 1 },
	{ "ppid", K_PPID, "PID", 0,
	  "Only children of this process (whose parent is PID)", 1 },
	{ "uid", K_UID, "USER", 0, "Only this user (a name or a UID)", 1 },
	{ "cgroup", K_CGROUP, "PATH", 0, "Only tasks in this cgroup v2 path", 1 },
	{ "print-cgroup", K_PRINT_CGROUP, 0, 0,
	  "Show each task's cgroup v2 path (/system.slice/nginx.service): a CGROUP column, \"cgroup\" in JSON", 1 },
	{ "unit", K_UNIT, "NAME", 0,
	  "Only tasks of this systemd unit (nginx.service, foo.scope; no suffix: .service)", 1 },
	{ "name", K_NAME, "COMM", 0, "Only tasks whose comm contains COMM", 1 },
	{ "time", K_TIME, 0, 0, "Print a wall-clock time column", 1 },
	{ "json", K_JSON, 0, 0, "NDJSON output: one object per line", 1 },
	{ "duration", K_DURATION, "SEC", 0, "Stop after SEC seconds", 1 },
	{ "verbose", K_VERBOSE, 0, 0,
	  "The attach methods chosen, fallbacks, libbpf warnings and the verifier's log; twice (-vv): libbpf's debug messages too", 1 },
	{ "dry-run", K_DRY_RUN, 0, 0,
	  "Load and attach, print each probe's attach method, and exit", 1 },
	{ "btf", K_BTF, "FILE",  0,
	  "Kernel BTF for kernels without /sys/kernel/btf/vmlinux", 1 },
	{ "output", K_OUTPUT, "FILE", 0,
	  "Write the output to FILE, not stdout (a traced COMMAND keeps stdout)", 1 },
	{ "-- COMMAND [ARG...]", 0, 0, OPTION_DOC | OPTION_NO_USAGE,
	  "Run COMMAND once every probe is attached and trace only it and its descendants (children, daemons, threads, later execs: it runs in a transient cgroup v2 child of the tool's own cgroup, which the task filter follows; where cgroup v2 cannot be written, its forks are followed in BPF instead; -v says which); end when COMMAND exits, with its exit status (128+N for signal N). SIGINT or SIGTERM sent to the tool goes to COMMAND too. Descendants that outlive COMMAND keep running, untraced", 1 },
	{ "PIDs", 0, 0, OPTION_DOC | OPTION_NO_USAGE,
	  "In a PID namespace (a container, unshare --pid --mount-proc) PIDs shown and taken (-p, --tid, --ppid) are that namespace's; a task outside it has none there and shows as PID 0", 1 },
	{ "all", K_ALL, 0, 0,
	  "With -- COMMAND: trace every process while COMMAND runs", 1 },
	{ "run-as", K_RUN_AS, "USER", 0,
	  "With -- COMMAND: run it as USER (a name or a UID) with USER's groups; default: as the tool's user, without the tool's capabilities unless that user is root", 1 },
	{ "buffer-kb", K_BUFFER, "KB", 0,
	  "Event buffer size in KiB (ring buffer total, or perf buffer per CPU)", 1 },
	/* -h as bcc users type it; argp itself knows only -? and --help. */
	{ 0, K_HELP, 0, OPTION_HIDDEN, "Give this help list", 1 },
	{ 0 },
};

/* bcc options of many tools that tracekit has not (see struct
 * tk_bcc_missing). */
static const struct tk_bcc_missing common_missing[] = {
	{ "--cgroupmap", "filter by cgroup directory with --cgroup PATH (cgroup v2)" },
	{ "--mntnsmap", "there is no mount-namespace map; filter with --cgroup PATH or -p PID" },
	{ "--ebpf", "the BPF programs are compiled ahead of time (bpf/*.bpf.c in the source); --dry-run -v shows how each attaches" },
	{ "--exec", "use -- COMMAND [ARG...]: the tool runs COMMAND and traces it and its descendants from its execve" },
	{ 0 },
};

static const struct tk_tool *the_tool;
static int positional;

/* The tool's letters for common options (tk_tool.letters), with the
 * internal key each one stands for. */
static struct { int letter; int key; } tool_letters[8];

void tk_usage_error(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", tk_tool_name());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "; see '%s --help'\n", tk_tool_name());
	exit(2);
}

long tk_arg_long(const char *option, const char *arg, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < min || v > max) {
		if (max == LONG_MAX)
			tk_usage_error("invalid %s value '%s': expected an integer >= %ld",
				       option, arg, min);
		tk_usage_error("invalid %s value '%s': expected an integer from %ld to %ld",
			       option, arg, min, max);
	}
	return v;
}

void tk_arg_signals(const char *option, const char *arg, unsigned long long mask[2])
{
	const char *bad;

	if (tk_signal_list_parse(arg, mask, &bad))
		tk_usage_error("invalid %s value '%.*s': expected signals, numbers 0-%d or names "
			       "(9,TERM,SIGUSR1)", option, (int)strcspn(bad, ","), bad, TK_SIG_MAX);
}

double tk_arg_double(const char *option, const char *arg, double min,
		     double max)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(v) || v < min || v > max)
		tk_usage_error("invalid %s value '%s': expected a number from %g to %g",
			       option, arg, min, max);
	return v;
}

static bool duration_given;

bool tk_arg_duration(const char *arg)
{
	if (!arg)
		return duration_given;
	if (duration_given)
		tk_usage_error("unexpected argument '%s' after [duration]", arg);
	tk_opts.duration = tk_arg_double("duration", arg, 0.001, 1e9);
	return duration_given = true;
}

void tk_arg_list(const char *option, const char *arg, const char *expect,
		 void (*each)(const char *item, void *ctx), void *ctx)
{
	char *copy, *tok, *save = NULL;

	/* strtok would skip empty items: "1,,2" and ",1" must not pass. */
	if (!*arg || *arg == ',' || arg[strlen(arg) - 1] == ',' || strstr(arg, ",,"))
		tk_usage_error("invalid %s value '%s': expected %s", option, arg, expect);
	copy = strdup(arg);
	if (!copy)
		exit(1);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		each(tok, ctx);
	free(copy);
}

int tk_arg_choice(const char *option, const char *arg, const char *const *names,
		  int n)
{
	char expect[256] = "";
	size_t len = 0;
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(arg, names[i]))
			return i;
	for (i = 0; i < n && len < sizeof(expect); i++)
		len += snprintf(expect + len, sizeof(expect) - len, "%s%s",
				!i ? "" : i == n - 1 ? " or " : ", ", names[i]);
	tk_usage_error("invalid %s value '%s': expected %s", option, arg, expect);
}

int tk_arg_user(const char *option, const char *arg)
{
	struct passwd *pw;

	if (isdigit((unsigned char)*arg) || *arg == '-' || *arg == '+')
		return tk_arg_long(option, arg, 0, INT_MAX - 1);
	errno = 0;
	pw = *arg ? getpwnam(arg) : NULL;
	if (!pw)
		tk_usage_error("invalid %s value '%s': no such user (a user name or a numeric UID)",
			       option, arg);
	if (pw->pw_uid > INT_MAX - 1)
		tk_usage_error("invalid %s value '%s': UID %u is out of range",
			       option, arg, (unsigned)pw->pw_uid);
	return pw->pw_uid;
}

static error_t parse_common(int key, char *arg, struct argp_state *state)
{
	size_t i;

	/* A letter the tool left to us arrives as the letter itself. */
	for (i = 0; i < sizeof(tool_letters) / sizeof(tool_letters[0]); i++)
		if (tool_letters[i].letter && key == tool_letters[i].letter) {
			key = tool_letters[i].key;
			break;
		}
	for (i = 0; i < sizeof(default_letters) / sizeof(default_letters[0]); i++)
		if (key == default_letters[i].letter)
			key = default_letters[i].key;

	switch (key) {
	case K_PID:
		tk_filter_set_ids('p', "--pid", arg);
		break;
	case K_TID:
		tk_filter_set_ids('t', "--tid", arg);
		break;
	case K_PPID:
		/* A path: someone used to -c as the cgroup letter (syscount's
		 * -c is bcc's --ppid). */
		if (*arg == '/')
			tk_usage_error("invalid --ppid value '%s': expected a process ID (the cgroup filter is --cgroup PATH)",
				       arg);
		tk_opts.filter.ppid = tk_arg_long("--ppid", arg, 1, INT_MAX);
		break;
	case K_UID:
		tk_opts.filter.uid = tk_arg_user("--uid", arg);
		break;
	case K_CGROUP: {
		struct stat st;

		if (stat(arg, &st) || !S_ISDIR(st.st_mode))
			tk_usage_error("invalid --cgroup value '%s': not a cgroup directory (e.g. /sys/fs/cgroup/system.slice)",
				       arg);
		tk_opts.cgroup_path = arg;
		tk_opts.filter.use_cgroup = 1;
		break;
	}
	case K_NAME:
		if (!*arg || strlen(arg) >= sizeof(tk_opts.filter.comm))
			tk_usage_error("invalid --name value '%s': expected 1 to %zu characters (comm is at most 15)",
				       arg, sizeof(tk_opts.filter.comm) - 1);
		strcpy(tk_opts.filter.comm, arg);
		break;
	case K_TIME:
		tk_opts.time = true;
		break;
	case K_JSON:
		tk_opts.json = true;
		break;
	case K_DURATION:
		tk_opts.duration = tk_arg_double("--duration", arg, 0.001, 1e9);
		break;
	case K_VERBOSE:
		tk_opts.verbose++;
		break;
	case K_DRY_RUN:
		tk_opts.dry_run = true;
		break;
	case K_BTF: {
		struct stat st;

		if (stat(arg, &st) || !S_ISREG(st.st_mode))
			tk_usage_error("invalid --btf value '%s': no such file", arg);
		tk_opts.btf_path = arg;
		break;
	}
	case K_ALL:
		tk_opts.all = true;
		break;
	case K_RUN_AS: {
		struct passwd *pw = getpwuid(tk_arg_user("--run-as", arg));

		if (!pw)
			tk_usage_error("invalid --run-as value '%s': the user has no password database entry (needed for its groups)",
				       arg);
		tk_opts.run_as_name = strdup(pw->pw_name);
		tk_opts.run_as_uid = pw->pw_uid;
		tk_opts.run_as_gid = pw->pw_gid;
		break;
	}
	case K_OUTPUT:
		if (!*arg)
			tk_usage_error("invalid --output value '': expected a file name");
		tk_opts.output = arg;
		break;
	case K_PRINT_CGROUP:
		tk_opts.filter.cgroup_ids = 1;
		break;
	case K_UNIT:
		if (!*arg || strchr(arg, '/'))
			tk_usage_error("invalid --unit value '%s': expected a unit name (nginx.service)",
				       arg);
		tk_opts.unit = arg;
		break;
	case K_HELP:
		argp_state_help(state, stdout, ARGP_HELP_STD_HELP);
		break;
	case K_BUFFER:
		tk_opts.buffer_kb = tk_arg_long("--buffer-kb", arg, 4, 1 << 20);
		break;
	case ARGP_KEY_ARG:
		if (!the_tool->periodic)
			tk_usage_error("unexpected argument '%s'", arg);
		if (positional == 0)
			tk_opts.interval = tk_arg_long("interval", arg, 1, INT_MAX);
		else if (positional == 1)
			tk_opts.count = tk_arg_long("count", arg, 1, LONG_MAX);
		else
			tk_usage_error("unexpected argument '%s' after [interval [count]]", arg);
		positional++;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static size_t count_options(const struct argp_option *o)
{
	size_t n = 0;

	while (o && (o[n].name || o[n].key || o[n].doc))
		n++;
	return n;
}

static const char *missing_in(const struct tk_bcc_missing *m, const char *bad,
			      int letter)
{
	size_t len = strcspn(bad, "=");

	for (; m && m->option; m++) {
		if (letter ? (m->option[0] == '-' && m->option[1] == letter &&
			      !m->option[2])
			   : (strlen(m->option) == len &&
			      !strncmp(m->option, bad, len)))
			return m->option;
	}
	return NULL;
}

/* A bcc option the tool has not: say what to use instead (exit 2). */
static void check_bcc_missing(const char *bad, int letter)
{
	const struct tk_bcc_missing *lists[] = { the_tool->bcc_missing, common_missing };
	size_t i;

	for (i = 0; i < 2; i++) {
		const char *name = missing_in(lists[i], bad, letter);
		const struct tk_bcc_missing *m = lists[i];

		if (!name)
			continue;
		while (m->option != name)
			m++;
		tk_usage_error("bcc's option '%s' is not in tracekit: %s",
			       name, m->instead);
	}
}

/* Catch unknown options and missing arguments before argp does, so the
 * error is one line in our format rather than argp's two. */
/* Does the long option NAME (without "--", maybe abbreviated, as
 * getopt takes it) need a value in the next word? */
static bool long_needs_value(const struct option *lo, const char *name)
{
	size_t len = strcspn(name, "=");

	if (name[len] == '=')
		return false;
	for (; lo->name; lo++)
		if (!strncmp(lo->name, name, len) && lo->has_arg == required_argument)
			return true;
	return false;
}

/* The index of the "--" that starts COMMAND (argc when there is none):
 * the first "--" that is not an option's value ("-n --" names a comm). */
static int command_start(const struct option *lo, const char *shorts,
			 int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--"))
			return i;
		if (!strncmp(a, "--", 2)) {
			if (long_needs_value(lo, a + 2))
				i++;
		} else if (a[0] == '-') {
			for (a++; *a; a++) {
				const char *o = strchr(shorts + 1, *a);

				if (o && *a != ':' && o[1] == ':' && o[2] != ':') {
					if (!a[1])
						i++;
					break;
				}
			}
		}
	}
	return argc;
}

/* Returns where COMMAND's "--" is (argc when there is none). */
static int precheck(const struct argp_option *tool_opts,
		    const struct argp_option *extra_opts, int argc, char **argv)
{
	size_t nt = count_options(tool_opts), nc = count_options(common_options);
	size_t ne = count_options(extra_opts);
	struct option *lo = calloc(nt + nc + ne + 4, sizeof(*lo));
	char shorts[256] = ":";
	size_t n = 0, i, k;
	int c;

	if (!lo)
		exit(1);
	for (k = 0; k < 3; k++) {
		const struct argp_option *o = k == 0 ? tool_opts :
					      k == 1 ? extra_opts : common_options;
		size_t cnt = k == 0 ? nt : k == 1 ? ne : nc;

		for (i = 0; i < cnt; i++) {
			int has = o[i].arg ? ((o[i].flags & OPTION_ARG_OPTIONAL) ?
					      optional_argument : required_argument)
					   : no_argument;

			if (o[i].flags & OPTION_DOC)
				continue;
			if (o[i].name)
				lo[n++] = (struct option){ o[i].name, has, 0, o[i].key };
			if (o[i].key > 0 && o[i].key < 128 && isprint(o[i].key) &&
			    strlen(shorts) < sizeof(shorts) - 4) {
				size_t l = strlen(shorts);

				shorts[l++] = o[i].key;
				if (has != no_argument)
					shorts[l++] = ':';
				if (has == optional_argument)
					shorts[l++] = ':';
				shorts[l] = 0;
			}
		}
	}
	lo[n++] = (struct option){ "help", no_argument, 0, '?' };
	lo[n++] = (struct option){ "usage", no_argument, 0, '?' };
	/* argp's own --version (-V), from argp_program_version_hook */
	lo[n++] = (struct option){ "version", no_argument, 0, 'V' };
	strcat(shorts, "?V");
	argc = command_start(lo, shorts, argc, argv);

	/* Before getopt, which would take bcc's --debug for an abbreviation
	 * of --debug-dir. */
	for (i = 1; i < (size_t)argc && strcmp(argv[i], "--"); i++)
		if (!strncmp(argv[i], "--", 2))
			check_bcc_missing(argv[i], 0);
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		const char *bad = argv[optind - 1];

		if (c == ':')
			tk_usage_error("option '%s' needs a value", bad);
		if (c == '?' && optopt && !strncmp(bad, "--", 2))
			/* getopt's "doesn't allow an argument" for a long flag */
			tk_usage_error("option '%.*s' takes no value",
				       (int)strcspn(bad, "="), bad);
		if (c == '?' && optopt && optopt != '?') {
			check_bcc_missing(bad, optopt);
			tk_usage_error("unknown option '-%c'", optopt);
		}
		if (c == '?' && !optopt && strcmp(bad, "--help") &&
		    strcmp(bad, "--usage") && strcmp(bad, "-?")) {
			check_bcc_missing(bad, 0);
			tk_usage_error("unknown option '%s'", bad);
		}
	}
	optind = 1;
	free(lo);
	return argc;
}

/* The tool's own letters for common options: the option's key becomes
 * the letter, and tool_letters maps it back. */
static void give_tool_letters(const struct tk_tool *tool)
{
	const struct tk_letter *l;
	size_t i, n = 0;

	for (l = tool->letters; l && l->letter; l++) {
		for (i = 0; common_options[i].name || common_options[i].key; i++) {
			if (!common_options[i].name ||
			    strcmp(common_options[i].name, l->option))
				continue;
			if (n == sizeof(tool_letters) / sizeof(tool_letters[0]))
				abort();  /* a tool's table, not user input */
			tool_letters[n].letter = l->letter;
			tool_letters[n++].key = common_options[i].key;
			common_options[i].key = l->letter;
		}
	}
}

/* Does the tool (or its family's options) use this short letter? */
static bool letter_used(const struct tk_tool *tool, int letter)
{
	const struct argp_option *lists[] = {
		tool->options, tool->extra ? tool->extra->options : NULL,
	};
	size_t i, k;

	for (k = 0; k < 2; k++)
		for (i = 0; i < count_options(lists[k]); i++)
			if (lists[k][i].key == letter)
				return true;
	return false;
}

/* After argp: options that only mean something together, the systemd
 * unit's cgroup, the output file, and COMMAND. */
static void finish_args(void)
{
	struct tk_filter *f = &tk_opts.filter;

	if (tk_opts.command) {
		if (f->tgid || f->tid || f->ppid)
			tk_usage_error("-p, --tid and --ppid do not go with -- COMMAND: COMMAND and its descendants are what is traced");
		if (!tk_opts.all && (tk_opts.cgroup_path || tk_opts.unit))
			tk_usage_error("--cgroup and --unit go with -- COMMAND only with --all: without it COMMAND's own cgroup is the filter");
		if (tk_opts.dry_run)
			tk_usage_error("--dry-run does not run COMMAND; leave out one or the other");
	} else {
		if (tk_opts.all)
			tk_usage_error("--all goes with -- COMMAND: every process is traced while COMMAND runs");
		if (tk_opts.run_as_name)
			tk_usage_error("--run-as goes with -- COMMAND: it names the user COMMAND runs as");
	}
	if (tk_opts.unit) {
		static char dir[PATH_MAX];
		char root[PATH_MAX], name[256];

		if (tk_opts.cgroup_path)
			tk_usage_error("--unit and --cgroup both name a cgroup; give one");
		/* systemctl's rule: a name without a type is a service. */
		snprintf(name, sizeof(name), "%s%s", tk_opts.unit,
			 strchr(tk_opts.unit, '.') ? "" : ".service");
		if (tk_cgroup2_root(root, sizeof(root)) < 0)
			tk_usage_error("--unit needs cgroup v2, which is not mounted");
		if (tk_unit_cgroup(root, name, dir, sizeof(dir)) < 0)
			tk_usage_error("no systemd unit '%s' has a cgroup under %s (is it running? systemctl status %s)",
				       name, root, name);
		tk_opts.cgroup_path = dir;
		tk_opts.filter.use_cgroup = 1;
	}
	if (the_tool->no_print_cgroup && tk_opts.filter.cgroup_ids)
		tk_usage_error("--print-cgroup is not offered by %s: filter by cgroup with --cgroup PATH",
			       the_tool->name);
	if (tk_opts.output)
		tk_output_to_file(tk_opts.output, tk_opts.command != NULL);
	tk_pidns_detect(&tk_opts.filter);
	tk_command_prepare();
}

void tk_parse_args(const struct tk_tool *tool, int argc, char **argv)
{
	size_t i, j;
	static char args_doc[256];
	int command_at;
	struct argp_child children[] = {
		{ 0, 0, "Common options:", 2 },
		{ 0 },
		{ 0 },
	};
	static struct argp common_argp;
	struct argp argp = {
		.options = tool->options,
		.parser = tool->parser,
		.doc = tool->doc,
		.children = children,
	};

	the_tool = tool;
	tk_set_tool_name(tool->name);
	/* Letters the tool claims leave the common option long-only. */
	for (i = 0; common_options[i].name || common_options[i].key; i++) {
		int key = common_options[i].key;

		for (j = 0; j < sizeof(default_letters) / sizeof(default_letters[0]); j++) {
			int letter = default_letters[j].letter;

			if (default_letters[j].key != key)
				continue;
			if ((!tool->own_letters || !strchr(tool->own_letters, letter)) &&
			    !letter_used(tool, letter))
				common_options[i].key = letter;
		}
	}
	give_tool_letters(tool);
	common_argp.options = common_options;
	common_argp.parser = parse_common;
	children[0].argp = &common_argp;
	if (tool->extra)
		children[1] = (struct argp_child){ tool->extra, 0, 0, 1 };
	snprintf(args_doc, sizeof(args_doc), "%s%s[-- COMMAND [ARG...]]",
		 tool->args_doc ? tool->args_doc :
		 tool->periodic ? "[interval [count]]" : "",
		 tool->args_doc || tool->periodic ? " " : "");
	argp.args_doc = args_doc;

	command_at = precheck(tool->options, tool->extra ? tool->extra->options : NULL,
			      argc, argv);
	if (command_at < argc) {
		if (command_at + 1 == argc)
			tk_usage_error("'--' must be followed by a COMMAND to run and trace");
		tk_opts.command = argv + command_at + 1;
		argc = command_at;
	}
	argp_err_exit_status = 2;
	argp_program_version_hook = tk_version_hook;
	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		exit(2);
	finish_args();
}
