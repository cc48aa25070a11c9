#include "bpf.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "events.h"
#include "opts.h"
#include "setup.h"

/* Attach methods, best first; a program name ends in "_" METHOD. */
static const char *const methods[] = { "tp_btf", "raw_tp", "tp" };
#define N_METHODS 3
#define MAX_FAMILIES 32

struct family {
	char name[64];
	unsigned available;   /* bit m: a program with method m exists */
	int chosen;
};

static struct family families[MAX_FAMILIES];
static int n_families;

/* Index of the method prog's name ends in, and the length of its family
 * prefix; -1 for a program with one method only. */
static int method_of(const char *name, size_t *prefix_len)
{
	size_t len = strlen(name);
	int m;

	for (m = 0; m < N_METHODS; m++) {
		size_t sl = strlen(methods[m]);

		if (len > sl + 1 && name[len - sl - 1] == '_' &&
		    !strcmp(name + len - sl, methods[m])) {
			/* "foo_raw_tp" ends in "_tp" too: tp_btf and raw_tp
			 * are tried first, so the longer suffix wins. */
			*prefix_len = len - sl - 1;
			return m;
		}
	}
	return -1;
}

static struct family *family_of(const char *name, int *method)
{
	size_t plen;
	int i;

	*method = method_of(name, &plen);
	if (*method < 0 || plen >= sizeof(families[0].name))
		return NULL;
	for (i = 0; i < n_families; i++)
		if (strlen(families[i].name) == plen &&
		    !strncmp(families[i].name, name, plen))
			return &families[i];
	if (n_families == MAX_FAMILIES)
		return NULL;
	memcpy(families[n_families].name, name, plen);
	families[n_families].name[plen] = 0;
	return &families[n_families++];
}

static void scan_families(struct bpf_object *obj)
{
	struct bpf_program *prog;
	int m;

	n_families = 0;
	memset(families, 0, sizeof(families));
	bpf_object__for_each_program(prog, obj) {
		struct family *f = family_of(bpf_program__name(prog), &m);

		if (f)
			f->available |= 1u << m;
	}
}

/* Choose for each family the best method at or below level; returns a
 * signature of the choice so identical retries are skipped. */
static unsigned choose(int level)
{
	unsigned sig = 0;
	int i, m;

	for (i = 0; i < n_families; i++) {
		struct family *f = &families[i];

		f->chosen = -1;
		for (m = level; m < N_METHODS && f->chosen < 0; m++)
			if (f->available & (1u << m))
				f->chosen = m;
		for (m = N_METHODS - 1; m >= 0 && f->chosen < 0; m--)
			if (f->available & (1u << m))
				f->chosen = m;
		sig = sig * N_METHODS + f->chosen;
	}
	return sig;
}

/* Autoload only the chosen variant of each family. A program the tool
 * switched off itself stays off. */
static void apply_choice(struct bpf_object *obj)
{
	struct bpf_program *prog;
	int m;

	bpf_object__for_each_program(prog, obj) {
		struct family *f = family_of(bpf_program__name(prog), &m);

		if (f && m != f->chosen)
			bpf_program__set_autoload(prog, false);
	}
}

const char *tk_prog_method(const struct bpf_program *prog)
{
	const char *sec = bpf_program__section_name(prog);
	int m;
	struct family *f = family_of(bpf_program__name(prog), &m);

	if (f && f->chosen >= 0)
		return methods[f->chosen];
	if (!strncmp(sec, "tracepoint/", 11) || !strncmp(sec, "tp/", 3))
		return "tp";
	if (!strncmp(sec, "raw_tp/", 7) || !strncmp(sec, "raw_tracepoint/", 15))
		return "raw_tp";
	if (!strncmp(sec, "tp_btf/", 7))
		return "tp_btf";
	return sec;
}

int tk_set_rodata(struct bpf_object *obj, const char *var, const void *val,
		  size_t size)
{
	const struct btf_var_secinfo *vs;
	const struct btf_type *sec;
	struct bpf_map *map, *rodata = NULL;
	struct btf *btf = bpf_object__btf(obj);
	size_t data_size;
	char *data;
	int id, i;

	bpf_object__for_each_map(map, obj) {
		const char *n = bpf_map__name(map);
		size_t l = strlen(n);

		if (l >= 7 && !strcmp(n + l - 7, ".rodata"))
			rodata = map;
	}
	if (!rodata || !btf)
		return -ENOENT;
	id = btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC);
	if (id < 0)
		return -ENOENT;
	sec = btf__type_by_id(btf, id);
	/* Writable before load: libbpf 1.1 just declares it const. */
	data = (char *)bpf_map__initial_value(rodata, &data_size);
	if (!data)
		return -EINVAL;
	vs = btf_var_secinfos(sec);
	for (i = 0; i < btf_vlen(sec); i++, vs++) {
		const struct btf_type *t = btf__type_by_id(btf, vs->type);

		if (strcmp(btf__name_by_offset(btf, t->name_off), var))
			continue;
		if (size != vs->size || vs->offset + size > data_size)
			return -EINVAL;
		memcpy(data + vs->offset, val, size);
		return 0;
	}
	return -ENOENT;
}

