/* tk_load: open, load and attach a tool's BPF object, choosing each
 * probe's attach method by trying (see bpf.h for the chains). */
#include "bpf.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "events.h"
#include "filter.h"
#include "kbtf.h"
#include "funcmatch.h"
#include "modbtf.h"
#include "multiattach.h"
#include "perfevent.h"
#include "json.h"
#include "opts.h"
#include "setup.h"
#include "tk_features.h"

#ifndef ENOTSUPP
#define ENOTSUPP 524  /* the kernel's internal "not supported" */
#endif

enum chain { CH_TP, CH_KFUNC, CH_UFUNC, N_CHAINS };

struct method {
	const char *name;   /* also the program name suffix */
	int chain;          /* enum chain */
	int rank;           /* 0 is the best of its chain */
	bool ret;           /* a return probe */
	bool multi;         /* one link for many functions */
	bool session;       /* entry and return in one program (6.13) */
};

/* A probe of one function uses fentry, else kprobe (uprobe); a probe of
 * several (tk_set_target_multi) one multi-link, else one kprobe (uprobe)
 * per function: fentry takes one function per program. */
static const struct method methods[] = {
	{ "tp_btf", CH_TP, 0, false, false, false },
	{ "raw_tp", CH_TP, 1, false, false, false },
	{ "tp", CH_TP, 2, false, false, false },
	{ "fentry", CH_KFUNC, 0, false, false, false },
	{ "fexit", CH_KFUNC, 0, true, false, false },
	{ "kprobe_multi", CH_KFUNC, 1, false, true, false },
	{ "kretprobe_multi", CH_KFUNC, 1, true, true, false },
	{ "kprobe", CH_KFUNC, 2, false, false, false },
	{ "kretprobe", CH_KFUNC, 2, true, false, false },
	{ "uprobe_multi", CH_UFUNC, 0, false, true, false },
	{ "uretprobe_multi", CH_UFUNC, 0, true, true, false },
	/* A family has one of uprobe_multi and uprobe_session: its
	 * fallback is a uprobe program for the entry and a uretprobe
	 * family of the tool's own for the returns (memleak). */
	{ "uprobe_session", CH_UFUNC, 0, false, true, true },
	{ "uprobe", CH_UFUNC, 1, false, false, false },
	{ "uretprobe", CH_UFUNC, 1, true, false, false },
	/* A USDT probe: user code too, but no fallback (tk_set_target_usdt). */
	{ "usdt", CH_UFUNC, 2, false, false, false },
};
/* The rank of the multi-link method in each chain (-1: none). */
static const int multi_rank[] = { -1, 1, 0 };
#define N_METHODS ((int)(sizeof(methods) / sizeof(methods[0])))
#define MAX_RANKS 3


#define MAX_FAMILIES 64  /* trace: 8 probe slots of 5 families each */
#define MAX_TARGETS 16  /* fsslower: 5 functions, entry and return */
#define MAX_LINKS 4096  /* perf events: one per CPU */

struct family {
	char name[64];
	unsigned avail[N_CHAINS];  /* bit r: a program of rank r exists */
	int chain;
	int floor;                 /* the best rank still allowed */
	bool session;              /* its multi-link program is a session */
	int chosen;                /* rank of this attempt */
	const struct target *target;
	char why[480];             /* what each method tried ran into */
	char fix[160];             /* what would make one of them work */
};

struct target {
	const char *family, *binary, *func;
	pid_t pid;
	const char *tp_category;   /* a tracepoint target: category:func */
	const struct tk_func_list *funcs;  /* several functions (func: label) */
	const char *usdt_provider; /* a USDT target: provider:func */
};

static struct family families[MAX_FAMILIES];
static int n_families;
static struct target targets[MAX_TARGETS];
static int n_targets;
static int forced_rank[N_CHAINS];
static struct bpf_link *links[MAX_LINKS];
static struct bpf_object *link_objs[MAX_LINKS];  /* whose link each is */
static int n_links;
static struct bpf_object *loading;  /* the object tk_load is attaching */
static void *loading_skel;          /* and its skeleton, while open */
static int link_fds[MAX_LINKS];  /* a link libbpf cannot wrap, else -1 */
static char failed_prog[64];  /* named by the last libbpf warning */
static const char *failed_func;  /* of a multi target, the one refused */

/* The slot of family's target: its own when it has one (a later target
 * replaces it: a daemon loading one object per target, as tracekitd's fs
 * collector), else a new one. */
static struct target *target_slot(const char *family)
{
	int i;

	for (i = 0; i < n_targets; i++)
		if (!strcmp(targets[i].family, family))
			return &targets[i];
	if (n_targets == MAX_TARGETS)
		tk_fail("too many probe targets (at most %d)", MAX_TARGETS);
	return &targets[n_targets++];
}

void tk_set_target(const char *family, const char *binary, const char *func,
		   pid_t pid)
{
	*target_slot(family) = (struct target){ family, binary, func, pid, NULL,
						NULL, NULL };
}

void tk_set_target_multi(const char *family, const struct tk_func_list *funcs,
			 const char *label, pid_t pid)
{
	*target_slot(family) = (struct target){
		family, funcs->binary[0] ? funcs->binary : NULL, label, pid,
		NULL, funcs, NULL };
}

void tk_set_target_usdt(const char *family, const char *binary, const char *provider,
			const char *name, pid_t pid)
{
	*target_slot(family) = (struct target){ family, binary, name, pid, NULL, NULL,
						provider };
}

