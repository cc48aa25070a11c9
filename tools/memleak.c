/* memleak: outstanding allocations by stack, as bcc's memleak. */
#include <bpf/bpf.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "memleak.h"
#include "memleak.skel.h"
#include "funcmatch.h"
#include "kbtf.h"
#include "mapread.h"
#include "functarget.h"
#include "stacks.h"
#include "tracekit.h"
#include "unwind.h"
#include "uprobe_entry.h"

static struct {
	int top;                     /* -T */
	bool show_allocs;            /* -a */
	long long older_ms;          /* -o */
	unsigned long long min_size, max_size;  /* -z, -Z */
	unsigned sample_every;       /* -s */
	const char *obj;             /* -O */
	unsigned max_allocs;         /* --max-allocs; 0: the mode's default */
	bool user;                   /* -p or -- COMMAND */
	char binary[PATH_MAX];
	char map_full_text[128];
} env = {
	.top = 10,
	.max_size = ~0ULL,
	.sample_every = 1,
};

/* User mode's map takes memory for what is outstanding (it is not
 * preallocated) where the kernel allows it (kernel_allocates_for_bpf);
 * kernel mode's is preallocated, or its own inserts would allocate
 * kernel memory: kmalloc events of the tool itself, some inside its own
 * programs (runs the kernel skips). */
#define USER_MAX_ALLOCS (1 << 20)
#define KERNEL_MAX_ALLOCS (1 << 17)

enum { K_MAX_ALLOCS = 0x3000 };

static const struct argp_option options[] = {
	{ "top", 'T', "N", 0, "Show the N stacks with the most outstanding bytes (default 10)", 0 },
	{ "show-allocs", 'a', 0, 0, "Also show every outstanding allocation: its address and size", 0 },
	{ "older-than", 'o', "MS", 0, "Only allocations older than MS milliseconds", 0 },
	{ "older", 'o', "MS", OPTION_ALIAS, 0, 0 },
	{ "min-size", 'z', "BYTES", 0, "Only allocations of at least BYTES", 0 },
	{ "max-size", 'Z', "BYTES", 0, "Only allocations of at most BYTES", 0 },
	{ "sample-rate", 's', "N", 0, "Track every Nth allocation of each CPU (default 1: all)", 0 },
	{ "obj", 'O', "LIB", 0, "The allocator's library, a name or a path (default: the C library the process maps)", 0 },
	{ "max-allocs", K_MAX_ALLOCS, "N", 0, "Outstanding allocations the kernel can track (default 1048576 of processes' where the map need not be preallocated, from Linux 6.1; else 131072); more are counted and reported", 0 },
	{ 0 },
};

