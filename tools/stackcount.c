/* stackcount: count the stacks that reach an event (a tracepoint, a
 * kernel function or a user function), as bcc's stackcount. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "functarget.h"
#include "stacks.h"
#include "tracekit.h"
#include "stackcount.skel.h"

#define TP_NAME_MAX 128

static struct {
	const char *spec;      /* EVENT as given */
	bool per_process;      /* -P */
	int cpu;               /* -c; -1: every CPU */
} env = { .cpu = -1 };

/* What EVENT names: a tracepoint (category, name), else a function. */
static char tp_category[TP_NAME_MAX], tp_name[TP_NAME_MAX];
static struct tk_func_target target;

static const struct argp_option options[] = {
	{ "perpid", 'P', 0, 0,
	  "Count and print stacks separately for each process", 0 },
	{ 0, 'D', "SEC", 0, "Stop after SEC seconds (as --duration)", 0 },
	{ "cpu", 'c', "CPU", 0, "Count only events on this CPU", 0 },
	{ "interval", 'i', "SEC", 0,
	  "Print the counts every SEC seconds, and start again from zero", 0 },
	{ 0, 'v', 0, 0,
	  "Show each frame's raw address (as --address; --verbose is the attach methods and libbpf's messages)", 0 },
	{ 0 },
};

static const char doc[] =
"Count the stacks that reach an event: a tracepoint, a kernel function or\n"
"a user function.\n"
"\v"
"EVENT is one of:\n"
"  t:CATEGORY:NAME      a tracepoint: t:sched:sched_switch\n"
"  CATEGORY:NAME        the same, when that tracepoint exists\n"
"  FUNC, k:FUNC         a kernel function (fentry, else kprobes): vfs_read\n"
"  LIB:FUNC             a library function (uprobes): c:malloc, where c is\n"
"                       libc.so.*, or a file name such as libssl.so.3; with\n"
"                       -p, the library that process maps\n"
"  PATH:FUNC            a function of an ELF file: /usr/bin/bash:readline,\n"
"                       ./a.out:work, or bash:readline for a program in PATH\n"
"  p:LIB:FUNC, u:LIB:FUNC   the same as LIB:FUNC or PATH:FUNC\n"
"\n"
"Each hit of the event counts its stacks: the kernel stack and the user\n"
"stack of the task that hit it (-K, -U: only one of them). A user\n"
"function has no kernel stack. Stacks are merged across processes unless\n"
"-P is given. -c counts only what happens on that CPU. A tracepoint\n"
"attaches with tp_btf, else raw_tp, else the classic tracepoint\n"
"(syscalls:* exist only as classic tracepoints). With -p (or --tid) a\n"
"user function is probed in that process only. Names are exact: no\n"
"wildcards, one event per run, and no USDT probes.\n"
"\n"
"Output: bcc's report by default, the largest count last; -f folded lines\n"
"for flamegraph.pl; -j NDJSON. -s adds each frame's offset in its\n"
"function (func+0x1a), -v each frame's raw address (report and -j). With\n"
"-i SEC, a block every SEC seconds, as bcc's: a blank line, with -T the\n"
"time (HH:MM:SS), then the stacks counted in that interval; with -j each\n"
"record has \"time\" and \"interval\" (1, 2, ...). The last block, at\n"
"exit, covers the part interval. As in bcc, -d is --delimited, -c --cpu\n"
"and -v raw addresses: the duration is -D or --duration, the cgroup\n"
"--cgroup, and the attach methods and libbpf's messages --verbose.\n"
"\n"
"Examples:\n"
"  stackcount submit_bio                 # kernel stacks of submit_bio()\n"
"  stackcount -K t:sched:sched_switch    # kernel stacks of context switches\n"
"  stackcount -U -p 185 c:malloc         # user stacks of malloc() in 185\n"
"  stackcount -P -D 5 raw_syscalls:sys_enter  # per process, for 5 s\n"
"  stackcount -f -p 185 ./a.out:work > out.folded  # for flamegraph.pl\n"
"  stackcount -j t:block:block_rq_issue  # NDJSON\n"
"  stackcount -s -v -p 185 c:malloc      # offsets and raw addresses\n"
"  stackcount -Ti 5 t:sched:sched_switch # every 5 s, with the time\n"
"  stackcount -c 1 t:sched:sched_switch  # on CPU 1 only\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'P':
		env.per_process = true;
		break;
	case 'D':
		tk_opts.duration = tk_arg_double("-D", arg, 0.001, 1e9);
		break;
	case 'c': {
		int n = libbpf_num_possible_cpus();

		env.cpu = tk_arg_long("-c/--cpu", arg, 0, n > 0 ? n - 1 : INT_MAX);
		break;
	}
	case 'i':
		tk_opts.interval = tk_arg_long("-i/--interval", arg, 1, 86400);
		break;
	case 'v':
		tk_stack_opts.addresses = true;
		break;
	case ARGP_KEY_ARG:
		if (env.spec)
			tk_usage_error("unexpected argument '%s': one EVENT per run", arg);
		env.spec = arg;
		break;
	case ARGP_KEY_END:
		if (!env.spec)
			tk_usage_error("missing EVENT: t:CATEGORY:NAME (a tracepoint), a kernel function (vfs_read), LIB:FUNC (c:malloc) or PATH:FUNC");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "stackcount",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "dcv",
	.extra = &tk_stack_argp,
	.args_doc = "EVENT",
};