void tk_set_target_tp(const char *family, const char *category,
		      const char *name)
{
	*target_slot(family) = (struct target){ family, NULL, name, -1, category,
						NULL, NULL };
}

void tk_set_target_tps(const char *family, const struct tk_func_list *tps,
		       const char *label)
{
	*target_slot(family) = (struct target){ family, NULL, label, -1, "",
						tps, NULL };
}

void tk_bpf_note_libbpf_warning(const char *msg)
{
	const char *p = strstr(msg, "prog '"), *q;

	if (!p || failed_prog[0])
		return;
	p += 6;
	q = strchr(p, '\'');
	if (q && (size_t)(q - p) < sizeof(failed_prog)) {
		memcpy(failed_prog, p, q - p);
		failed_prog[q - p] = 0;
	}
}

/* The method a program name ends in (the longest suffix: "x_raw_tp"
 * also ends in "_tp"), and the length of the family name before it. */
static int method_of(const char *name, size_t *prefix_len)
{
	size_t len = strlen(name), best_len = 0;
	int m, best = -1;

	for (m = 0; m < N_METHODS; m++) {
		size_t sl = strlen(methods[m].name);

		if (len > sl + 1 && name[len - sl - 1] == '_' &&
		    !strcmp(name + len - sl, methods[m].name) && sl > best_len) {
			best = m;
			best_len = sl;
		}
	}
	if (best >= 0)
		*prefix_len = len - best_len - 1;
	return best;
}

static struct family *find_family(const char *name, int *method)
{
	size_t plen;
	int i;

	*method = method_of(name, &plen);
	if (*method < 0)
		return NULL;
	for (i = 0; i < n_families; i++)
		if (strlen(families[i].name) == plen &&
		    !strncmp(families[i].name, name, plen))
			return &families[i];
	return NULL;
}

static struct family *add_family(const char *name)
{
	struct family *f;
	size_t plen;
	int m = method_of(name, &plen), i;

	if (m < 0 || (f = find_family(name, &m)))
		return m < 0 ? NULL : f;
	if (n_families == MAX_FAMILIES || plen >= sizeof(f->name))
		tk_fail("BPF object has too many probes or too long a name: %s", name);
	f = &families[n_families++];
	memset(f, 0, sizeof(*f));
	memcpy(f->name, name, plen);
	for (i = 0; i < n_targets; i++)
		if (!strcmp(targets[i].family, f->name))
			f->target = &targets[i];
	return f;
}

static int highest_rank(unsigned avail)
{
	int r = MAX_RANKS - 1;

	while (r > 0 && !(avail & (1u << r)))
		r--;
	return r;
}

/* A family of one function does not use the multi-link; one of several
 * cannot use fentry, and uses the multi-link only where the kernel has
 * it (probed: tk_kprobe_multi_supported and tk_uprobe_multi_supported). */
static void exclude_methods(struct family *f)
{
	const struct target *t = f->target;
	int mr = multi_rank[f->chain];
	bool multi_ok;

	if (t && t->tp_category && t->funcs) {
		/* tp_btf takes one target per program, and raw_tp links
		 * carry no cookie (before 6.10): the classic tracepoint. */
		f->avail[CH_TP] &= ~3u;
		return;
	}
	if (t && t->tp_category && !strcmp(t->tp_category, "syscalls")) {
		/* syscalls:sys_enter_NAME and sys_exit_NAME are trace events
		 * made from raw_syscalls' two tracepoints, not tracepoints of
		 * their own: tp_btf and raw_tp cannot attach to them, and
		 * trying each first cost a failed load (bench-trace:
		 * funccount on one took 38 ms to attach, on 30 took 17). */
		f->avail[CH_TP] &= ~3u;
		return;
	}
	if (mr < 0 || (t && t->tp_category))
		return;
	if (!t || !t->funcs) {
		f->avail[f->chain] &= ~(1u << mr);
		return;
	}
	if (f->chain == CH_KFUNC)
		f->avail[f->chain] &= ~1u;
	multi_ok = f->chain == CH_KFUNC ? tk_kprobe_multi_supported() :
		   f->session ? tk_uprobe_session_supported()
			      : tk_uprobe_multi_supported();
	if (!multi_ok && (f->avail[f->chain] & (1u << mr))) {
		f->avail[f->chain] &= ~(1u << mr);
		tk_info("no %s in this kernel: probe %s attaches one %s per function",
			f->chain == CH_KFUNC ? "kprobe.multi" :
			f->session ? "uprobe.session" : "uprobe.multi",
			f->name, f->chain == CH_KFUNC ? "kprobe" : "uprobe");
	}
}

/* First open: learn the families, their chain and where each starts. */
static void scan_families(struct bpf_object *obj)
{
	struct bpf_program *prog;
	int i, m;

	n_families = 0;
	bpf_object__for_each_program(prog, obj) {
		struct family *f = add_family(bpf_program__name(prog));

		if (f) {
			find_family(bpf_program__name(prog), &m);
			f->avail[methods[m].chain] |= 1u << methods[m].rank;
			f->session |= methods[m].session;
		}
	}
	for (i = 0; i < n_families; i++) {
		struct family *f = &families[i];

		if (f->target)
			f->chain = f->target->tp_category ? CH_TP :
				   f->target->binary ? CH_UFUNC : CH_KFUNC;
		else
			for (f->chain = 0; f->chain < N_CHAINS - 1 &&
			     !f->avail[f->chain]; f->chain++)
				;
		exclude_methods(f);
		if (!f->avail[f->chain])
			tk_fail("probe %s has no %s program", f->name,
				f->chain == CH_UFUNC ? "uprobe" :
				f->chain == CH_TP ? "tracepoint" : "kernel function");
		/* A forced start below every method the probe has: use its
		 * last one, so every tool runs under every TRACEKIT_ATTACH. */
		f->floor = forced_rank[f->chain];
		if (f->floor > highest_rank(f->avail[f->chain]))
			f->floor = highest_rank(f->avail[f->chain]);
	}
}

