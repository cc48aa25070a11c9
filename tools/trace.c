/* trace: one line per hit of any tracepoint, kernel function or user
 * function, with a filter and values the probe names, as bcc's trace,
 * with no compiler at run time: each probe's text is planned against
 * BTF (libtrace/probe/) into a plan that generic BPF programs run. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "closest.h"
#include "funcmatch.h"
#include "functarget.h"
#include "probe/site.h"
#include "stacks.h"
#include "symbolize.h"
#include "tpformat.h"
#include "trace.h"
#include "trace.skel.h"
#include "tracekit.h"
#include "usdt.h"

struct probe {
	struct tk_probe_site site;
	unsigned short off[TRACE_VALUES];
	unsigned short data_size;
};

static struct probe probes[TRACE_SLOTS];
static int nprobes;

static struct {
	bool kstack, ustack, timestamp, cpu;
	long max_events, printed;
	unsigned storage_size;
} env;

static struct tk_syms *syms;
static struct bpf_object *obj;

enum { T_STORAGE = 0x100 };

/* -K/-U's stacks: a stack map of this many slots by default, as before
 * its spill map and the way by frames (tk_stack.bpf.h). */
#define DEFAULT_STORAGE 4096

static const struct argp_option options[] = {
	{ "kernel-stack", 'K', 0, 0, "Print the kernel stack of each event", 0 },
	{ "user-stack", 'U', 0, 0, "Print the user stack of each event", 0 },
	{ "stack-storage-size", T_STORAGE, "N", 0,
	  "-K/-U: distinct stacks the stack map holds (default 4096); more go to a spill map, then to userspace by their frames", 0 },
	{ "timestamp", 't', 0, 0, "Print seconds since trace started", 0 },
	{ "print-cpu", 'C', 0, 0, "Print the CPU of each event", 0 },
	{ "max-events", 'M', "N", 0, "Exit after N events", 0 },
	{ 0 },
};

static const char doc[] =
"Print a line for each hit of a probe, with values it names (bcc's trace).\n"
"\n"
"  PROBE [(FILTER)] [\"FORMAT\"[, EXPR...]]\n"
"\n"
"  t:CATEGORY:EVENT       a tracepoint (tplist -v lists its fields)\n"
"  k:FUNC  kr:FUNC        a kernel function's entry, its return\n"
"  u:LIB:FUNC  ur:LIB:FUNC  a user function's (LIB: c, a library, a path)\n"
"  U:LIB:PROVIDER:PROBE   a USDT probe (tplist -l LIB lists them)\n"
"\n"
"EXPR: tracepoint fields and kernel function arguments by name, arg1..arg6,\n"
"retval, pid tid comm uid cpu ts ($pid when a field has that name), members\n"
"(file->f_path.dentry->d_name.name), casts ((struct task_struct *)arg1),\n"
"container_of(PTR, struct TYPE, MEMBER), C's integer operators, strings with\n"
"== and != (\"ssh*\": a prefix), kernel symbols (function != hrtimer_wakeup).\n"
"FORMAT is printf's: %d %u %x %s %c %p, and %K %U for a kernel or user\n"
"address as symbol+offset; %s of an address prints its symbol.\n"
"\v"
"Examples:\n"
"  trace 't:sched:sched_process_exec \"%s\", filename'\n"
"  trace -a -K 't:timer:hrtimer_expire_entry \"%s\", function' -- sleep 0.01\n"
"  trace 'kr:vfs_read (retval < 0) \"%d\", retval'\n"
"  trace -p 1234 'u:c:write (arg1 == 1) \"%d bytes\", arg3'\n"
"  trace 'k:vfs_read \"%s\", file->f_path.dentry->d_name.name'\n"
"\n"
"Up to 8 probes per run, each with its own filter and format. A string\n"
"value holds at most 63 bytes; a longer one ends in \"...\". Kernel\n"
"functions attach by fentry, else kprobe; -v says which. -K/-U: a stack\n"
"the stack map cannot keep goes to a spill map, else to userspace by its\n"
"frames; one lost even so is counted at exit.";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'K': env.kstack = true; break;
	case 'U': env.ustack = true; break;
	case 't': env.timestamp = true; break;
	case 'C': env.cpu = true; break;
	case 'M': env.max_events = tk_arg_long("-M/--max-events", arg, 1, LONG_MAX); break;
	case T_STORAGE:
		env.storage_size = tk_arg_long("--stack-storage-size", arg, 1, 1 << 24);
		break;
	case ARGP_KEY_ARG:
		if (nprobes == TRACE_SLOTS)
			tk_usage_error("too many probes: at most %d per run", TRACE_SLOTS);
		probes[nprobes++].site.text = arg;
		break;
	case ARGP_KEY_END:
		if (!nprobes)
			tk_usage_error("missing PROBE, such as 't:sched:sched_process_exec \"%%s\", filename'");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_bcc_missing bcc_missing[] = {
	{ "-Z", "strings hold 63 bytes; longer ones end in \"...\"" },
	{ "--string-size", "strings hold 63 bytes; longer ones end in \"...\"" },
	{ "-I", "types come from the kernel's BTF: no headers are included" },
	{ "--include", "types come from the kernel's BTF: no headers are included" },
	{ 0 },
};

