/* capable: trace security capability checks. */
#include <bpf/libbpf.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capable.h"
#include "capable.skel.h"
#include "kfunc_or_tp.h"
#include "stacks.h"
#include "symbolize.h"
#include "tracekit.h"

static struct {
	bool non_audit;   /* -v */
	bool kstack;      /* -K */
	bool ustack;      /* -U */
	bool extra;       /* -x */
	bool unique;      /* --unique */
	unsigned storage_size;  /* --stack-storage-size */
} env;

static struct tk_syms *syms;
static struct bpf_object *obj;

enum { C_UNIQUE = 0x100, C_STORAGE };

static const struct argp_option options[] = {
	{ "non-audit", 'v', 0, 0,
	  "Include checks made not to be audited (bcc's -v; --verbose is the attach methods and libbpf's messages)", 0 },
	{ "kernel-stack", 'K', 0, 0, "Print the kernel stack of each check", 0 },
	{ "user-stack", 'U', 0, 0, "Print the user stack of each check", 0 },
	{ "stack-storage-size", C_STORAGE, "N", 0,
	  "-K/-U: distinct stacks the stack map holds (default 16384); more go to a spill map, then to userspace by their frames", 0 },
	{ "extra", 'x', 0, 0, "Extra columns: TID and INSETID", 0 },
	{ "unique", C_UNIQUE, 0, 0,
	  "Report a check once per process, capability, stacks and verdict", 0 },
	{ 0 },
};

static const char doc[] =
"Trace security capability checks (cap_capable()), with their verdict.\n"
"\v"
"bcc's columns: TIME (HH:MM:SS), UID, PID, COMM, CAP and its NAME, AUDIT (0\n"
"for a check made not to be audited: only shown with -v), then VERDICT,\n"
"allow or deny, as libbpf-tools' capable; -x adds TID after PID and INSETID\n"
"(1: a set*id call's check) last. -K and -U print the stacks under each\n"
"check, innermost first. --unique reports a check once per process,\n"
"capability, stacks and verdict (bcc's, which has no verdict). JSON adds\n"
"the result (\"ret\", 0 or -EPERM) and its \"error\".\n"
"\n"
"Probed at cap_capable() (fentry/fexit, else kprobes) where the kernel\n"
"traces kernel functions, else at the capability:cap_capable tracepoint\n"
"(Linux 6.14), which has no options: there AUDIT and INSETID are N/A and\n"
"every check is shown, -v or not. The tool's own checks are not traced.\n"
"\n"
"Examples:\n"
"  capable                # trace capability checks\n"
"  capable -v             # include non-audit checks\n"
"  capable -p 181         # only PID 181\n"
"  capable -K -U          # with kernel and user stacks\n"
"  capable -x --unique    # TID and INSETID; each check once\n"
"  capable -j -- ./setup.sh   # NDJSON, of one command\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'v': env.non_audit = true; break;
	case 'K': env.kstack = true; break;
	case 'U': env.ustack = true; break;
	case 'x': env.extra = true; break;
	case C_UNIQUE: env.unique = true; break;
	case C_STORAGE:
		env.storage_size = tk_arg_long("--stack-storage-size", arg, 1, 1 << 24);
		break;
	default: return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "capable",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "v",
};

static const char tp_blind[] =
	"a check's options: AUDIT and INSETID are N/A, and checks made not to be "
	"audited are shown without -v too";

static void print_header(void)
{
	if (tk_opts.time)
		printf("%-8s ", "TIME");
	printf("%-9s %-6s %-7s ", "TIME", "UID", "PID");
	if (env.extra)
		printf("%-7s ", "TID");
	printf("%-16s ", "COMM");
	if (tk_opts.filter.cgroup_ids)
		printf("%-*s ", TK_CGROUP_WIDTH, TK_CGROUP_HEADER);
	printf("%-4s %-20s %-6s %s\n", "CAP", "NAME", "AUDIT",
	       env.extra ? "VERDICT INSETID" : "VERDICT");
}

static const char *flag_text(int v)
{
	return v == CAP_OPT_UNKNOWN ? "N/A" : v ? "1" : "0";
}

