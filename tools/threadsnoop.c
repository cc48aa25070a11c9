/* threadsnoop: trace pthread_create() calls, with the start function. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "funcmatch.h"
#include "functarget.h"
#include "symbolize.h"
#include "threadsnoop.h"
#include "threadsnoop.skel.h"
#include "tracekit.h"

static struct {
	const char *libc;            /* -l */
	char binary[PATH_MAX];       /* the library probed */
	struct tk_func_list funcs;   /* its pthread_create, by file offset */
	struct tk_syms *syms;
	unsigned long long first_ns;
} env;

static const struct argp_option options[] = {
	{ "libc", 'l', "LIB", 0, "The library whose pthread_create to probe (a path; default: the one the -p process maps, else the system's libc)", 0 },
	{ 0 },
};

static const char doc[] =
"Trace new threads: pthread_create() calls in the C library, with the\n"
"function each thread starts in.\n"
"\v"
"bcc's columns: TIME(ms) since the first call shown, PID and COMM of the\n"
"creator, FUNC (the start routine, named from the program's and its\n"
"libraries' symbols; [unknown] (module) where there is none). Each call is\n"
"reported when it returns: JSON adds the creating thread, the new\n"
"thread's id (\"new_tid\", from the clone the call made), the start\n"
"routine's address and the result (\"ret\", 0 or an error number, with its\n"
"name). Threads made without pthread_create (a raw clone, another\n"
"thread library) are not seen. glibc 2.34 and later define\n"
"pthread_create in libc.so.6; -l names another library (libpthread.so.0\n"
"of an older glibc, musl's libc).\n"
"\n"
"Examples:\n"
"  threadsnoop            # trace every pthread_create\n"
"  threadsnoop -p 181     # only PID 181 (its own libc)\n"
"  threadsnoop -j -- ./server   # NDJSON, of one command\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'l': env.libc = arg; break;
	default: return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "threadsnoop",
	.doc = doc,
	.options = options,
	.parser = parse,
};

/* The library, which must define pthread_create; a usage error else. */
static void resolve(void)
{
	pid_t pid = tk_filter_attach_pid() > 0 ? tk_filter_attach_pid() : 0;
	char err[PATH_MAX + 256];
	const char *obj = env.libc ? env.libc : "c";
	struct tk_func_pattern pat;

	err[0] = 0;
	if (pid && kill(pid, 0) && errno == ESRCH)
		tk_usage_error("invalid --%s value '%d': no such process",
			       tk_opts.filter.tgid > 0 ? "pid" : "tid", (int)pid);
	if (tk_func_object_resolve(obj, pid, env.binary, sizeof(env.binary), err, sizeof(err)) < 0)
		tk_usage_error("invalid --libc value '%s': %s", obj, err);
	/* By file offset: glibc defines pthread_create twice, as
	 * pthread_create@GLIBC_2.2.5 and @@GLIBC_2.34 at one address, which
	 * libbpf before 1.3 refuses to choose between by name. */
	if (tk_func_pattern_init(&pat, "pthread_create", false, err, sizeof(err)) ||
	    tk_elf_funcs_match(env.binary, &pat, &env.funcs, err, sizeof(err)) < 0 ||
	    env.funcs.n != 1)
		tk_usage_error("invalid --libc value '%s': %s", obj,
			       env.funcs.n > 1 ? "pthread_create is at more than one address" :
			       *err ? err : "no pthread_create");
	tk_func_pattern_free(&pat);
}

/* The start routine's name in the creating process. */
static const char *func_text(const struct thread_event *e, char *buf, size_t len)
{
	struct tk_sym sym;

	if (!env.syms)
		return "[unknown]";
	tk_syms_user(env.syms, e->pid, e->start, &sym, 1);
	return tk_sym_format(&sym, buf, len);
}

static void print_json(const struct thread_event *e)
{
	char buf[256];
	const char *err;
	struct tk_json j;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "thread");
	tk_json_time(&j);
	tk_json_task(&j, e->pid, e->tid, e->uid, e->comm, sizeof(e->comm), e->cgroup_id);
	if (e->new_tid)
		tk_json_int(&j, "new_tid", e->new_tid);
	else
		tk_json_null(&j, "new_tid");
	tk_json_str(&j, "func", func_text(e, buf, sizeof(buf)));
	tk_json_uint(&j, "start", e->start);
	tk_json_int(&j, "ret", e->ret);
	if (e->ret && (err = tk_errno_name(e->ret)))
		tk_json_str(&j, "error", err);
	else
		tk_json_null(&j, "error");
	tk_json_end(&j);
}

/* bcc: "%-10s %-6s %-16s %s" with TIME(ms) */
static void print_text(const struct thread_event *e)
{
	const char *func;
	char buf[256];

	if (tk_opts.time)
		printf("%-8s ", tk_time_str(buf, sizeof(buf)));
	printf("%-10llu %-6d ", (e->ts_ns - env.first_ns) / 1000000, e->pid);
	tk_print_safe_padded(stdout, e->comm, strnlen(e->comm, sizeof(e->comm)), 16);
	putchar(' ');
	if (tk_opts.filter.cgroup_ids)
		tk_print_cgroup(stdout, e->cgroup_id, TK_CGROUP_WIDTH);
	func = func_text(e, buf, sizeof(buf));
	tk_print_safe(stdout, func, strlen(func));
	putchar('\n');
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	const struct thread_event *e = data;

	(void)ctx;
	if (size < sizeof(*e))
		return 0;  /* malformed */
	if (!env.first_ns)
		env.first_ns = e->ts_ns;
	if (tk_opts.json)
		print_json(e);
	else
		print_text(e);
	return 0;
}

TK_SKEL_OPS(threadsnoop_bpf);

int main(int argc, char **argv)
{
	struct threadsnoop_bpf *skel;
	pid_t pid;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	resolve();
	env.syms = tk_syms_new(NULL);
	pid = tk_filter_attach_pid();
	tk_set_target_multi("create_entry", &env.funcs, "pthread_create", pid ? pid : -1);
	tk_set_target_multi("create_exit", &env.funcs, "pthread_create", pid ? pid : -1);
	skel = tk_load(&threadsnoop_bpf_ops, NULL, NULL);
	tk_events_open(skel->obj, handle_event, NULL);
	if (!tk_opts.json) {
		if (tk_opts.time)
			printf("%-8s ", "TIME");
		printf("%-10s %-6s %-16s ", "TIME(ms)", "PID", "COMM");
		if (tk_opts.filter.cgroup_ids)
			printf("%-*s ", TK_CGROUP_WIDTH, TK_CGROUP_HEADER);
		printf("FUNC\n");
	}
	tk_ready();
	tk_events_loop();
	tk_losses_report(skel->obj);
	threadsnoop_bpf__destroy(skel);
	if (env.syms)
		tk_syms_free(env.syms);
	tk_func_list_free(&env.funcs);
	return tk_exit_status();
}