static bool choose(void)
{
	int i;

	for (i = 0; i < n_families; i++) {
		struct family *f = &families[i];

		for (f->chosen = f->floor; f->chosen < MAX_RANKS; f->chosen++)
			if (f->avail[f->chain] & (1u << f->chosen))
				break;
		if (f->chosen == MAX_RANKS)
			return false;
	}
	return true;
}

/* ---- BTF targets in kernel modules ----
 * A program of SEC("fentry"), SEC("fexit") or SEC("tp_btf") gets its
 * target at run time (apply_choice). Where that is in a module, libbpf
 * 1.1's look-up costs a scan of all the kernel's types per module loaded
 * before it, for each program (modbtf.h); tracekit finds it instead, and
 * its handlers of these three sections, which stand in for libbpf's,
 * give the load the module's BTF object and the type. */
struct module_target {
	const struct bpf_program *prog;
	int btf_fd, type_id;
};

static struct module_target module_targets[MAX_FAMILIES];
static int n_module_targets;

static int btf_target_prepare(struct bpf_program *prog, struct bpf_prog_load_opts *opts,
			      long cookie)
{
	int i;

	(void)cookie;
	for (i = 0; i < n_module_targets; i++)
		if (module_targets[i].prog == prog) {
			opts->attach_btf_obj_fd = module_targets[i].btf_fd;
			opts->attach_btf_id = module_targets[i].type_id;
			return 0;
		}
	/* As libbpf's own handler: nothing to verify against. */
	return opts->attach_btf_id ? 0 : -EINVAL;
}

static int btf_target_attach(const struct bpf_program *prog, long cookie,
			     struct bpf_link **link)
{
	(void)cookie;
	*link = bpf_program__attach_trace(prog);
	return *link ? 0 : -errno;
}

/* Once, before any object is opened: a handler is chosen at open. If
 * libbpf refuses, its own handlers stay, and only the look-up is slower. */
static void register_btf_target_handlers(void)
{
	static const struct { const char *sec; enum bpf_attach_type type; } secs[] = {
		{ "fentry", BPF_TRACE_FENTRY }, { "fexit", BPF_TRACE_FEXIT },
		{ "tp_btf", BPF_TRACE_RAW_TP },
	};
	LIBBPF_OPTS(libbpf_prog_handler_opts, opts,
		    .prog_prepare_load_fn = btf_target_prepare,
		    .prog_attach_fn = btf_target_attach);
	static bool done;
	size_t i;

	if (done)
		return;
	done = true;
	for (i = 0; i < sizeof(secs) / sizeof(secs[0]); i++)
		libbpf_register_prog_handler(secs[i].sec, BPF_PROG_TYPE_TRACING, secs[i].type,
					     &opts);
}

/* Point prog, of probe family, at kernel function (or, for tp_btf,
 * tracepoint) func. */
static int set_btf_target(struct bpf_program *prog, const char *family, const char *func,
			  bool tracepoint)
{
	const char *sec = bpf_program__section_name(prog), *module;
	int kind = tracepoint ? BTF_KIND_TYPEDEF : BTF_KIND_FUNC, fd, id;
	const struct btf *base;
	char name[192];

	if ((strcmp(sec, "fentry") && strcmp(sec, "fexit") && strcmp(sec, "tp_btf")) ||
	    tk_opts.btf_path || !tk_module_btfs_present() ||
	    n_module_targets == MAX_FAMILIES)
		return bpf_program__set_attach_target(prog, 0, func);
	snprintf(name, sizeof(name), "%s%s", tracepoint ? "btf_trace_" : "", func);
	base = tk_kernel_btf();
	if (!base || btf__find_by_name_kind(base, name, kind) > 0 ||
	    tk_module_btf_find(base, name, kind, &fd, &id, &module))
		return bpf_program__set_attach_target(prog, 0, func);  /* vmlinux's, or none */
	module_targets[n_module_targets++] = (struct module_target){ prog, fd, id };
	tk_info("probe %s: %s %s: in module %s's BTF", family, sec, func, module);
	return 0;
}

/* Autoload only the chosen method of each family, pointed at its target.
 * On failure *failed is the program whose target the kernel lacks. */
static int apply_choice(struct bpf_object *obj, struct bpf_program **failed)
{
	struct bpf_program *prog;
	int m, err = 0;

	n_module_targets = 0;
	tk_module_btf_forget();   /* the modules of the last load: list them again */
	bpf_object__for_each_program(prog, obj) {
		*failed = prog;
		struct family *f = find_family(bpf_program__name(prog), &m);

		if (!f)
			continue;
		if (methods[m].chain != f->chain || methods[m].rank != f->chosen) {
			bpf_program__set_autoload(prog, false);
			continue;
		}
		if (methods[m].multi && f->chain == CH_UFUNC)
			bpf_program__set_expected_attach_type(prog,
				(enum bpf_attach_type)(methods[m].session ?
					TK_TRACE_UPROBE_SESSION : TK_TRACE_UPROBE_MULTI));
		if (f->target && f->chain != CH_UFUNC && methods[m].rank == 0) {
			err = set_btf_target(prog, f->name, f->target->func, f->chain == CH_TP);
			if (err)
				break;
		}
	}
	tk_kernel_btf_release();   /* not beside libbpf's copy while it loads */
	return err;
}