static const struct tk_tool tool = {
	.name = "trace",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "KUtCM",
	.args_doc = "PROBE...",
	.bcc_missing = bcc_missing,
};

/* --- Resolving each probe ------------------------------------------------ */

/* Each value's place in the event: strings TK_PLAN_STR_LEN bytes, the
 * rest 8. */
static void layout(struct probe *p)
{
	unsigned short off = 0;

	for (int i = 0; i < p->site.plan.nvalues; i++) {
		p->off[i] = off;
		off += p->site.plan.value[i].kind == TK_PV_STR ? TK_PLAN_STR_LEN : 8;
	}
	p->data_size = off;
}

static void resolve(struct probe *p)
{
	struct tk_perr err;

	if (tk_probe_parse(p->site.text, &p->site.spec, &err))
		tk_probe_site_error(&p->site, "trace", &err);
	tk_probe_site_resolve(&p->site, "trace", "trace", (int)(p - probes));
	layout(p);
}
/* --- Loading ------------------------------------------------------------- */

static void to_bpf(const struct probe *p, volatile struct trace_probe_plan *b)
{
	const struct tk_plan *pl = &p->site.plan;
	struct trace_probe_plan t;

	memset(&t, 0, sizeof(t));
	tk_plan_to_code(pl, p->site.nargs, &t.code);
	t.nvalues = pl->nvalues;
	for (int i = 0; i < pl->nvalues; i++) {
		t.value_src[i] = tk_plan_value_src(&pl->value[i]);
		t.value_off[i] = p->off[i];
		t.value_str[i] = pl->value[i].kind == TK_PV_STR;
	}
	t.data_size = p->data_size;
	t.kstack = env.kstack;
	t.ustack = env.ustack;
	memcpy((void *)b, &t, sizeof(t));
}

static int configure(void *s, void *ctx)
{
	const struct tk_probe_site *sites[TRACE_SLOTS];
	struct trace_bpf *skel = s;

	(void)ctx;
	for (int i = 0; i < nprobes; i++) {
		to_bpf(&probes[i], &skel->rodata->trace_plans[i]);
		sites[i] = &probes[i].site;
	}
	/* Only each probe's own family loads. */
	tk_probe_sites_only(skel->obj, "trace", TRACE_SLOTS, sites, nprobes);
	return tk_event_stacks_configure(skel->obj);
}

/* --- Output -------------------------------------------------------------- */

/* The conversion's flags and width, its length dropped, then "ll" and
 * the conversion (or conv instead). */
static void respec(const struct tk_fmt_conv *c, char conv, bool ll, char *out, size_t size)
{
	size_t n = strspn(c->text + 1, "-+ #0123456789.");

	snprintf(out, size, "%%%.*s%s%c", (int)n, c->text + 1, ll ? "ll" : "", conv);
}