int tk_percpu_sum(struct bpf_map *map, unsigned key, unsigned long long *sum)
{
	int ncpu = libbpf_num_possible_cpus(), i, err;
	unsigned long long *vals;

	*sum = 0;
	if (ncpu <= 0)
		return ncpu;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	err = bpf_map__lookup_elem(map, &key, sizeof(key), vals,
				   ncpu * sizeof(*vals), 0);
	for (i = 0; !err && i < ncpu; i++)
		*sum += vals[i];
	free(vals);
	return err;
}

static int forced_level(void)
{
	const char *env = getenv("TRACEKIT_ATTACH");
	int m;

	if (!env || !*env)
		return 0;
	for (m = 0; m < N_METHODS; m++)
		if (!strcmp(env, methods[m]))
			return m;
	tk_fail("TRACEKIT_ATTACH=%s: unknown attach method (tp_btf, raw_tp, tp)",
		env);
}

/* Common settings of every object: task filter, event transport. */
static int prepare_common(struct bpf_object *obj)
{
	int err;

	err = tk_set_rodata(obj, "tk_filter", &tk_opts.filter,
			    sizeof(tk_opts.filter));
	if (err && err != -ENOENT)
		return err;
	return tk_events_prepare(obj);
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

static void report_methods(struct bpf_object *obj)
{
	struct bpf_program *prog;

	if (!tk_opts.verbose)
		return;
	if (bpf_object__find_map_by_name(obj, "tk_events"))
		tk_info("event transport: %s", tk_events_transport_name());
	bpf_object__for_each_program(prog, obj) {
		if (bpf_program__autoload(prog))
			tk_info("probe %s: %s (%s)", bpf_program__name(prog),
				tk_prog_method(prog),
				bpf_program__section_name(prog));
	}
}

void *tk_load(const struct tk_skel_ops *ops, tk_configure_fn configure,
	      void *ctx)
{
	LIBBPF_OPTS(bpf_object_open_opts, open_opts,
		    .btf_custom_path = tk_opts.btf_path);
	unsigned sig, last_sig = ~0u;
	int level, err = -ENOENT;

	for (level = forced_level(); level < N_METHODS; level++) {
		void *skel = ops->open(&open_opts);
		struct bpf_object *obj;

		if (!skel)
			tk_fail("cannot open BPF object: %s", strerror(errno));
		obj = ops->obj(skel);
		scan_families(obj);
		sig = choose(level);
		if (sig == last_sig) {  /* same programs as the last try */
			ops->destroy(skel);
			continue;
		}
		last_sig = sig;
		apply_choice(obj);
		err = prepare_common(obj);
		if (!err && configure)
			err = configure(skel, ctx);
		if (!err)
			err = ops->load(skel);
		if (!err) {
			err = tk_events_after_load(obj);
			if (err)
				tk_fail("cannot set up the task filter: %s",
					strerror(-err));
			report_methods(obj);
			return skel;
		}
		tk_info("load with %s methods failed: %s", methods[level],
			strerror(-err));
		ops->destroy(skel);
		if (!n_families)
			break;
	}
	explain_load_failure(err);
	return NULL;
}

static const char *attach_hint(const char *sec, int err)
{
	if (!strncmp(sec, "kprobe/", 7) || !strncmp(sec, "kretprobe/", 10))
		return "; kprobes need a kernel built with CONFIG_KPROBES=y";
	if (!strncmp(sec, "fentry/", 7) || !strncmp(sec, "fexit/", 6))
		return "; fentry/fexit need CONFIG_DEBUG_INFO_BTF and trampoline support";
	if ((!strncmp(sec, "tracepoint/", 11) || !strncmp(sec, "tp/", 3)) &&
	    err == -ENOENT)
		return "; this kernel lacks that tracepoint (CONFIG_FTRACE_SYSCALLS for syscalls/*)";
	return "";
}

void tk_attach(struct bpf_object *obj)
{
	struct bpf_program *prog;
	bool tracefs_ok = false;

	bpf_object__for_each_program(prog, obj) {
		const char *sec = bpf_program__section_name(prog);
		struct bpf_link *link;

		if (!bpf_program__autoload(prog))
			continue;
		if (!tracefs_ok && (!strncmp(sec, "tracepoint/", 11) ||
				    !strncmp(sec, "tp/", 3))) {
			int err = tk_ensure_tracefs();

			if (err)
				tk_fail("tracefs is not mounted and mounting it failed (%s): mount -t tracefs nodev /sys/kernel/tracing",
					strerror(-err));
			tracefs_ok = true;
		}
		link = bpf_program__attach(prog);
		if (!link) {
			int err = -errno;

			tk_fail("cannot attach %s: %s%s", sec, strerror(-err),
				attach_hint(sec, err));
		}
		/* Links live until exit; the kernel detaches them then. */
	}
}
