/* Command line: the common options of every tool (one argp child), the
 * tool's own options, and usage errors that exit 2 with one line. */
#ifndef TK_OPTS_H
#define TK_OPTS_H

#include <argp.h>
#include <stdbool.h>

#include "tk_shared.h"

struct tk_opts {
	struct tk_filter filter;   /* -p -u -n --tid --ppid; use_cgroup from -c;
				    * -p/--tid lists: libtrace/filter.h */
	const char *cgroup_path;   /* -c */
	bool time;                 /* -T: wall-clock time column */
	bool json;                 /* -j */
	double duration;           /* -d SEC; 0: until interrupted */
	int verbose;               /* -v: 1, -vv: 2 (libbpf debug too) */
	bool dry_run;              /* --dry-run: attach, print methods, exit */
	const char *btf_path;      /* --btf */
	unsigned long buffer_kb;   /* --buffer-kb; 0: the tool's default */
	long interval;             /* periodic tools: seconds, 0: at exit only */
	long count;                /* periodic tools: 0: forever */
	char **command;            /* -- COMMAND [ARG...]; NULL: none */
	bool all;                  /* -a: every process while COMMAND runs */
	const char *run_as_name;   /* --run-as USER: COMMAND runs as USER */
	unsigned run_as_uid, run_as_gid;
	const char *output;        /* -o FILE */
	int saved_stdout;          /* with -o: the first stdout, for COMMAND */
	const char *unit;          /* --unit NAME */
};

extern struct tk_opts tk_opts;

/* An option of bcc's tool (Python or libbpf-tools) that tracekit's has
 * not: using it is a usage error that says what to use instead, never an
 * unknown-option error or a silent change of meaning. */
struct tk_bcc_missing {
	const char *option;        /* "--buffer-pages" or "-b" */
	const char *instead;       /* "use --buffer-kb KB (the size in KiB)" */
};

/* A short letter the tool gives to a common option that has none by
 * default (execsnoop's -P is --ppid, as in bcc). */
struct tk_letter {
	int letter;
	const char *option;        /* the common option's long name: "ppid" */
};

/* The tool's description of itself for the parser. */
struct tk_tool {
	const char *name;
	const char *doc;           /* argp doc: summary "\v" examples, limits */
	const struct argp_option *options;
	argp_parser_t parser;      /* may be NULL */
	const char *own_letters;   /* short letters the tool takes from the
				    * common options, which keep their long
				    * names (syscount's -T is --top) */
	bool periodic;             /* accepts [interval [count]] */
	const struct argp *extra;  /* options shared by a family of tools
				    * (tk_stack_argp), after the tool's own */
	const char *args_doc;      /* the arguments in --help's usage line;
				    * default "[interval [count]]" when
				    * periodic */
	const struct tk_bcc_missing *bcc_missing;  /* the tool's own, ended
				    * by { 0 }; those of every tool are in
				    * opts.c */
	const struct tk_letter *letters;  /* ended by { 0 }; a letter taken
				    * from a default (syscount's -c) must be
				    * in own_letters too */
	bool no_print_cgroup;      /* --print-cgroup is a usage error (the
				    * tool has no cgroup column or key) */
};

/* Parse argv; exit 2 with one line on any usage error, 0 after --help. */
void tk_parse_args(const struct tk_tool *tool, int argc, char **argv);

/* Usage error: "tool: MESSAGE; see 'tool --help'", exit 2. */
void tk_usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

/* Value parsers for option arguments: on a bad value they call
 * tk_usage_error naming the option, so tools never print their own. */
long tk_arg_long(const char *option, const char *arg, long min, long max);
/* A list of signals (9,TERM,SIGUSR1) into mask, bit n for signal n
 * (tk_signal_list_parse), or tk_usage_error naming the option. */
void tk_arg_signals(const char *option, const char *arg, unsigned long long mask[2]);
double tk_arg_double(const char *option, const char *arg, double min,
		     double max);
/* A tool's one [duration] argument (profile, offcputime, llcstat): into
 * tk_opts.duration; a second argument is a usage error. Returns true
 * once one was given (arg NULL: only asks). */
bool tk_arg_duration(const char *arg);
/* A comma-separated list (1,2,3): each item to each(item, ctx); an empty
 * list or item is a usage error "expected EXPECT". */
void tk_arg_list(const char *option, const char *arg, const char *expect,
		 void (*each)(const char *item, void *ctx), void *ctx);
/* One of n words (-s keys): its index in names, or a usage error
 * listing them ("expected all, reads or writes"). */
int tk_arg_choice(const char *option, const char *arg, const char *const *names,
		  int n);
/* A user: a name from the password database, or a numeric UID. */
int tk_arg_user(const char *option, const char *arg);

#endif