static const struct method *prog_method(const struct bpf_program *prog,
					struct family **fp)
{
	struct family *f;
	int m;

	f = find_family(bpf_program__name(prog), &m);
	if (fp)
		*fp = f;
	return m >= 0 ? &methods[m] : NULL;
}

const char *tk_prog_method(const struct bpf_program *prog)
{
	const struct method *m = prog_method(prog, NULL);
	const char *sec = bpf_program__section_name(prog);
	static const struct { const char *prefix, *method; } by_section[] = {
		{ "tracepoint/", "tp" }, { "tp/", "tp" },
		{ "raw_tracepoint/", "raw_tp" }, { "raw_tp/", "raw_tp" },
		{ "tp_btf/", "tp_btf" }, { "fentry/", "fentry" },
		{ "fexit/", "fexit" }, { "kprobe/", "kprobe" },
		{ "kretprobe/", "kretprobe" }, { "uprobe", "uprobe" },
		{ "uretprobe", "uretprobe" }, { "perf_event", "perf_event" },
	};
	size_t i;

	if (m)
		return m->name;
	for (i = 0; i < sizeof(by_section) / sizeof(by_section[0]); i++)
		if (!strncmp(sec, by_section[i].prefix, strlen(by_section[i].prefix)))
			return by_section[i].method;
	return sec;
}

/* What a probe attaches to, for messages: "sched/sched_switch",
 * "vfs_read", "/usr/bin/bash:readline". */
static void prog_target(const struct bpf_program *prog, char *buf, size_t size)
{
	struct family *f;
	const char *sec = bpf_program__section_name(prog), *slash;

	prog_method(prog, &f);
	if (f && f->target && f->target->funcs)
		snprintf(buf, size, "%s%s%s (%zu %s)",
			 f->target->binary ? f->target->binary : "",
			 f->target->binary ? ":" : "", f->target->func,
			 f->target->funcs->n,
			 f->target->tp_category ? "tracepoints" : "functions");
	else if (f && f->target && f->target->usdt_provider)
		snprintf(buf, size, "%s:%s:%s", f->target->binary, f->target->usdt_provider,
			 f->target->func);
	else if (f && f->target && f->target->binary)
		snprintf(buf, size, "%s:%s", f->target->binary, f->target->func);
	else if (f && f->target && f->target->tp_category)
		snprintf(buf, size, "%s/%s", f->target->tp_category, f->target->func);
	else if (!strncmp(sec, "perf_event", 10))
		tk_perf_event_describe_prog(prog, buf, size);
	else if (f && f->target)
		snprintf(buf, size, "%s", f->target->func);
	else if ((slash = strchr(sec, '/')))
		snprintf(buf, size, "%s", slash + 1);
	else
		snprintf(buf, size, "%s", sec);
}

static const char *probe_name(const struct bpf_program *prog)
{
	struct family *f;

	prog_method(prog, &f);
	return f ? f->name : bpf_program__name(prog);
}

static bool kprobes_available(void)
{
	if (access("/sys/bus/event_source/devices/kprobe/type", F_OK) == 0)
		return true;
	/* Before the kprobe PMU (4.17) libbpf uses tracefs' kprobe_events. */
	return tk_ensure_tracefs() == 0 &&
	       (access("/sys/kernel/tracing/kprobe_events", F_OK) == 0 ||
		access("/sys/kernel/debug/tracing/kprobe_events", F_OK) == 0);
}

static void append(char *buf, size_t size, const char *sep, const char *s)
{
	size_t len = strlen(buf);

	if (strstr(buf, s))
		return;  /* said already */
	snprintf(buf + len, size - len, "%s%s", len ? sep : "", s);
}

/* Record why method m failed for f (at load or attach) and what fixes it.
 * Returns true when the cause is the kernel's, not this probe's, so the
 * same method will fail for every other probe too. */
/* What would let fentry work, from the kernel's configuration when it
 * says; NULL when the configuration has what fentry needs (then
 * something else, a security module or the hypervisor, blocks it). */
static const char *fentry_fix(void)
{
	if (tk_kconfig("CONFIG_FUNCTION_TRACER") == 'y' &&
	    tk_kconfig("CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS") == 'y')
		return NULL;
	return "CONFIG_FUNCTION_TRACER=y and CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS=y for fentry";
}

/* Record why method m failed for f (at load or attach) and what fixes it.
 * Returns true when the cause is the kernel's, not this probe's, so the
 * same method will fail for every other probe too. EACCES at load is the
 * verifier rejecting this program: a fault of the program on this kernel,
 * which the next method may not share. */