static const char doc[] =
"Outstanding memory allocations by stack: what was allocated and not\n"
"freed, largest last.\n"
"\v"
"With -p PID or -- COMMAND: the C library's allocator (malloc, calloc,\n"
"realloc, reallocarray, posix_memalign, aligned_alloc, memalign, valloc,\n"
"pvalloc, free, mmap, munmap), by user stack. Sizes are the bytes asked\n"
"for, as valgrind counts them. A child that frees a block it inherited\n"
"frees its own copy: the parent's stays outstanding. With -- COMMAND\n"
"every process's allocator calls take the probe while COMMAND runs\n"
"(its children need it); -p attaches to that process alone. User stacks\n"
"are walked by frame pointers: code built without them (the C library)\n"
"shows its caller, then stops or strays ([unknown]). What a process\n"
"allocated before it exec'd is dropped with its old image. Memory still\n"
"reachable (stdio buffers) is outstanding too: memleak does not scan the\n"
"heap for pointers, as valgrind does. The C library's own mmap and\n"
"munmap calls (malloc's heaps and large blocks, thread stacks) are not\n"
"counted: the blocks malloc returns are. Where the kernel has uprobe\n"
"sessions (6.13), a malloc or calloc that -s or -z/-Z leaves out costs\n"
"one trap, not two.\n"
"\n"
"Without them: the kernel's allocators (kmalloc, kmem_cache_alloc,\n"
"their frees, pages and per-CPU memory on the kmem and percpu\n"
"tracepoints), by kernel stack; -n, -u and -c choose the allocating\n"
"tasks.\n"
"\n"
"A report is printed every interval seconds (count times), and at exit;\n"
"bcc's default interval of 5 s is not: without one, at exit only.\n"
"\n"
"Examples:\n"
"  memleak -p 181               # leaks of PID 181, reported at Ctrl-C\n"
"  memleak -p 181 10            # every 10 seconds\n"
"  memleak -o 5000 -p 181 10    # only what is older than 5 s\n"
"  memleak -j -- ./prog         # NDJSON, of one command\n"
"  memleak -z 4096 10 3         # kernel allocations of 4 KiB and more\n";

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'T': env.top = tk_arg_long("--top", arg, 1, INT_MAX); break;
	case 'a': env.show_allocs = true; break;
	case 'o': env.older_ms = tk_arg_long("--older-than", arg, 0, LLONG_MAX / 1000000); break;
	case 'z': env.min_size = tk_arg_long("--min-size", arg, 0, LONG_MAX); break;
	case 'Z': env.max_size = tk_arg_long("--max-size", arg, 0, LONG_MAX); break;
	case 's': env.sample_every = tk_arg_long("--sample-rate", arg, 1, INT_MAX); break;
	case 'O': env.obj = arg; break;
	case K_MAX_ALLOCS: env.max_allocs = tk_arg_long("--max-allocs", arg, 1, 1 << 26); break;
	default: return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "memleak",
	.doc = doc,
	.options = options,
	.parser = parse,
	.own_letters = "Tao",
	.periodic = true,
};

/* --- The allocator's functions ---------------------------------------- */

/* Each probe family and the functions it is attached to. Every
 * allocating function's return is alloc_exit's, but where the family's
 * entry program is a uprobe session (size0 and calloc, where the kernel
 * has them), whose one program sees both. */
static const struct family {
	const char *name;
	const char *funcs[4];
	bool required;               /* malloc and free must be there */
	bool allocates;              /* its calls return a block */
	const char *session;         /* its session program, if any */
	const char *code_rodata;     /* its code span's rodata, if it has one */
} families[] = {
	{ "size0_entry", { "malloc", "valloc", "pvalloc" }, true, true,
	  "size0_entry_uprobe_session", NULL },
	{ "size1_entry", { "aligned_alloc", "memalign" }, false, true, NULL, NULL },
	{ "mmap_entry", { "mmap" }, false, true, NULL, "mmap_code" },
	{ "calloc_entry", { "calloc" }, false, true, "calloc_entry_uprobe_session", NULL },
	{ "realloc_entry", { "realloc" }, false, true, NULL, NULL },
	{ "reallocarray_entry", { "reallocarray" }, false, true, NULL, NULL },
	{ "posix_memalign_entry", { "posix_memalign" }, false, true, NULL, NULL },
	{ "free_entry", { "free" }, true, false, NULL, NULL },
	{ "munmap_entry", { "munmap" }, false, false, NULL, "munmap_code" },
};
#define N_FAMILIES (sizeof(families) / sizeof(families[0]))

/* Each family's entry probes, and its functions' starts (for return
 * probes); exits: those of the families whose returns alloc_exit takes
 * in this load (configure). */
static struct tk_func_list lists[N_FAMILIES], starts[N_FAMILIES], exits;

/* Append func to l unless its offset is there already (glibc gives one
 * function several names: mmap64, __libc_memalign). */
static void add_func(struct tk_func_list *l, const struct tk_func *f)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].addr == f->addr)
			return;
	l->v = realloc(l->v, (l->n + 1) * sizeof(*l->v));
	if (!l->v || !(l->v[l->n].name = strdup(f->name)))
		tk_fail("out of memory");
	l->v[l->n++].addr = f->addr;
}

/* The function named name in env.binary (by file offset: glibc defines
 * some twice, under two symbol versions at one address), into l (its
 * entry probe's offset) and starts. False when absent. */
