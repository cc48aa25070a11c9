/* gethostlatency: show the latency of host name lookups (getaddrinfo,
 * gethostbyname, gethostbyname2) in the C library. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "functarget.h"
#include "gethostlatency.h"
#include "gethostlatency.skel.h"
#include "tracekit.h"

static const char *const funcs[] = { "getaddrinfo", "gethostbyname", "gethostbyname2" };
#define N_FUNCS (sizeof(funcs) / sizeof(funcs[0]))

static struct {
	const char *libc;            /* -l */
	char binary[PATH_MAX];       /* the C library probed */
	bool has[N_FUNCS];           /* the functions it defines */
} env;

static const struct argp_option options[] = {
	{ "libc", 'l', "LIBC", 0, "The C library to probe (a path; default: the one the -p process maps, else the system's)", 0 },
	{ 0 },
};

static const char doc[] =
"Show the latency of host name lookups: getaddrinfo, gethostbyname and\n"
"gethostbyname2 calls, one line each when it returns.\n"
"\v"
"Columns as bcc: TIME (HH:MM:SS of the return), PID, COMM, LATms (the\n"
"call's time in ms) and HOST (the name asked for; \"?\" when it cannot be\n"
"read). -j adds \"tid\", \"uid\", \"func\" (which of the three) and\n"
"\"lat_ns\".\n"
"\n"
"They are traced with uprobes at the entry and return of those functions\n"
"in one C library file: with -p, the one that process maps (a container's\n"
"own, reached through /proc/PID/root), else the system's libc.so.6 (the\n"
"dynamic loader's choice); -l names the file. A program linked statically,\n"
"or with another C library (musl) outside -p, is not seen. A lookup\n"
"by a function the library does not define (musl without\n"
"gethostbyname2) is left out, which -v says.\n"
"\n"
"Examples:\n"
"  gethostlatency             # every lookup of the system's libc\n"
"  gethostlatency -p 181      # only PID 181 (its own libc)\n"
"  gethostlatency -l /lib/x86_64-linux-musl/libc.so  # another C library\n"
"  gethostlatency -j          # NDJSON, with the latency in ns\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'l': env.libc = arg; break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "gethostlatency",
	.doc = doc,
	.options = options,
	.parser = parse,
};

/* The library and which of the functions it has; a usage error when it
 * has none of them or cannot be found. */
static void resolve(void)
{
	pid_t pid = tk_filter_attach_pid() > 0 ? tk_filter_attach_pid() : 0;
	char err[PATH_MAX + 256];
	const char *obj = env.libc ? env.libc : "c";
	size_t i, n = 0;

	if (pid && kill(pid, 0) && errno == ESRCH)
		tk_usage_error("invalid --%s value '%d': no such process",
			       tk_opts.filter.tgid > 0 ? "pid" : "tid", (int)pid);
	if (tk_func_object_resolve(obj, pid, env.binary, sizeof(env.binary), err, sizeof(err)) < 0)
		tk_usage_error("invalid --libc value '%s': %s", obj, err);
	for (i = 0; i < N_FUNCS; i++) {
		env.has[i] = !tk_elf_func_check(env.binary, funcs[i], err, sizeof(err));
		n += env.has[i];
		if (!env.has[i])
			tk_info("%s: no %s, not traced", env.binary, funcs[i]);
	}
	if (!n)
		tk_usage_error("invalid --libc value '%s': %s defines none of getaddrinfo, gethostbyname, gethostbyname2",
			       obj, env.binary);
}

static const char *func_name(int f)
{
	return f >= 0 && (size_t)f < N_FUNCS ? funcs[f] : "?";
}

static void print_json(const struct gethostlatency_event *e)
{
	struct tk_json j;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "lookup");
	tk_json_time(&j);
	tk_json_int(&j, "pid", e->pid);
	tk_json_int(&j, "tid", e->tid);
	tk_json_uint(&j, "uid", e->uid);
	tk_json_strn(&j, "comm", e->comm, strnlen(e->comm, sizeof(e->comm)));
	tk_json_str(&j, "func", func_name(e->func));
	if (e->host_len > 0)
		tk_json_strn(&j, "host", e->host, strnlen(e->host, sizeof(e->host)));
	else
		tk_json_null(&j, "host");
	tk_json_uint(&j, "lat_ns", e->lat_ns);
	tk_json_end(&j);
}

/* bcc: "%-9s %-7d %-16s %10.2f %s" */
static void print_text(const struct gethostlatency_event *e)
{
	char buf[16];

	printf("%-9s %-7d ", tk_time_str(buf, sizeof(buf)), e->pid);
	tk_print_safe_padded(stdout, e->comm, strnlen(e->comm, sizeof(e->comm)), 16);
	printf(" %10.2f ", e->lat_ns / 1e6);
	if (e->host_len > 0)
		tk_print_safe(stdout, e->host, strnlen(e->host, sizeof(e->host)));
	else
		putchar('?');
	putchar('\n');
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	(void)ctx;
	if (size < sizeof(struct gethostlatency_event))
		return 0;
	if (tk_opts.json)
		print_json(data);
	else
		print_text(data);
	return 0;
}

static int configure(void *s, void *ctx)
{
	struct gethostlatency_bpf *skel = s;
	char prefix[64];
	size_t i;

	(void)ctx;
	for (i = 0; i < N_FUNCS; i++) {
		if (env.has[i])
			continue;
		snprintf(prefix, sizeof(prefix), "%s_", funcs[i]);
		tk_programs_off(skel->obj, prefix);
	}
	return 0;
}

TK_SKEL_OPS(gethostlatency_bpf);

int main(int argc, char **argv)
{
	struct gethostlatency_bpf *skel;
	char family[64];
	pid_t pid;
	size_t i;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	resolve();
	pid = tk_filter_attach_pid();
	for (i = 0; i < N_FUNCS; i++) {
		if (!env.has[i])
			continue;
		snprintf(family, sizeof(family), "%s_entry", funcs[i]);
		tk_set_target(strdup(family), env.binary, funcs[i], pid);
		snprintf(family, sizeof(family), "%s_exit", funcs[i]);
		tk_set_target(strdup(family), env.binary, funcs[i], pid);
	}
	skel = tk_load(&gethostlatency_bpf_ops, configure, NULL);
	tk_events_open(skel->obj, handle_event, NULL);
	if (!tk_opts.json)
		printf("%-9s %-7s %-16s %10s %s\n", "TIME", "PID", "COMM", "LATms", "HOST");
	tk_ready();
	tk_events_loop();
	tk_losses_report(skel->obj);
	gethostlatency_bpf__destroy(skel);
	return tk_exit_status();
}