static bool note_failure(struct family *f, const struct method *m,
			 bool at_load, int err, const char *target)
{
	char why[300], fix[120] = "";
	bool kernel_wide = false, verifier = at_load && err == -EACCES;

	if (verifier) {
		snprintf(why, sizeof(why), "%s rejected by the verifier (run with -v for its log)",
			 m->name);
	} else if (m->multi) {
		/* Probed before: the kernel has it, and refused these. */
		snprintf(why, sizeof(why), "%s %s: %s", m->name, target,
			 strerror(-err));
	} else if (m->chain == CH_KFUNC && m->rank == 0 &&
		   (err == -ESRCH || err == -ENOENT)) {
		snprintf(why, sizeof(why), "%s: %s has no BTF entry (not a kernel function?)",
			 m->name, target);
	} else if (m->chain == CH_KFUNC && m->rank == 0 && !at_load) {
		/* Loaded, so trampolines work: this function cannot take
		 * one (notrace, EBUSY for one ftrace already owns, ...). */
		snprintf(why, sizeof(why), "%s: %s cannot be attached (%s)",
			 m->name, target, strerror(-err));
	} else if (m->chain == CH_KFUNC && m->rank == 0) {
		const char *f_fix = fentry_fix();

		snprintf(why, sizeof(why), "%s refused by this kernel (%s)%s",
			 m->name, strerror(-err),
			 f_fix ? "" : " although it has CONFIG_FUNCTION_TRACER and CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS: a security module or the hypervisor forbids BPF trampolines");
		if (f_fix)
			snprintf(fix, sizeof(fix), "%s", f_fix);
		kernel_wide = true;
	} else if (m->chain == CH_KFUNC && !at_load && !kprobes_available()) {
		snprintf(why, sizeof(why), "no kprobes in this kernel (%s)",
			 tk_kconfig("CONFIG_KPROBES") == 'n' ? "CONFIG_KPROBES is not set"
				: "no kprobe PMU and no kprobe_events in tracefs");
		snprintf(fix, sizeof(fix), "CONFIG_KPROBES=y for kprobes");
		kernel_wide = true;
	} else if (f->target && f->target->funcs && !at_load && failed_func) {
		/* One probe per function: say which one the kernel refused. */
		snprintf(why, sizeof(why), "%s: %s refused (%s)%s", m->name,
			 failed_func, strerror(-err),
			 m->chain == CH_KFUNC && (err == -ENOENT || err == -EINVAL) ?
			 "; leave it out of the pattern" : "");
	} else if (m->chain == CH_KFUNC && !at_load &&
		   (err == -ENOENT || err == -EINVAL)) {
		snprintf(why, sizeof(why), "%s: %s is not a traceable kernel function (see /proc/kallsyms, available_filter_functions)",
			 m->name, target);
	} else if (m->chain == CH_TP && !at_load && err == -ENOENT) {
		snprintf(why, sizeof(why), "%s: no tracepoint %s in this kernel",
			 m->name, target);
	} else if (m->chain == CH_TP && f->target && (err == -ENOENT || err == -ESRCH)) {
		snprintf(why, sizeof(why), "%s: no tracepoint %s in this kernel%s",
			 m->name, target, m->rank == 0 ? "'s BTF" : "");
	} else if (m->chain == CH_TP) {
		snprintf(why, sizeof(why), "%s %s by this kernel (%s)", m->name,
			 at_load ? "refused" : "not attachable", strerror(-err));
		kernel_wide = at_load && err != -ESRCH;
	} else {
		snprintf(why, sizeof(why), "%s %s: %s", m->name, target,
			 strerror(-err));
	}
	append(f->why, sizeof(f->why), "; ", why);
	if (*fix)
		append(f->fix, sizeof(f->fix), ", or ", fix);
	return kernel_wide;
}

static void fail_family(const struct family *f, const char *target)
{
	const char *what = f->chain == CH_KFUNC ? "kernel function " :
			   f->chain == CH_UFUNC ? "user function " : "tracepoint ";

	if (*f->fix)
		tk_fail("cannot trace %s%s: %s; use a kernel with %s", what,
			target, f->why, f->fix);
	tk_fail("cannot trace %s%s: %s", what, target, f->why);
}

/* Move f (and, for a kernel-wide cause, every probe at the same method)
 * to its next method; exits when f has none left. */
static void demote(struct family *f, const struct method *m, bool at_load,
		   int err, const char *target)
{
	bool kernel_wide = note_failure(f, m, at_load, err, target);
	int i, chain = f->chain, rank = f->chosen;

	if (at_load || !kernel_wide)
		tk_info("probe %s: %s failed (%s); trying the next method",
			f->name, m->name, strerror(-err));
	for (i = 0; i < n_families; i++) {
		struct family *g = &families[i];

		if (g != f && !(kernel_wide && g->chain == chain && g->chosen == rank))
			continue;
		if (g != f)
			note_failure(g, m, at_load, err, target);
		g->floor = rank + 1;
		while (g->floor < MAX_RANKS && !(g->avail[chain] & (1u << g->floor)))
			g->floor++;
	}
	if (f->floor >= MAX_RANKS)
		fail_family(f, target);
}

static void explain_load_failure(int err)
{
	if ((err == -EPERM || err == -EACCES) && geteuid() != 0)
		tk_fail("cannot load BPF programs: %s; run as root (or with CAP_BPF and CAP_PERFMON)",
			strerror(-err));
	if (!tk_opts.btf_path && access("/sys/kernel/btf/vmlinux", R_OK))
		tk_fail("kernel BTF is missing (/sys/kernel/btf/vmlinux): use a kernel built with CONFIG_DEBUG_INFO_BTF=y, or pass --btf FILE");
	tk_fail("cannot load BPF programs: %s%s", strerror(-err),
		tk_opts.verbose ? "" : "; run with -v for the verifier's log");
}

static struct bpf_link *attach_prog(struct bpf_program *prog)
{
	struct family *f;
	const struct method *m = prog_method(prog, &f);
	const struct target *t = f ? f->target : NULL;