static bool find_func(const char *name, struct tk_func_list *l, struct tk_func_list *starts)
{
	struct tk_func_list found = { 0 };
	struct tk_func_pattern pat;
	char err[PATH_MAX + 256];

	if (tk_func_pattern_init(&pat, name, false, err, sizeof(err)))
		tk_fail("%s", err);
	if (tk_elf_funcs_match(env.binary, &pat, &found, err, sizeof(err)) < 0)
		found.n = 0;
	tk_func_pattern_free(&pat);
	for (size_t i = 0; i < found.n; i++) {
		add_func(starts, &found.v[i]);
		found.v[i].addr = tk_uprobe_entry_offset(env.binary, found.v[i].addr);
		add_func(l, &found.v[i]);
	}
	tk_func_list_free(&found);
	return l->n > 0;
}

static void resolve_allocator(pid_t pid)
{
	char err[PATH_MAX + 256];
	const char *obj = env.obj ? env.obj : "c";

	err[0] = 0;
	if (pid > 0 && kill(pid, 0) && errno == ESRCH)
		tk_usage_error("invalid --%s value '%d': no such process",
			       tk_opts.filter.tgid > 0 ? "pid" : "tid", (int)pid);
	if (tk_func_object_resolve(obj, pid > 0 ? pid : 0, env.binary, sizeof(env.binary),
				   err, sizeof(err)) < 0)
		tk_usage_error("invalid --obj value '%s': %s", obj, err);
	snprintf(exits.binary, sizeof(exits.binary), "%s", env.binary);
	for (size_t i = 0; i < N_FAMILIES; i++) {
		const struct family *f = &families[i];

		snprintf(lists[i].binary, sizeof(lists[i].binary), "%s", env.binary);
		for (size_t k = 0; k < 4 && f->funcs[k]; k++)
			if (!find_func(f->funcs[k], &lists[i], &starts[i]) && f->required && !k)
				tk_usage_error("invalid --obj value '%s': %s has no %s",
					       obj, env.binary, f->funcs[k]);
	}
}

/* --- Loading ----------------------------------------------------------- */

/* Whether a tracing program may insert into a map that is not
 * preallocated without the kernel's complaint: from 6.1 such maps take
 * memory from BPF's own allocator (struct bpf_mem_alloc); before, the
 * verifier loads the program with a WARNING in the kernel log. */
static bool kernel_allocates_for_bpf(void)
{
	const struct btf *btf = tk_kernel_btf();

	return btf && btf__find_by_name_kind(btf, "bpf_mem_alloc", BTF_KIND_STRUCT) > 0;
}

/* alloc_exit's functions for this load: the starts of every allocating
 * family but those the loader gave their session program (tk_load may
 * try again with another choice: made anew each time). */
static int set_returns(struct bpf_object *obj)
{
	tk_func_list_free(&exits);
	snprintf(exits.binary, sizeof(exits.binary), "%s", env.binary);
	for (size_t i = 0; i < N_FAMILIES; i++) {
		const struct family *f = &families[i];
		struct bpf_program *session = f->session ?
			bpf_object__find_program_by_name(obj, f->session) : NULL;

		if (!f->allocates || (session && bpf_program__autoload(session)))
			continue;
		for (size_t k = 0; k < starts[i].n; k++)
			add_func(&exits, &starts[i].v[k]);
	}
	if (!exits.n)
		tk_programs_off(obj, "alloc_exit");
	return 0;
}

/* PREFIX_below and PREFIX_above: the allocator library's code around
 * the probe at off, by which BPF tells the library's own calls. */
static int set_code_span(struct bpf_object *obj, const char *prefix, unsigned long long off)
{
	unsigned long long below, above;
	char name[64];
	int err;

	tk_uprobe_code_span(env.binary, off, &below, &above);
	snprintf(name, sizeof(name), "%s_below", prefix);
	err = tk_set_rodata(obj, name, &below, sizeof(below));
	snprintf(name, sizeof(name), "%s_above", prefix);
	return err ? err : tk_set_rodata(obj, name, &above, sizeof(above));
}