static struct tk_syms *symbolizer(void)
{
	if (!syms) {
		struct tk_syms_opts o = { 0 };

		syms = tk_syms_new(&o);
	}
	return syms;
}

static void symbol(char *buf, size_t size, unsigned long long addr, bool user, pid_t pid)
{
	tk_syms_addr_text(symbolizer(), addr, user, pid, buf, size);
}

static unsigned long long int_at(const struct trace_hit *e, int off)
{
	unsigned long long v;

	memcpy(&v, e->data + off, sizeof(v));
	return v;
}

/* Value i of e, formatted by its conversion, into out. */
static void format_value(const struct probe *p, const struct trace_hit *e, int i, char *out,
			 size_t size)
{
	const struct tk_fmt_conv *c = &p->site.spec.conv[i];
	const struct tk_plan_value *v = &p->site.plan.value[i];
	char spec[32], buf[TK_PLAN_STR_LEN * 4 + 8];
	unsigned long long u;
	bool trunc, sgn;

	if (e->faults & (1u << i)) {
		respec(c, 's', false, spec, sizeof(spec));
		snprintf(out, size, spec, "(fault)");
		return;
	}
	if (v->kind == TK_PV_STR) {
		tk_plan_str_text(e->data + p->off[i], buf, sizeof(buf), &trunc);
		respec(c, 's', false, spec, sizeof(spec));
		snprintf(out, size, spec, buf);
		return;
	}
	u = int_at(e, p->off[i]);
	if (v->size < 8 && !v->is_signed)
		u &= (1ULL << (v->size * 8)) - 1;
	switch (c->conv) {
	case 's': case 'K': case 'U':
		symbol(buf, sizeof(buf), u, c->conv == 'U' || (c->conv == 's' && tk_probe_site_user(&p->site)), (pid_t)e->pid);
		respec(c, 's', false, spec, sizeof(spec));
		snprintf(out, size, spec, buf);
		return;
	case 'p':
		snprintf(out, size, "0x%llx", u);
		return;
	case 'c':
		respec(c, 'c', false, spec, sizeof(spec));
		snprintf(out, size, spec, (int)(unsigned char)u);
		return;
	}
	/* printf's own widths: %d is an int, %hd a short, %ld 64 bits (so a
	 * uprobe's int return value, of which rax's low half is all that
	 * counts, prints as -1, not 4294967295). */
	sgn = c->conv == 'd' || c->conv == 'i';
	if (c->length == 'h')
		u = sgn ? (unsigned long long)(long long)(short)u : (unsigned short)u;
	else if (c->length == 'H')
		u = sgn ? (unsigned long long)(long long)(signed char)u : (unsigned char)u;
	else if (!c->length)
		u = sgn ? (unsigned long long)(long long)(int)u : (unsigned int)u;
	respec(c, c->conv, true, spec, sizeof(spec));
	snprintf(out, size, spec, u);
}

/* The format with its values: literal text as written, "%%" as '%'. */
static void message(const struct probe *p, const struct trace_hit *e, char *out, size_t size)
{
	const char *f = p->site.spec.format;
	size_t n = 0;
	int i = 0;

	out[0] = 0;
	while (f && *f && n + 1 < size) {
		if (*f != '%') {
			out[n++] = *f++;
			continue;
		}
		if (f[1] == '%') {
			out[n++] = '%';
			f += 2;
			continue;
		}
		format_value(p, e, i, out + n, size - n);
		n += strlen(out + n);
		f += strlen(p->site.spec.conv[i++].text);
	}
	out[n < size ? n : size - 1] = 0;
}

static void print_stack(const struct trace_hit *e, int id, bool user, struct tk_json *j)
{
	tk_event_stack(symbolizer(), obj, id, user, (pid_t)e->pid, false, j);
}