	if (t && t->usdt_provider)
		return bpf_program__attach_usdt(prog, t->pid, t->binary, t->usdt_provider,
						t->func, NULL);
	if (!t || !m || (m->rank == 0 && m->chain != CH_UFUNC))
		return bpf_program__attach(prog);
	if (m->chain == CH_TP && m->rank == 1)
		return bpf_program__attach_raw_tracepoint(prog, t->func);
	if (m->chain == CH_TP)
		return bpf_program__attach_tracepoint(prog, t->tp_category, t->func);
	if (m->chain == CH_KFUNC)
		return bpf_program__attach_kprobe(prog, m->ret, t->func);
	{
		LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = t->func,
			    .retprobe = m->ret);

		return bpf_program__attach_uprobe_opts(prog, t->pid, t->binary,
						       0, &uo);
	}
}

static void add_link(struct bpf_link *link);
static void add_link_fd(int fd);

/* A target of several functions: one multi-link, cookie i for function
 * i; or one link per function, with that cookie when the kernel has
 * cookies. 0 or -errno (failed_func: the function refused). */
static int attach_multi(struct bpf_program *prog, const struct method *m,
			const struct target *t)
{
	const struct tk_func_list *l = t->funcs;
	bool cookies = tk_attach_cookies();
	uint64_t *ids = calloc(l->n, sizeof(*ids)), *offs = NULL;
	const char **syms = NULL;
	int err = 0, fd;
	size_t i;

	if (!ids)
		return -ENOMEM;
	for (i = 0; i < l->n; i++)
		ids[i] = i;
	if (m->multi && m->chain == CH_KFUNC) {
		LIBBPF_OPTS(bpf_kprobe_multi_opts, ko, .cnt = l->n,
			    .cookies = (const __u64 *)ids, .retprobe = m->ret);
		struct bpf_link *link;

		syms = calloc(l->n, sizeof(*syms));
		for (i = 0; syms && i < l->n; i++)
			syms[i] = l->v[i].name;
		ko.syms = syms;
		link = syms ? bpf_program__attach_kprobe_multi_opts(prog, NULL, &ko)
			    : NULL;
		if (!link)
			err = -errno;
		else
			add_link(link);
	} else if (m->multi) {
		offs = calloc(l->n, sizeof(*offs));
		for (i = 0; offs && i < l->n; i++)
			offs[i] = l->v[i].addr;
		fd = !offs ? -ENOMEM :
		     m->session ? tk_uprobe_session_link(prog, l->binary, offs, ids,
							 l->n, t->pid)
				: tk_uprobe_multi_link(prog, l->binary, offs, ids, l->n,
						       t->pid, m->ret);
		if (fd < 0)
			err = fd;
		else
			add_link_fd(fd);
	} else {
		tk_raise_nofile();
		for (i = 0; !err && i < l->n; i++) {
			struct bpf_link *link;

			if (m->chain == CH_TP) {
				LIBBPF_OPTS(bpf_tracepoint_opts, to,
					    .bpf_cookie = cookies ? i : 0);
				char cat[256];
				const char *colon = strchr(l->v[i].name, ':');

				snprintf(cat, sizeof(cat), "%.*s",
					 (int)(colon - l->v[i].name), l->v[i].name);
				link = bpf_program__attach_tracepoint_opts(prog,
						cat, colon + 1, &to);
			} else if (m->chain == CH_KFUNC) {
				LIBBPF_OPTS(bpf_kprobe_opts, ko, .retprobe = m->ret,
					    .bpf_cookie = cookies ? i : 0);

				link = bpf_program__attach_kprobe_opts(prog,
						l->v[i].name, &ko);
			} else {
				LIBBPF_OPTS(bpf_uprobe_opts, uo, .retprobe = m->ret,
					    .bpf_cookie = cookies ? i : 0);

				link = bpf_program__attach_uprobe_opts(prog, t->pid,
						l->binary, l->v[i].addr, &uo);
			}
			if (!link) {
				err = -errno;
				failed_func = l->v[i].name;
			} else {
				add_link(link);
			}
		}
	}
	free(ids);
	free(offs);
	free(syms);
	return err;
}

/* Attach prog to its target: 0 or -errno. */
static int attach_links(struct bpf_program *prog)
{
	struct family *f;
	const struct method *m = prog_method(prog, &f);
	struct bpf_link *link;

	if (f && m && f->target && f->target->funcs)
		return attach_multi(prog, m, f->target);
	link = attach_prog(prog);
	if (!link)
		return -errno;
	add_link(link);
	return 0;
}

static void link_close(int i)
{
	if (links[i])
		bpf_link__destroy(links[i]);
	else
		close(link_fds[i]);
}

void tk_detach(void)
{
	while (n_links > 0)
		link_close(--n_links);
}

void tk_detach_object(struct bpf_object *obj)
{
	int i, kept = 0;

	for (i = 0; i < n_links; i++) {
		if (link_objs[i] == obj) {
			link_close(i);
			continue;
		}
		links[kept] = links[i];
		link_fds[kept] = link_fds[i];
		link_objs[kept++] = link_objs[i];
	}
	n_links = kept;
}

static bool is_tracepoint(const char *sec)
{
	return !strncmp(sec, "tracepoint", 10) ||
	       !strcmp(sec, "tp") || !strncmp(sec, "tp/", 3);
}

static void add_link(struct bpf_link *link)
{
	if (n_links == MAX_LINKS)
		tk_fail("too many probes (at most %d)", MAX_LINKS);
	link_objs[n_links] = loading;
	link_fds[n_links] = -1;
	links[n_links++] = link;
}