static int configure(void *skel_, void *ctx)
{
	struct memleak_bpf *skel = skel_;
	struct bpf_object *obj = skel->obj;
	unsigned long long page = sysconf(_SC_PAGESIZE);
	int err;

	(void)ctx;
	if (env.user) {
		tk_programs_off(obj, "kmalloc");
		tk_programs_off(obj, "cache_");
		tk_programs_off(obj, "kfree");
		tk_programs_off(obj, "page_");
		tk_programs_off(obj, "percpu_");
		for (size_t i = 0; i < N_FAMILIES; i++)
			if (!lists[i].n)
				tk_programs_off(obj, families[i].name);
		err = set_returns(obj);
		for (size_t i = 0; !err && i < N_FAMILIES; i++)
			if (families[i].code_rodata && lists[i].n)
				err = set_code_span(obj, families[i].code_rodata, lists[i].v[0].addr);
		if (err)
			return err;
	} else {
		tk_programs_off(obj, "alloc_exit");
		tk_programs_off(obj, "exec_");
		for (size_t i = 0; i < N_FAMILIES; i++)
			tk_programs_off(obj, families[i].name);
		/* The _node variants went in 6.1 (kmalloc and
		 * kmem_cache_alloc took a node). */
		if (!tk_tracepoint_exists("kmem", "kmalloc_node"))
			tk_programs_off(obj, "kmalloc_node");
		if (!tk_tracepoint_exists("kmem", "kmem_cache_alloc_node"))
			tk_programs_off(obj, "cache_alloc_node");
	}
	err = bpf_map__set_max_entries(skel->maps.allocs, env.max_allocs);
	if (!err && (!env.user || !kernel_allocates_for_bpf()))
		err = bpf_map__set_map_flags(skel->maps.allocs, 0);
	if (!err)
		err = tk_set_rodata(obj, "min_size", &env.min_size, sizeof(env.min_size));
	if (!err)
		err = tk_set_rodata(obj, "max_size", &env.max_size, sizeof(env.max_size));
	if (!err)
		err = tk_set_rodata(obj, "sample_every", &env.sample_every, sizeof(env.sample_every));
	if (!err)
		err = tk_set_rodata(obj, "page_size", &page, sizeof(page));
	if (!err)
		err = tk_stacks_configure(obj);
	return err;
}

/* --- Reports ------------------------------------------------------------ */

struct alloc {
	struct alloc_key key;
	struct alloc_info info;
};

/* One row of the report: a process's stack. */
struct row {
	unsigned int tgid;
	int stack_id;
	unsigned long long bytes, count;
};

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

struct alloc_list {
	struct alloc *v;
	size_t n, cap;
};

static void add_alloc(const void *key, const char *val, void *ctx)
{
	struct alloc_list *l = ctx;

	if (l->n == l->cap && !(l->v = realloc(l->v, (l->cap = l->cap * 2 + 4096) * sizeof(*l->v))))
		tk_fail("out of memory");
	memcpy(&l->v[l->n].key, key, sizeof(l->v[0].key));
	memcpy(&l->v[l->n++].info, val, sizeof(l->v[0].info));
}

static int by_key(const void *a, const void *b)
{
	return memcmp(&((const struct alloc *)a)->key, &((const struct alloc *)b)->key,
		      sizeof(struct alloc_key));
}

/* An allocation a process made before its last exec: gone with the
 * image. */
static bool before_exec(int exec_fd, const struct alloc *a)
{
	unsigned long long when;

	return !bpf_map_lookup_elem(exec_fd, &a->key.tgid, &when) && a->info.ts_ns < when;
}

/* Every outstanding allocation, once each, into *out; those made
 * before an exec are deleted instead. */
static size_t read_allocs(struct bpf_object *obj, struct alloc **out)
{
	struct bpf_map *allocs = bpf_object__find_map_by_name(obj, "allocs");
	int exec_fd = bpf_map__fd(bpf_object__find_map_by_name(obj, "exec_ns"));
	struct alloc_list l = { 0 };
	size_t i, n = 0;
	int err = tk_map_read(allocs, add_alloc, &l);

	if (err)
		tk_fail("cannot read the allocations: %s", strerror(-err));
	qsort(l.v, l.n, sizeof(*l.v), by_key);
	for (i = 0; i < l.n; i++) {
		if (n && !by_key(&l.v[n - 1], &l.v[i]))
			continue;  /* read twice (a walk restarted) */
		if (env.user && before_exec(exec_fd, &l.v[i])) {
			bpf_map_delete_elem(bpf_map__fd(allocs), &l.v[i].key);
			continue;
		}
		l.v[n++] = l.v[i];
	}
	*out = l.v;
	return n;
}