static bool is_ident(const char *s, size_t len)
{
	size_t i;

	if (!len || len >= TP_NAME_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return false;
	return true;
}

/* Split "CATEGORY:NAME" (len bytes of s) into tp_category and tp_name;
 * false unless both are names. */
static bool split_tracepoint(const char *s)
{
	const char *colon = strchr(s, ':');

	if (!colon || !is_ident(s, colon - s) ||
	    !is_ident(colon + 1, strlen(colon + 1)))
		return false;
	snprintf(tp_category, sizeof(tp_category), "%.*s", (int)(colon - s), s);
	snprintf(tp_name, sizeof(tp_name), "%s", colon + 1);
	return true;
}

static void resolve_func(const char *spec, bool maybe_tp)
{
	pid_t pid = tk_filter_attach_pid() > 0 ? tk_filter_attach_pid() : 0;
	char err[PATH_MAX + 256];
	int r;

	r = tk_func_target_resolve(spec, pid, &target, err, sizeof(err));
	if (r == -ENOENT && maybe_tp)
		tk_usage_error("invalid EVENT '%s': %s, and no tracepoint %s:%s in this kernel",
			       env.spec, err, tp_category, tp_name);
	if (r)
		tk_usage_error("invalid EVENT '%s': %s", env.spec, err);
	if (target.binary[0] && pid && kill(pid, 0) && errno == ESRCH)
		tk_usage_error("invalid --%s value '%d': no such process",
			       tk_opts.filter.tgid > 0 ? "pid" : "tid", (int)pid);
}

/* EVENT in bcc's forms (see doc): a usage error (exit 2) unless it names
 * something that exists. */
static void resolve(void)
{
	const char *s = env.spec, *rest;
	int parts = 1;

	for (rest = s; (rest = strchr(rest, ':')); rest++)
		parts++;
	if (!strncmp(s, "t:", 2)) {
		if (parts != 3 || !split_tracepoint(s + 2))
			tk_usage_error("invalid EVENT '%s': expected t:CATEGORY:NAME, such as t:sched:sched_switch",
				       s);
		if (tk_tracepoint_lookup(tp_category, tp_name) != TK_TP_FOUND)
			tk_usage_error("invalid EVENT '%s': no tracepoint %s:%s in this kernel (see /sys/kernel/tracing/events)",
				       s, tp_category, tp_name);
		return;
	}
	if (!strncmp(s, "k:", 2) || !strncmp(s, "p::", 3)) {
		rest = s + (s[0] == 'k' ? 2 : 3);
		if (!*rest || strchr(rest, ':'))
			tk_usage_error("invalid EVENT '%s': expected %sFUNC, a kernel function",
				       s, s[0] == 'k' ? "k:" : "p::");
		resolve_func(rest, false);
		return;
	}
	if (parts == 3 && (!strncmp(s, "p:", 2) || !strncmp(s, "u:", 2))) {
		resolve_func(s + 2, false);
		return;
	}
	if (parts > 2)
		tk_usage_error("invalid EVENT '%s': expected t:CATEGORY:NAME, FUNC, k:FUNC, LIB:FUNC or PATH:FUNC",
			       s);
	/* CATEGORY:NAME is a tracepoint when the kernel has one so named;
	 * otherwise LIB:FUNC or PATH:FUNC. */
	if (parts == 2 && split_tracepoint(s)) {
		enum tk_tp_lookup found = tk_tracepoint_lookup(tp_category, tp_name);

		if (found == TK_TP_FOUND)
			return;
		/* A category the kernel has: the tracepoint was meant. */
		if (found == TK_TP_NO_NAME)
			tk_usage_error("invalid EVENT '%s': no tracepoint %s:%s in this kernel (see /sys/kernel/tracing/events/%s)",
				       s, tp_category, tp_name, tp_category);
		resolve_func(s, true);
		tp_category[0] = 0;
		return;
	}
	resolve_func(s, false);
}

static int configure(void *s, void *ctx)
{
	struct stackcount_bpf *skel = s;

	(void)ctx;
	skel->rodata->target_cpu = env.cpu;
	return tk_stacks_configure(skel->obj);
}

TK_SKEL_OPS(stackcount_bpf);

int main(int argc, char **argv)
{
	struct tk_stacks_print how = { .unit = "calls", .bare_addresses = true };
	struct stackcount_bpf *skel;
	const char *binary;
	pid_t pid;

	tk_parse_args(&tool, argc, argv);
	resolve();
	tk_init();
	if (tp_category[0]) {
		tk_set_target_tp("probe", tp_category, tp_name);
	} else {
		/* A user function is probed in the filtered process only. */
		binary = target.binary[0] ? target.binary : NULL;
		pid = tk_filter_attach_pid();
		tk_set_target("probe", binary, target.func, binary ? pid : -1);
	}
	skel = tk_load(&stackcount_bpf_ops, configure, NULL);
	how.no_comm = !env.per_process;
	tk_stacks_run(skel->obj, &how);
	stackcount_bpf__destroy(skel);
	return 0;
}