static void add_link_fd(int fd)
{
	if (n_links == MAX_LINKS)
		tk_fail("too many probes (at most %d)", MAX_LINKS);
	link_objs[n_links] = loading;
	link_fds[n_links] = fd;
	links[n_links++] = NULL;
}

/* Attach every loaded program. 0, or -errno with *failed set to the
 * program that failed. */
static int attach_all(struct bpf_object *obj, struct bpf_program **failed)
{
	struct bpf_program *prog;
	int err;

	bpf_object__for_each_program(prog, obj) {
		const char *sec = bpf_program__section_name(prog);

		if (!bpf_program__autoload(prog))
			continue;
		if (is_tracepoint(sec) && (err = tk_ensure_tracefs()))
			tk_fail("tracefs is not mounted and mounting it failed (%s): mount -t tracefs nodev /sys/kernel/tracing",
				strerror(-err));
		if (!strncmp(sec, "perf_event", 10)) {
			/* One link per CPU; failures end the tool. */
			tk_perf_event_attach(prog, add_link);
			continue;
		}
		err = attach_links(prog);
		if (err) {
			*failed = prog;
			return err;
		}
	}
	return 0;
}

static const char *attach_hint(const char *sec, int err)
{
	if (is_tracepoint(sec) && err == -ENOENT)
		return "; this kernel lacks that tracepoint (CONFIG_FTRACE_SYSCALLS for syscalls/*)";
	return "";
}

static void report_methods(struct bpf_object *obj)
{
	struct bpf_program *prog;
	struct bpf_map *ev;
	struct tk_json j;
	const char *transport = tk_events_transport_id();
	char target[256];

	if (!tk_opts.verbose && !tk_opts.dry_run)
		return;
	ev = bpf_object__find_map_by_name(obj, "tk_events");
	if (!ev || !bpf_map__autocreate(ev))  /* none, or off in this mode */
		transport = NULL;
	bpf_object__for_each_program(prog, obj) {
		if (!bpf_program__autoload(prog))
			continue;
		prog_target(prog, target, sizeof(target));
		tk_info("probe %s: %s %s", probe_name(prog),
			tk_prog_method(prog), target);
		if (!tk_opts.dry_run)
			continue;
		if (!tk_opts.json) {
			printf("probe %s %s %s\n", probe_name(prog),
			       tk_prog_method(prog), target);
			continue;
		}
		tk_json_begin(&j, stdout);
		tk_json_str(&j, "type", "probe");
		tk_json_str(&j, "probe", probe_name(prog));
		tk_json_str(&j, "program", bpf_program__name(prog));
		tk_json_str(&j, "method", tk_prog_method(prog));
		tk_json_str(&j, "target", target);
		tk_json_end(&j);
	}
	if (transport) {
		tk_info("event transport: %s", tk_events_transport_name());
		if (tk_opts.dry_run && tk_opts.json) {
			tk_json_begin(&j, stdout);
			tk_json_str(&j, "type", "transport");
			tk_json_str(&j, "transport", transport);
			tk_json_end(&j);
		} else if (tk_opts.dry_run) {
			printf("transport %s\n", transport);
		}
	}
}

static void parse_forced(void)
{
	const char *env = getenv("TRACEKIT_ATTACH");
	char *copy, *tok, *save = NULL;
	int m;

	if (!env || !*env)
		return;
	copy = strdup(env);
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (m = 0; m < N_METHODS; m++)
			if (!strcmp(tok, methods[m].name))
				break;
		if (m == N_METHODS)
			tk_fail("TRACEKIT_ATTACH=%s: unknown attach method '%s' (tp_btf, raw_tp, tp, fentry, kprobe_multi, kprobe, uprobe_multi, uprobe_session, uprobe)",
				env, tok);
		forced_rank[methods[m].chain] = methods[m].rank;
	}
	free(copy);
}

/* Common settings of every object: task filter, where syscall state is
 * kept, event transport. */
static int prepare_common(struct bpf_object *obj)
{
	int err;

	err = tk_set_rodata(obj, "tk_filter", &tk_opts.filter,
			    sizeof(tk_opts.filter));
	if (err && err != -ENOENT)
		return err;
	err = tk_pending_prepare(obj);
	if (!err)
		err = tk_filter_prepare(obj);
	if (err)
		return err;
	return tk_events_prepare(obj);
}

/* One attempt with the current choice: 0 with everything attached; else
 * the failing probe is demoted (or the tool exits) and -errno returned. */