static void print_json(const struct probe *p, const struct trace_hit *e, const char *msg)
{
	struct tk_json j;
	char buf[TK_PLAN_STR_LEN * 4 + 8];

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "event");
	tk_json_time(&j);
	tk_json_str(&j, "probe", p->site.text);
	tk_json_int(&j, "pid", e->pid);
	tk_json_int(&j, "tid", e->tid);
	tk_json_int(&j, "cpu", e->cpu);
	tk_json_strn(&j, "comm", e->comm, strnlen(e->comm, sizeof(e->comm)));
	tk_json_str(&j, "func", p->site.spec.name);
	if (tk_opts.filter.cgroup_ids)
		tk_json_cgroup(&j, e->cgroup_id);
	tk_json_arr_open(&j, "values");
	for (int i = 0; i < p->site.plan.nvalues; i++) {
		const struct tk_plan_value *v = &p->site.plan.value[i];
		unsigned long long u = v->kind == TK_PV_STR ? 0 : int_at(e, p->off[i]);
		bool trunc;

		tk_json_obj_open(&j, NULL);
		if (e->faults & (1u << i)) {
			tk_json_str(&j, "type", v->kind == TK_PV_STR ? "string" : v->kind == TK_PV_PTR ? "address" : "integer");
			tk_json_null(&j, "value");
			tk_json_bool(&j, "fault", true);
		} else if (v->kind == TK_PV_STR) {
			size_t len = strnlen((const char *)e->data + p->off[i], TK_PLAN_STR_LEN);

			tk_json_str(&j, "type", "string");
			tk_json_strn(&j, "value", (const char *)e->data + p->off[i], len);
			tk_plan_str_text(e->data + p->off[i], buf, sizeof(buf), &trunc);
			tk_json_bool(&j, "truncated", trunc);
		} else if (v->kind == TK_PV_PTR) {
			tk_json_str(&j, "type", "address");
			tk_json_uint(&j, "value", u);
			symbol(buf, sizeof(buf), u, tk_probe_site_user(&p->site), (pid_t)e->pid);
			tk_json_str(&j, "symbol", buf);
		} else {
			if (v->size < 8 && !v->is_signed)
				u &= (1ULL << (v->size * 8)) - 1;
			tk_json_str(&j, "type", "integer");
			if (v->is_signed)
				tk_json_int(&j, "value", (long long)u);
			else
				tk_json_uint(&j, "value", u);
		}
		tk_json_obj_close(&j);
	}
	tk_json_arr_close(&j);
	if (p->site.spec.format)
		tk_json_str(&j, "message", msg);
	if (env.kstack)
		print_stack(e, e->kstack, false, &j);
	if (env.ustack)
		print_stack(e, e->ustack, true, &j);
	tk_json_end(&j);
}

static void print_text(const struct probe *p, const struct trace_hit *e, const char *msg)
{
	char buf[16];

	if (tk_opts.time)
		printf("%-8s ", tk_time_str(buf, sizeof(buf)));
	if (env.timestamp)
		printf("%-14.6f ", tk_elapsed());
	printf("%-7u %-7u ", e->pid, e->tid);
	tk_print_safe_padded(stdout, e->comm, strnlen(e->comm, sizeof(e->comm)), 15);
	if (env.cpu)
		printf(" %-3u", e->cpu);
	/* FUNC padded only when something follows: no trailing blanks. */
	if (tk_opts.filter.cgroup_ids) {
		printf(" %-16s ", p->site.spec.name);
		tk_print_cgroup(stdout, e->cgroup_id, *msg ? TK_CGROUP_WIDTH : 0);
	} else {
		printf(*msg ? " %-16s" : " %s", p->site.spec.name);
	}
	if (*msg)
		printf(" %s", msg);
	putchar('\n');
	if (env.kstack)
		print_stack(e, e->kstack, false, NULL);
	if (env.ustack)
		print_stack(e, e->ustack, true, NULL);
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	const struct trace_hit *e = data;
	const struct probe *p;
	char msg[4096];

	(void)ctx;
	/* A stack sent by its frames, for the event after it: never an
	 * event itself, whatever -M says. */
	if (tk_stack_ring_event(data, size))
		return 0;
	if (size < offsetof(struct trace_hit, data) || e->probe >= (unsigned)nprobes)
		return 0;
	p = &probes[e->probe];
	if (size < offsetof(struct trace_hit, data) + p->data_size)
		return 0;  /* malformed: never trust sizes blindly */
	if (env.max_events && env.printed >= env.max_events)
		return 0;
	message(p, e, msg, sizeof(msg));
	if (tk_opts.json)
		print_json(p, e, msg);
	else
		print_text(p, e, msg);
	if (env.max_events && ++env.printed == env.max_events)
		tk_request_stop();
	return 0;
}

