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

#include "funcmatch.h"
#include "functarget.h"
#include "stacks.h"
#include "tracekit.h"
#include "stackcount.skel.h"

#define TP_NAME_MAX 128

static struct {
	const char *spec;      /* EVENT as given */
	bool per_process;      /* -P */
	int cpu;               /* -c; -1: every CPU */
	bool regex;            /* -r */
} env = { .cpu = -1 };

/* What EVENT names: a tracepoint (category, name), else one function
 * (target) or several (funcs, n > 1). */
static char tp_category[TP_NAME_MAX], tp_name[TP_NAME_MAX];
static struct tk_func_target target;
static struct tk_func_list funcs;
static const char *func_part;  /* the function part of EVENT */

static const struct argp_option options[] = {
	{ "perpid", 'P', 0, 0,
	  "Count and print stacks separately for each process", 0 },
	{ 0, 'D', "SEC", 0, "Stop after SEC seconds (as --duration)", 0 },
	{ "cpu", 'c', "CPU", 0, "Count only events on this CPU", 0 },
	{ "interval", 'i', "SEC", 0,
	  "Print the counts every SEC seconds, and start again from zero", 0 },
	{ 0, 'v', 0, 0,
	  "Show each frame's raw address (as --address; --verbose is the attach methods and libbpf's messages)", 0 },
	{ "regexp", 'r', 0, 0,
	  "EVENT's function part is a POSIX extended regex, not a glob", 0 },
	{ 0 },
};

static const char doc[] =
"Count the stacks that reach an event: a tracepoint, a kernel function or\n"
"a user function.\n"
"\v"
"EVENT is one of (bcc's forms):\n"
"  FUNC, p::FUNC        a kernel function (fentry, else kprobes): vfs_read\n"
"  LIB:FUNC, p:LIB:FUNC a library function (uprobes): c:malloc, where c is\n"
"                       libc.so.*, or a file name such as libssl.so.3; with\n"
"                       -p, the library that process maps; LIB may be a\n"
"                       PATH (/usr/bin/bash:readline, ./a.out:work) or a\n"
"                       program in PATH (bash:readline)\n"
"  t:CATEGORY:NAME      a tracepoint: t:sched:sched_switch\n"
"  u:LIB:PROBE          a USDT probe: not supported yet\n"
"FUNC may be a glob (tcp_send*, c:str*; *, ? and [...]) or, with -r, a\n"
"POSIX extended regex matching whole names; a pattern matches at most\n"
"1000 functions, attached with one kprobe.multi (uprobe.multi) link where\n"
"the kernel has it, else one probe per function (-v says which).\n"
"\n"
"Each hit of the event counts its stacks: the kernel stack and the user\n"
"stack of the task that hit it (-K, -U: only one of them). A user\n"
"function has no kernel stack. Stacks are merged across processes unless\n"
"-P is given. -c counts only what happens on that CPU. A tracepoint\n"
"attaches with tp_btf, else raw_tp, else the classic tracepoint\n"
"(syscalls:* exist only as classic tracepoints). With -p (or --tid) a\n"
"user function is probed in that process only. One EVENT per run.\n"
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
"  stackcount -P -D 5 t:raw_syscalls:sys_enter  # per process, for 5 s\n"
"  stackcount 'tcp_send*'               # kernel stacks of tcp_send*()\n"
"  stackcount -r 'c:(malloc|free)'      # user stacks of malloc and free\n"
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
	case 'r':
		env.regex = true;
		break;
	case ARGP_KEY_ARG:
		if (env.spec)
			tk_usage_error("unexpected argument '%s': one EVENT per run", arg);
		env.spec = arg;
		break;
	case ARGP_KEY_END:
		if (!env.spec)
			tk_usage_error("missing EVENT: a kernel function (vfs_read), LIB:FUNC (c:malloc) or t:CATEGORY:NAME (a tracepoint)");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* bcc's --debug prints the generated BPF program; tracekit's are
 * compiled ahead of time. */
static const struct tk_bcc_missing bcc_missing[] = {
	{ "--debug", "the BPF program is compiled ahead of time (bpf/stackcount.bpf.c); --verbose shows how it attaches" },
	{ 0 },
};

static const struct tk_tool tool = {
	.name = "stackcount",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "dcv",
	.extra = &tk_stack_argp,
	.args_doc = "EVENT",
	.bcc_missing = bcc_missing,
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

/* A function (or pattern) in the form resolve() made of EVENT: "FUNC"
 * or "LIB:FUNC". When LIB names nothing but a tracepoint LIB:FUNC
 * exists, that was meant: say how bcc's grammar writes it. */
static void resolve_func(const char *spec, bool user)
{
	pid_t pid = tk_filter_attach_pid() > 0 ? tk_filter_attach_pid() : 0;
	char err[PATH_MAX + 256];
	int r;

	r = tk_func_spec_resolve(spec, env.regex, pid, &target, &funcs,
				 &func_part, err, sizeof(err));
	if (r == -ENOENT && user && split_tracepoint(spec) &&
	    tk_tracepoint_lookup(tp_category, tp_name) == TK_TP_FOUND)
		tk_usage_error("invalid EVENT '%s': %s; the tracepoint %s:%s is written t:%s:%s",
			       env.spec, err, tp_category, tp_name, tp_category,
			       tp_name);
	tp_category[0] = 0;
	if (r < 0)
		tk_usage_error("invalid EVENT '%s': %s", env.spec, err);
	if ((target.binary[0] || funcs.binary[0]) && pid && kill(pid, 0) &&
	    errno == ESRCH)
		tk_usage_error("invalid --%s value '%d': no such process",
			       tk_opts.filter.tgid > 0 ? "pid" : "tid", (int)pid);
}

/* EVENT in bcc's grammar (stackcount.py's Probe): split at every colon,
 * one part FUNC, two LIB:FUNC, three TYPE:LIB:FUNC with TYPE p (a
 * function: p::FUNC kernel, p:LIB:FUNC user), t (t:CATEGORY:NAME) or u
 * (USDT). A usage error (exit 2) unless it names something that exists. */
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
			tk_usage_error("invalid EVENT '%s': no tracepoint %s:%s in this kernel (tracefs events/ lists those it has)",
				       s, tp_category, tp_name);
		return;
	}
	if (parts == 3 && !strncmp(s, "u:", 2))
		tk_usage_error("invalid EVENT '%s': USDT probes are not supported yet; %s traces a user function",
			       s, s + 2);
	if (parts == 3 && !strncmp(s, "p::", 3)) {
		resolve_func(s + 3, false);
		return;
	}
	if (parts == 3 && !strncmp(s, "p:", 2)) {
		resolve_func(s + 2, true);
		return;
	}
	if (parts >= 3 && !env.regex)
		tk_usage_error("invalid EVENT '%s': expected FUNC, LIB:FUNC, p::FUNC, p:LIB:FUNC, t:CATEGORY:NAME or u:LIB:PROBE",
			       s);
	resolve_func(s, parts > 1);
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
		if (funcs.n > 1)
			tk_set_target_multi("probe", &funcs, func_part,
					    funcs.binary[0] ? pid : -1);
		else
			tk_set_target("probe", binary, target.func,
				      binary ? pid : -1);
	}
	skel = tk_load(&stackcount_bpf_ops, configure, NULL);
	how.no_comm = !env.per_process;
	tk_stacks_run(skel->obj, &how);
	stackcount_bpf__destroy(skel);
	tk_func_list_free(&funcs);
	return tk_exit_status();
}