static int by_stack(const void *a, const void *b)
{
	const struct alloc *x = a, *y = b;

	if (x->key.tgid != y->key.tgid)
		return x->key.tgid < y->key.tgid ? -1 : 1;
	if (x->info.stack_id != y->info.stack_id)
		return x->info.stack_id < y->info.stack_id ? -1 : 1;
	return x->key.addr < y->key.addr ? -1 : x->key.addr > y->key.addr;
}

/* Largest last, as bcc prints them; ties by process, then stack. */
static int by_bytes(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? -1 : 1;
	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->stack_id < y->stack_id ? -1 : x->stack_id > y->stack_id;
}

static void print_alloc(const struct alloc *a, unsigned long long now, int seq)
{
	struct tk_json j;
	char hex[24];

	if (!tk_opts.json) {
		printf("\taddr = %llx size = %llu\n", a->key.addr, a->info.size);
		return;
	}
	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "alloc");
	tk_json_time(&j);
	if (seq)
		tk_json_int(&j, "interval", seq);
	if (env.user)
		tk_json_uint(&j, "pid", a->key.tgid);
	snprintf(hex, sizeof(hex), "0x%llx", a->key.addr);
	tk_json_str(&j, env.user || a->key.space == ALLOC_HEAP ? "addr" :
		    a->key.space == ALLOC_PAGE ? "pfn" : "percpu_ptr", hex);
	tk_json_uint(&j, "size", a->info.size);
	tk_json_uint(&j, "age_ms", (now - a->info.ts_ns) / 1000000);
	tk_json_end(&j);
}

static void print_row(struct bpf_object *obj, const struct row *r, bool several, int seq)
{
	struct tk_stack_frames f = { 0 };
	bool have = tk_stack_frames_read(obj, r->stack_id, env.user, r->tgid, &f);
	struct tk_json j;
	int i;

	if (tk_opts.json) {
		tk_json_begin(&j, stdout);
		tk_json_str(&j, "type", "stack");
		tk_json_time(&j);
		if (seq)
			tk_json_int(&j, "interval", seq);
		if (env.user)
			tk_json_uint(&j, "pid", r->tgid);
		tk_json_uint(&j, "bytes", r->bytes);
		tk_json_uint(&j, "allocations", r->count);
		tk_json_arr_open(&j, env.user ? "user" : "kernel");
		for (i = f.n - 1; i >= 0; i--)
			tk_json_str(&j, NULL, f.v[i]);
		tk_json_arr_close(&j);
		tk_json_bool(&j, env.user ? "user_missed" : "kernel_missed", !have);
		tk_json_end(&j);
	} else {
		printf("\t%llu bytes in %llu allocations from stack", r->bytes, r->count);
		if (several)
			printf(" of PID %u", r->tgid);
		putchar('\n');
		if (!have)
			printf("\t\t[Missed %s Stack]\n", env.user ? "User" : "Kernel");
		for (i = 0; i < f.n; i++)
			printf("\t\t%s\n", f.v[i]);
	}
	tk_stack_frames_free(&f);
}

/* One report: the top stacks by outstanding bytes (with -a, each
 * allocation first), of allocations older than -o. seq: the interval,
 * 0 at exit. */