TK_SKEL_OPS(trace_bpf);

/* -K on a syscalls:* tracepoint: before Linux 6.12 (376bd59e2a04) the
 * kernel hands BPF the syscall's user-mode registers there, so no event
 * has a kernel stack, and each prints [kernel stack unavailable]. Said
 * once a probe at exit, with the tracepoint that has one: raw_syscalls'
 * pass the kernel's registers on every kernel. */
static void report_no_kstack(struct trace_bpf *skel)
{
	int ncpu = libbpf_num_possible_cpus();
	int fd = bpf_map__fd(skel->maps.trace_no_kstack);
	unsigned long long *vals;

	if (!env.kstack || ncpu <= 0)
		return;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return;
	for (int i = 0; i < nprobes; i++) {
		const struct tk_probe_spec *s = &probes[i].site.spec;
		const char *raw = NULL, *sys = NULL;
		unsigned long long n = 0;
		char filter[48] = "";
		__u32 key = i;
		long nr;

		if (s->kind != TK_PROBE_TRACEPOINT || !s->target || strcmp(s->target, "syscalls"))
			continue;
		if (bpf_map_lookup_elem(fd, &key, vals))
			continue;
		for (int c = 0; c < ncpu; c++)
			n += vals[c];
		if (!n)
			continue;
		if (!strncmp(s->name, "sys_enter_", 10))
			raw = "sys_enter", sys = s->name + 10;
		else if (!strncmp(s->name, "sys_exit_", 9))
			raw = "sys_exit", sys = s->name + 9;
		nr = sys ? tk_syscall_nr(tk_arch_native(), sys) : -1;
		if (nr >= 0)
			snprintf(filter, sizeof(filter), " (id == %ld)", nr);
		tk_warn("the kernel gave no kernel stack at syscalls:%s (%llu events): before "
			"Linux 6.12 syscalls:* tracepoints carry user-mode registers; "
			"raw_syscalls:%s%s has them", s->name, n, raw ? raw : "sys_enter", filter);
	}
	free(vals);
}

int main(int argc, char **argv)
{
	struct trace_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_event_stacks_setup(env.kstack, env.ustack, env.storage_size, DEFAULT_STORAGE);
	for (int i = 0; i < nprobes; i++)
		resolve(&probes[i]);
	tk_init();
	skel = tk_load(&trace_bpf_ops, configure, NULL);
	obj = skel->obj;
	tk_events_open(skel->obj, handle_event, NULL);
	if (!tk_opts.json) {
		if (tk_opts.time)
			printf("%-8s ", "TIME");
		if (env.timestamp)
			printf("%-14s ", "TIME(s)");
		printf("%-7s %-7s %-15s", "PID", "TID", "COMM");
		if (env.cpu)
			printf(" %-3s", "CPU");
		printf(" %-16s", "FUNC");
		if (tk_opts.filter.cgroup_ids)
			printf(" %-*s", TK_CGROUP_WIDTH, TK_CGROUP_HEADER);
		printf(" -\n");
	}
	tk_ready();
	tk_events_loop();
	tk_event_stacks_report(skel->obj);
	report_no_kstack(skel);
	trace_bpf__destroy(skel);
	tk_syms_free(syms);
	return tk_exit_status();
}