static void print_text(const struct cap_event *e, const char *name)
{
	char buf[32];

	if (tk_opts.time)
		printf("%-8s ", tk_time_str(buf, sizeof(buf)));
	tk_time_str(buf, sizeof(buf));  /* bcc's TIME column */
	printf("%-9s %-6d %-7d ", buf, e->uid, e->pid);
	if (env.extra)
		printf("%-7d ", e->tid);
	tk_print_safe_padded(stdout, e->comm, strnlen(e->comm, sizeof(e->comm)), 16);
	putchar(' ');
	if (tk_opts.filter.cgroup_ids)
		tk_print_cgroup(stdout, e->cgroup_id, TK_CGROUP_WIDTH);
	printf("%-4d %-20s %-6s ", e->cap, name ? name : "?", flag_text(e->audit));
	if (env.extra)
		printf("%-7s %s\n", e->ret ? "deny" : "allow", flag_text(e->insetid));
	else
		printf("%s\n", e->ret ? "deny" : "allow");
	if (env.kstack)
		tk_event_stack(syms, obj, e->kstack, false, e->pid, true, NULL);
	if (env.ustack)
		tk_event_stack(syms, obj, e->ustack, true, e->pid, false, NULL);
}

static void json_flag(struct tk_json *j, const char *key, int v)
{
	if (v == CAP_OPT_UNKNOWN)
		tk_json_null(j, key);
	else
		tk_json_bool(j, key, v);
}

static void print_json(const struct cap_event *e, const char *name)
{
	struct tk_json j;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "cap");
	tk_json_time(&j);
	tk_json_task(&j, e->pid, e->tid, e->uid, e->comm, sizeof(e->comm), e->cgroup_id);
	tk_json_int(&j, "cap", e->cap);
	tk_json_name(&j, "name", name);
	json_flag(&j, "audit", e->audit);
	json_flag(&j, "insetid", e->insetid);
	tk_json_str(&j, "verdict", e->ret ? "deny" : "allow");
	tk_json_int(&j, "ret", e->ret);
	tk_json_error(&j, e->ret);
	if (env.kstack)
		tk_event_stack(syms, obj, e->kstack, false, e->pid, true, &j);
	if (env.ustack)
		tk_event_stack(syms, obj, e->ustack, true, e->pid, false, &j);
	tk_json_end(&j);
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	const struct cap_event *e = data;
	const char *name;

	(void)ctx;
	/* A stack sent by its frames, for the check after it. */
	if (tk_stack_ring_event(data, size))
		return 0;
	if (size < sizeof(*e))
		return 0;  /* malformed */
	name = tk_cap_name(e->cap);
	if (tk_opts.json)
		print_json(e, name);
	else
		print_text(e, name);
	return 0;
}

static int configure(void *s, void *ctx)
{
	struct capable_bpf *skel = s;

	(void)ctx;
	skel->rodata->non_audit = env.non_audit;
	skel->rodata->kstack = env.kstack;
	skel->rodata->ustack = env.ustack;
	skel->rodata->unique = env.unique;
	skel->rodata->self_tgid = getpid();
	if (!env.unique)
		bpf_map__set_max_entries(skel->maps.seen, 1);
	return tk_event_stacks_configure(skel->obj);
}

TK_SKEL_OPS(capable_bpf);

int main(int argc, char **argv)
{
	static enum tk_way way;
	struct capable_bpf *skel;

	tk_parse_args(&tool, argc, argv);
	tk_event_stacks_setup(env.kstack, env.ustack, env.storage_size, CAPABLE_STACKS);
	tk_init();
	if ((env.kstack || env.ustack) && !(syms = tk_syms_new(&(struct tk_syms_opts){ 0 })))
		tk_fail("out of memory");
	skel = tk_load_kfunc_or_named_tp(&capable_bpf_ops, configure, NULL, &way,
					 "tracepoints (capability:cap_capable)", tp_blind);
	obj = skel->obj;
	tk_events_open(skel->obj, handle_event, NULL);
	if (!tk_opts.json)
		print_header();
	tk_ready();
	tk_events_loop();
	tk_event_stacks_report(skel->obj);
	capable_bpf__destroy(skel);
	tk_syms_free(syms);
	return tk_exit_status();
}