static void report(struct bpf_object *obj, int seq)
{
	unsigned long long now = now_ns(), min_age = env.older_ms * 1000000ULL;
	struct alloc *a;
	size_t n = read_allocs(obj, &a);
	struct row *rows = calloc(n ? n : 1, sizeof(*rows));
	size_t nrows = 0, i, first;
	bool several = false;
	char buf[32];

	if (!rows)
		tk_fail("out of memory");
	qsort(a, n, sizeof(*a), by_stack);
	if (!tk_opts.json)
		printf("[%s] Top %d stacks with outstanding allocations:\n",
		       tk_time_str(buf, sizeof(buf)), env.top);
	for (i = 0; i < n; i++) {
		struct row *r;

		if (now - a[i].info.ts_ns < min_age)
			continue;
		if (env.show_allocs)
			print_alloc(&a[i], now, seq);
		r = nrows ? &rows[nrows - 1] : NULL;
		if (!r || r->tgid != a[i].key.tgid || r->stack_id != a[i].info.stack_id) {
			r = &rows[nrows++];
			r->tgid = a[i].key.tgid;
			r->stack_id = a[i].info.stack_id;
			several |= r->tgid != rows[0].tgid;
		}
		r->bytes += a[i].info.size;
		r->count++;
	}
	qsort(rows, nrows, sizeof(*rows), by_bytes);
	first = nrows > (size_t)env.top ? nrows - env.top : 0;
	for (i = first; i < nrows; i++)
		print_row(obj, &rows[i], several, seq);
	fflush(stdout);
	free(rows);
	free(a);
}

/* Until the end, a report every interval; process notices read between
 * them (for symbols after a process exits). The report at exit unless
 * count reports were printed. */
static void run(struct bpf_object *obj)
{
	double next = tk_elapsed() + tk_opts.interval;
	int seq = 0;

	while (!tk_exiting()) {
		double left = tk_opts.interval ? next - tk_elapsed() : 1;

		if (left > 0) {
			if (tk_events_poll(tk_wait_ms(left > 0.1 ? 100 : (int)(left * 1000) + 1)) < 0)
				break;
			continue;
		}
		report(obj, ++seq);
		if (tk_opts.count && seq >= tk_opts.count)
			return;
		next += tk_opts.interval;
	}
	tk_stacks_wait();  /* the last process notices */
	tk_detach();
	report(obj, 0);
}

TK_SKEL_OPS(memleak_bpf);

int main(int argc, char **argv)
{
	struct tk_stacks_print how = { .map_full_text = env.map_full_text };
	struct memleak_bpf *skel;
	pid_t pid;

	tk_parse_args(&tool, argc, argv);
	tk_init();
	pid = tk_filter_attach_pid();
	env.user = pid > 0 || tk_opts.command;
	tk_stack_opts.offsets = true;       /* bcc's frames: func+0x1a */
	tk_stack_opts.unwind = TK_UNWIND_FP;
	tk_stack_opts.user_only = env.user;
	tk_stack_opts.kernel_only = !env.user;
	if (!env.max_allocs)
		env.max_allocs = env.user && kernel_allocates_for_bpf() ? USER_MAX_ALLOCS :
				 KERNEL_MAX_ALLOCS;
	snprintf(env.map_full_text, sizeof(env.map_full_text),
		 "allocations not tracked: the allocation map was full (%u); raise --max-allocs",
		 env.max_allocs);
	if (env.user) {
		resolve_allocator(pid);
		for (size_t i = 0; i < N_FAMILIES; i++)
			if (lists[i].n)
				tk_set_target_multi(families[i].name, &lists[i], families[i].funcs[0],
						    pid > 0 ? pid : -1);
		/* Its functions are chosen in configure. */
		tk_set_target_multi("alloc_exit", &exits, "allocator returns", pid > 0 ? pid : -1);
	} else if (env.obj) {
		tk_usage_error("--obj needs -p PID or -- COMMAND (kernel allocations have no library)");
	}
	skel = tk_load(&memleak_bpf_ops, configure, NULL);
	tk_stacks_open(skel->obj);
	if (!tk_opts.json) {
		if (pid > 0)
			printf("Attaching to pid %d, Ctrl+C to quit.\n", pid);
		else if (!env.user)
			printf("Attaching to kernel allocators, Ctrl+C to quit.\n");
		fflush(stdout);
	}
	tk_ready();
	run(skel->obj);
	tk_stacks_report(skel->obj, &how);
	memleak_bpf__destroy(skel);
	for (size_t i = 0; i < N_FAMILIES; i++) {
		tk_func_list_free(&lists[i]);
		tk_func_list_free(&starts[i]);
	}
	tk_func_list_free(&exits);
	return tk_exit_status();
}