static int try_load(void *skel, const struct tk_skel_ops *ops,
		    tk_configure_fn configure, void *ctx)
{
	struct bpf_object *obj = ops->obj(skel);
	struct bpf_program *prog = NULL;
	const struct method *m;
	struct family *f;
	char target[256];
	int err, i;

	err = apply_choice(obj, &prog);
	if (err) {  /* fentry: the function has no BTF (say, a typo) */
		m = prog_method(prog, &f);
		prog_target(prog, target, sizeof(target));
		demote(f, m, true, err, target);
		return err;
	}
	err = prepare_common(obj);
	if (!err && configure)
		err = configure(skel, ctx);
	if (err)
		tk_fail("cannot set up the BPF object: %s", strerror(-err));
	failed_prog[0] = 0;
	prog = NULL;
	err = ops->load(skel);
	if (err) {
		if (failed_prog[0])
			prog = bpf_object__find_program_by_name(obj, failed_prog);
		m = prog ? prog_method(prog, &f) : NULL;
		if (m && f) {
			prog_target(prog, target, sizeof(target));
			demote(f, m, true, err, target);
			return err;
		}
		/* Not one probe's fault (say, BTF): every probe that has
		 * another method tries it; if none has, explain. */
		for (i = 0; i < n_families; i++) {
			f = &families[i];
			if (f->chosen + 1 < MAX_RANKS &&
			    f->avail[f->chain] >> (f->chosen + 1)) {
				f->floor = f->chosen + 1;
				err = -EAGAIN;
			}
		}
		if (err == -EAGAIN) {
			tk_info("load failed; trying the next method of every probe");
			return err;
		}
		explain_load_failure(err);
	}
	err = tk_filter_after_load(obj);
	if (err)
		tk_fail("cannot set up the task filter: %s", strerror(-err));
	failed_func = NULL;
	err = attach_all(obj, &prog);
	if (!err)
		return 0;
	tk_detach_object(obj);
	m = prog_method(prog, &f);
	prog_target(prog, target, sizeof(target));
	if (m && f) {
		demote(f, m, false, err, target);
		return err;
	}
	tk_fail("cannot attach %s: %s%s", bpf_program__section_name(prog),
		strerror(-err), attach_hint(bpf_program__section_name(prog), err));
}

static void check_btf_file(void)
{
	const char *why = NULL;
	struct btf *btf;

	if (!tk_opts.btf_path)
		return;
	btf = btf__parse(tk_opts.btf_path, NULL);
	if (!btf)
		tk_fail("--btf %s: not a BTF file (neither raw BTF nor an ELF file with a .BTF section); give a copy of /sys/kernel/btf/vmlinux or a vmlinux with BTF",
			tk_opts.btf_path);
	/* A BPF object's BTF may describe task_struct too, but a kernel's
	 * has tens of thousands of types. */
	if (btf__type_cnt(btf) < 10000)
		why = "too few types";
	else if (btf__find_by_name_kind(btf, "task_struct", BTF_KIND_STRUCT) < 0)
		why = "no struct task_struct";
	btf__free(btf);
	if (why)
		tk_fail("--btf %s: this BTF does not describe a kernel (%s); give the BTF of the running kernel's vmlinux",
			tk_opts.btf_path, why);
}

void *tk_load(const struct tk_skel_ops *ops, tk_configure_fn configure,
	      void *ctx)
{
	LIBBPF_OPTS(bpf_object_open_opts, open_opts,
		    .btf_custom_path = tk_opts.btf_path);
	int attempt;

	check_btf_file();
	parse_forced();
	register_btf_target_handlers();
	tk_kernel_btf_release();  /* libbpf parses its own */
	for (attempt = 0; attempt < MAX_FAMILIES * MAX_RANKS + 1; attempt++) {
		void *skel = ops->open(&open_opts);

		if (!skel)
			tk_fail("cannot open BPF object: %s", strerror(errno));
		loading_skel = skel;
		loading = ops->obj(skel);
		if (attempt == 0)
			scan_families(ops->obj(skel));
		if (!choose())
			break;
		if (!try_load(skel, ops, configure, ctx)) {
			report_methods(ops->obj(skel));
			if (tk_opts.dry_run)
				exit(0);
			loading_skel = NULL;
			return skel;
		}
		loading_skel = NULL;
		ops->destroy(skel);
	}
	tk_fail("no attach method of this tool works on this kernel; run with -v for details");
}

void *tk_try_load(const struct tk_skel_ops *ops, tk_configure_fn configure,
		  void *ctx, char *err, size_t errlen)
{
	static jmp_buf trap;  /* static: setjmp's frame must not be reused */
	void *skel;

	loading_skel = NULL;
	if (setjmp(trap)) {
		if (loading_skel) {
			tk_detach_object(ops->obj(loading_skel));
			ops->destroy(loading_skel);
			loading_skel = NULL;
		}
		return NULL;
	}
	tk_fail_trap(&trap, err, errlen);
	skel = tk_load(ops, configure, ctx);
	tk_fail_trap(NULL, NULL, 0);
	return skel;
}

void tk_programs_off(struct bpf_object *obj, const char *prefix)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, obj)
		if (!strncmp(bpf_program__name(p), prefix, strlen(prefix)))
			bpf_program__set_autoload(p, false);
}

void tk_programs_off_absent(struct bpf_object *obj, const char *prefix)
{
	static const char *const kinds[] = { "fentry/", "fexit/", "kprobe/", "kretprobe/" };
	/* Each function's answer once: a function has several programs,
	 * and each look-up scans the kernel's BTF. */
	struct { const char *func; bool has; } seen[64];
	size_t n_seen = 0, i, k;
	struct bpf_program *p;

	bpf_object__for_each_program(p, obj) {
		const char *sec = bpf_program__section_name(p), *func = NULL;
		bool has = true;

		if (strncmp(bpf_program__name(p), prefix, strlen(prefix)))
			continue;
		for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]) && !func; k++)
			if (!strncmp(sec, kinds[k], strlen(kinds[k])))
				func = sec + strlen(kinds[k]);
		if (!func || !*func)
			continue;
		for (i = 0; i < n_seen && strcmp(seen[i].func, func); i++)
			;
		if (i < n_seen) {
			has = seen[i].has;
		} else {
			has = tk_kernel_has_func(func);
			if (n_seen < sizeof(seen) / sizeof(seen[0]))
				seen[n_seen++] = (typeof(seen[0])){ func, has };
		}
		if (!has)
			bpf_program__set_autoload(p, false);
	}
}
