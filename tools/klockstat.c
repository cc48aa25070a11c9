/* klockstat: kernel mutex and rwsem contention (wait) and hold times, by
 * caller, as bcc's klockstat. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "klockstat.h"
#include "klockstat.skel.h"
#include "stacks.h"
#include "symbolize.h"
#include "tracekit.h"

enum { SORT_MAX, SORT_TOTAL, SORT_COUNT };

static struct {
	const char *caller;       /* -c: caller function name prefix */
	const char *lock;         /* -L as given */
	unsigned long long lock_addr;
	long nr_rows;             /* -n */
	long nr_frames;           /* -s */
	int sort[2];              /* -S: wait (acq_), hold (hld_) */
	bool per_thread;          /* -P */
} env = { .nr_rows = 99999999, .nr_frames = 1 };

/* How the run traces: waits from tracepoints or from lock calls; hold
 * times only where kernel functions can be traced. */
enum way { WAY_TP_HOLD, WAY_TP, WAY_KF };
static enum way way;
static char no_hold_why[1024];

enum { K_TIMESTAMP = 0x2000 };

static const struct argp_option options[] = {
	{ "caller", 'c', "FUNC", 0, "Only callers whose function name starts with FUNC", 0 },
	{ "lock", 'L', "LOCK", 0,
	  "Only this lock: its address (0xffff...) or a kernel symbol (cgroup_mutex; "
	  "with CONFIG_KALLSYMS_ALL=y)", 0 },
	{ "locks", 'n', "N", 0, "Print the first N callers (threads with -P) of each table", 0 },
	{ "stacks", 's', "N", 0, "N stack frames per caller, from the caller out (default 1)", 0 },
	{ "sort", 'S', "SORT", 0,
	  "Sort by acq_max, acq_total, acq_count (the wait table), hld_max, hld_total, "
	  "hld_count (the hold table), or one of each: acq_count,hld_total (default: max)", 0 },
	{ "interval", 'i', "SEC", 0, "Print every SEC seconds (totals since the start)", 0 },
	{ "per-thread", 'P', 0, 0, "Rows per thread rather than per caller", 0 },
	{ "timestamp", K_TIMESTAMP, 0, 0, "Print the time before each output (as -T)", 0 },
	{ 0 },
};

/* bcc's -t TID is the common --tid. */
static const struct tk_letter letters[] = { { 't', "tid" }, { 0 } };

static const struct tk_bcc_missing bcc_missing[] = {
	{ "-R", "each output gives the totals since tracing began; run klockstat -d SEC "
		"for one period's" },
	{ "--reset", "each output gives the totals since tracing began; run klockstat -d SEC "
		     "for one period's" },
	{ 0 },
};

static const char doc[] =
"Kernel lock contention: how long tasks wait for kernel mutexes, rwsems\n"
"and semaphores, and how long they hold mutexes and rwsems, by caller.\n"
"\v"
"Waits: on kernels with the lock:contention_begin and contention_end\n"
"tracepoints (Linux 5.19+), each contended acquisition of a sleeping lock\n"
"(mutex, rwsem, semaphore; not spin locks), from the start of contention\n"
"to the acquisition; uncontended acquisitions are not waits. On older\n"
"kernels, every call that takes a mutex or rwsem (mutex_lock and its\n"
"_interruptible and _killable forms; down_read, down_write and theirs),\n"
"from its entry to its return (as bcc's klockstat times them), by kernel\n"
"functions (fentry, else kprobes); a call that gives up is not counted.\n"
"Hold times need the kernel functions on every kernel: a mutex or rwsem\n"
"from the return of the call that took it (trylocks too) to its\n"
"mutex_unlock, up_read or up_write. Where kernel functions cannot\n"
"be traced (no kprobes, fentry refused) klockstat reports waits only and\n"
"says why in one stderr line (-j: a record {\"type\":\"note\"}); -v says\n"
"which way each runs.\n"
"\n"
"A row's caller is the first frame of the lock call's kernel stack outside\n"
"the locking code and the tracing machinery (pipe_write+0x5b); rows are\n"
"by the -s frames from the caller out. Tables as libbpf-tools' klockstat:\n"
"Caller, Avg Wait, Count, Max Wait, Total Wait (and the same for Hold),\n"
"largest first; with -s 2 or more the task and lock of the longest. -P:\n"
"rows per thread (Tid, Comm). JSON: a record {\"type\":\"lock\"} per row\n"
"with \"kind\" (\"wait\" or \"hold\"), \"caller\" (a function name),\n"
"\"stack\" (frames with offsets), or \"tid\" and \"comm\" with -P,\n"
"\"count\", \"avg_ns\", \"max_ns\", \"total_ns\" and the longest's \"max_pid\",\n"
"\"max_tid\", \"max_comm\" and \"max_lock\". Output at the end (Ctrl-C,\n"
"-d) or every -i seconds, the totals since the start. Up to 10240 rows\n"
"and 10240 holds at once: more count as failed map inserts. As in bcc,\n"
"-c is --caller and -n --locks, so --cgroup and --name have no short\n"
"letter.\n"
"\n"
"Examples:\n"
"  klockstat                  # trace system wide until Ctrl-C\n"
"  klockstat -d 5             # trace for 5 seconds\n"
"  klockstat -i 5             # print every 5 seconds\n"
"  klockstat -p 181           # process 181 only\n"
"  klockstat -t 181           # thread 181 only\n"
"  klockstat -c pipe_         # callers whose name starts with pipe_\n"
"  klockstat -L cgroup_mutex  # that lock only (an address works too)\n"
"  klockstat -S acq_count     # wait table by count\n"
"  klockstat -n 3 -s 6        # top 3 callers, 6 frames each\n"
"  klockstat -P               # per thread\n"
"  klockstat -j -- make       # a build's lock waits, NDJSON\n";

static bool parse_sort(const char *s)
{
	static const char *const fields[] = { "max", "total", "count" };
	int kind, i;

	if (!strncmp(s, "acq_", 4))
		kind = KLOCK_WAIT;
	else if (!strncmp(s, "hld_", 4))
		kind = KLOCK_HOLD;
	else
		return false;
	for (i = 0; i < 3; i++) {
		if (!strcmp(s + 4, fields[i])) {
			env.sort[kind] = i;
			return true;
		}
	}
	return false;
}

static void sort_arg(const char *arg)
{
	char buf[64], *comma;

	if (strlen(arg) >= sizeof(buf))
		goto bad;
	strcpy(buf, arg);
	comma = strchr(buf, ',');
	if (comma) {
		*comma = '\0';
		if (!parse_sort(comma + 1))
			goto bad;
	}
	if (parse_sort(buf))
		return;
bad:
	tk_usage_error("invalid -S/--sort value '%s': expected acq_max, acq_total, acq_count, "
		       "hld_max, hld_total or hld_count, or two of them (acq_count,hld_total)", arg);
}

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'c':
		if (!*arg)
			tk_usage_error("invalid -c/--caller value '': expected a function name prefix");
		env.caller = arg;
		break;
	case 'L':
		if (!*arg)
			tk_usage_error("invalid -L/--lock value '': expected an address or a kernel symbol");
		env.lock = arg;
		break;
	case 'n': env.nr_rows = tk_arg_long("-n/--locks", arg, 1, 99999999); break;
	case 's': env.nr_frames = tk_arg_long("-s/--stacks", arg, 1, KLOCK_FRAMES); break;
	case 'S': sort_arg(arg); break;
	case 'i': tk_opts.interval = tk_arg_long("-i/--interval", arg, 1, 86400); break;
	case 'P': env.per_thread = true; break;
	case K_TIMESTAMP: tk_opts.time = true; break;
	case ARGP_KEY_ARG:
		tk_usage_error("unexpected argument '%s' (the duration is -d SEC)", arg);
	case ARGP_KEY_END:
		if (env.per_thread && env.nr_frames != 1)
			tk_usage_error("options -P/--per-thread and -s/--stacks cannot be combined");
		if (env.per_thread && env.caller)
			tk_usage_error("options -P/--per-thread and -c/--caller cannot be combined");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const struct tk_tool tool = {
	.name = "klockstat",
	.no_print_cgroup = true,
	.doc = doc,
	.options = options,
	.parser = parse,
	.args_doc = "",
	.own_letters = "cn",
	.letters = letters,
	.bcc_missing = bcc_missing,
};

/* -L: a hexadecimal address, or a kernel symbol from /proc/kallsyms. */
static void resolve_lock(void)
{
	char line[512], name[256], *end;
	unsigned long long addr;
	FILE *f;

	if (!env.lock)
		return;
	if (!strncmp(env.lock, "0x", 2) || !strncmp(env.lock, "0X", 2)) {
		errno = 0;
		env.lock_addr = strtoull(env.lock + 2, &end, 16);
		if (errno || *end || end == env.lock + 2 || !env.lock_addr)
			tk_usage_error("invalid -L/--lock value '%s': expected an address "
				       "(0xffff...) or a kernel symbol", env.lock);
		return;
	}
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		tk_fail("cannot read /proc/kallsyms for -L %s: %s", env.lock, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %*s %255s", &addr, name) == 2 && !strcmp(name, env.lock)) {
			env.lock_addr = addr;
			break;
		}
	}
	fclose(f);
	if (!env.lock_addr)
		tk_usage_error("invalid -L/--lock value '%s': no such kernel symbol in /proc/kallsyms "
			       "(locks are data symbols, listed with CONFIG_KALLSYMS_ALL=y; "
			       "else give the lock's address)", env.lock);
}

/* ---- rows ---- */

struct row {
	uint64_t frames[KLOCK_FRAMES];  /* from the caller out; zero with -P */
	unsigned nframes;
	unsigned tid, kind;
	struct klock_stat s;
};

static struct {
	struct row *v;
	size_t n, cap;
} rows;

static struct tk_syms *syms;

/* The locking code between a lock call's stack and its caller. */
static bool locking_frame(const char *name)
{
	static const char *const prefixes[] = {
		"mutex_", "__mutex_", "ww_mutex", "__ww_mutex", "rt_mutex", "__rt_mutex",
		"rtlock_", "down_", "__down", "_down_", "rwsem_", "__rwsem", "percpu_down",
		"__percpu_down", "percpu_rwsem", "osq_", "_raw_", "queued_", "native_queued",
		"__pv_queued", "do_raw_", "lock_acquire", "lock_contended",
	};

	if (!strcmp(name, "down"))
		return true;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return tk_ksym_plumbing(name);
}

/* The index of the caller in frames (n of them): the first frame that is
 * neither locking code nor tracing machinery; n when there is none. */
static unsigned caller_index(const uint64_t *frames, unsigned n)
{
	struct tk_sym sym;
	unsigned i;

	for (i = 0; i < n; i++) {
		tk_syms_kernel(syms, frames[i], &sym);
		if (sym.name && !locking_frame(sym.name))
			return i;
	}
	return n;
}

static const char *func_name(uint64_t addr)
{
	struct tk_sym sym;

	tk_syms_kernel(syms, addr, &sym);
	return sym.name ? sym.name : "[unknown]";
}

static void add_stat(struct klock_stat *to, const struct klock_stat *s)
{
	to->count += s->count;
	to->total_ns += s->total_ns;
	if (s->max_ns > to->max_ns || !to->count) {
		to->max_ns = s->max_ns;
		to->max_lock = s->max_lock;
		to->max_pid = s->max_pid;
		to->max_tid = s->max_tid;
		memcpy(to->max_comm, s->max_comm, sizeof(to->max_comm));
	}
}

static void add_entry(const void *k, const char *v, void *ctx)
{
	const struct klock_key *key = k;
	struct klock_stat s;
	struct row r = { .tid = key->tid, .kind = key->kind };
	unsigned n, c, i;

	(void)ctx;
	memcpy(&s, v, sizeof(s));
	if (!s.count)
		return;
	if (!env.per_thread) {
		for (n = 0; n < KLOCK_FRAMES && key->frames[n]; n++)
			;
		c = caller_index((const uint64_t *)key->frames, n);
		for (i = 0; i < (unsigned)env.nr_frames && c + i < n; i++)
			r.frames[i] = key->frames[c + i];
		r.nframes = i;
		if (env.caller && (!i || strncmp(func_name(r.frames[0]), env.caller,
						  strlen(env.caller))))
			return;
	}
	for (i = 0; i < rows.n; i++) {
		struct row *o = &rows.v[i];

		if (o->kind == r.kind && o->tid == r.tid && o->nframes == r.nframes &&
		    !memcmp(o->frames, r.frames, sizeof(r.frames))) {
			add_stat(&o->s, &s);
			return;
		}
	}
	if (rows.n == rows.cap) {
		size_t cap = rows.cap ? 2 * rows.cap : 64;
		struct row *nv = realloc(rows.v, cap * sizeof(*nv));

		if (!nv)
			tk_fail("out of memory");
		rows.v = nv;
		rows.cap = cap;
	}
	r.s = s;
	rows.v[rows.n++] = r;
}

static uint64_t sort_value(const struct row *r)
{
	switch (env.sort[r->kind]) {
	case SORT_TOTAL: return r->s.total_ns;
	case SORT_COUNT: return r->s.count;
	default: return r->s.max_ns;
	}
}

/* Wait table first, then hold; each largest first. */
static int by_sort(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	uint64_t vx, vy;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	vx = sort_value(x);
	vy = sort_value(y);
	if (vx != vy)
		return vx > vy ? -1 : 1;
	return x->s.total_ns > y->s.total_ns ? -1 : x->s.total_ns < y->s.total_ns;
}

/* ---- output ---- */

/* libbpf-tools' time format: "1.2 us", "3.0 ms", "15 ns". */
static const char *time_str(char *buf, size_t size, uint64_t ns)
{
	static const struct { double base; const char *unit; } table[] = {
		{ 1e9 * 3600, "h " }, { 1e9 * 60, "m " }, { 1e9, "s " }, { 1e6, "ms" },
		{ 1e3, "us" },
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (ns >= table[i].base) {
			snprintf(buf, size, "%.1f %s", ns / table[i].base, table[i].unit);
			return buf;
		}
	}
	snprintf(buf, size, "%u ns", (unsigned)ns);
	return buf;
}

static const char *frame_text(uint64_t addr, char *buf, size_t size)
{
	return tk_syms_addr_text(syms, addr, false, 0, buf, size);
}

static const char *lock_name(uint64_t addr)
{
	struct tk_sym sym;

	tk_syms_kernel(syms, addr, &sym);
	return sym.name && !sym.offset ? sym.name : "no-ksym";
}

static void print_row_json(const struct row *r)
{
	char buf[256];
	struct tk_json j;
	unsigned i;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "lock");
	tk_json_time(&j);
	tk_json_str(&j, "kind", r->kind == KLOCK_HOLD ? "hold" : "wait");
	if (env.per_thread) {
		tk_json_int(&j, "tid", r->tid);
		tk_json_strn(&j, "comm", r->s.max_comm,
			     strnlen(r->s.max_comm, sizeof(r->s.max_comm)));
	} else {
		tk_json_str(&j, "caller", r->nframes ? func_name(r->frames[0]) : "[unknown]");
		tk_json_arr_open(&j, "stack");
		for (i = 0; i < r->nframes; i++)
			tk_json_str(&j, NULL, frame_text(r->frames[i], buf, sizeof(buf)));
		tk_json_arr_close(&j);
	}
	tk_json_uint(&j, "count", r->s.count);
	tk_json_uint(&j, "avg_ns", r->s.total_ns / r->s.count);
	tk_json_uint(&j, "max_ns", r->s.max_ns);
	tk_json_uint(&j, "total_ns", r->s.total_ns);
	tk_json_int(&j, "max_pid", r->s.max_pid);
	tk_json_int(&j, "max_tid", r->s.max_tid);
	tk_json_strn(&j, "max_comm", r->s.max_comm, strnlen(r->s.max_comm, sizeof(r->s.max_comm)));
	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)r->s.max_lock);
	tk_json_str(&j, "max_lock", buf);
	tk_json_end(&j);
}

static void print_row_text(const struct row *r)
{
	char who[64], buf[256], avg[32], max[32], tot[32];
	unsigned i;

	if (env.per_thread) {
		snprintf(who, sizeof(who), "%u  %16.16s", r->tid, r->s.max_comm);
		printf("%37s", who);
	} else {
		printf("%37s", r->nframes ? frame_text(r->frames[0], buf, sizeof(buf)) : "[unknown]");
	}
	printf(" %9s %8llu %10s %12s\n", time_str(avg, sizeof(avg), r->s.total_ns / r->s.count),
	       r->s.count, time_str(max, sizeof(max), r->s.max_ns),
	       time_str(tot, sizeof(tot), r->s.total_ns));
	if (env.per_thread || env.nr_frames < 2)
		return;
	for (i = 1; i < r->nframes; i++)
		printf("%37s\n", frame_text(r->frames[i], buf, sizeof(buf)));
	printf("                              Max PID %d, COMM %.16s, Lock %s (0x%llx)\n",
	       r->s.max_pid, r->s.max_comm, lock_name(r->s.max_lock),
	       (unsigned long long)r->s.max_lock);
}

static void print_table(unsigned kind, const struct row *v, size_t n)
{
	const char *what = kind == KLOCK_HOLD ? "Hold" : "Wait";
	size_t i;

	if (tk_opts.json) {
		for (i = 0; i < n && i < (size_t)env.nr_rows; i++)
			print_row_json(&v[i]);
		return;
	}
	if (env.per_thread)
		printf("\n                Tid              Comm");
	else
		printf("\n                               Caller");
	printf("  Avg %s    Count   Max %s   Total %s\n", what, what, what);
	for (i = 0; i < n && i < (size_t)env.nr_rows; i++)
		print_row_text(&v[i]);
}

static void print_interval(void *arg, int seq)
{
	struct klockstat_bpf *skel = arg;
	char hms[16];
	size_t hold;

	(void)seq;
	rows.n = 0;
	if (tk_map_read(skel->maps.stats, add_entry, NULL))
		tk_fail("cannot read the stats map: %s", strerror(errno));
	if (rows.n)
		qsort(rows.v, rows.n, sizeof(*rows.v), by_sort);
	for (hold = 0; hold < rows.n && rows.v[hold].kind == KLOCK_WAIT; hold++)
		;
	if (!tk_opts.json && tk_opts.time)
		printf("\n%-8s\n", tk_time_str(hms, sizeof(hms)));
	print_table(KLOCK_WAIT, rows.v, hold);
	if (way != WAY_TP)
		print_table(KLOCK_HOLD, rows.v + hold, rows.n - hold);
	fflush(stdout);
}

/* ---- loading ---- */

static int configure(void *s, void *ctx)
{
	struct klockstat_bpf *skel = s;

	(void)ctx;
	skel->rodata->per_thread = env.per_thread;
	skel->rodata->target_lock = env.lock_addr;
	skel->rodata->kf_wait = way == WAY_KF;
	if (way == WAY_KF) {
		tk_programs_off(skel->obj, "contention_");
		bpf_map__set_max_entries(skel->maps.wait_start, 1);
	}
	if (way == WAY_TP) {
		tk_programs_off(skel->obj, "kf_");
		bpf_map__set_max_entries(skel->maps.call_start, 1);
		bpf_map__set_max_entries(skel->maps.hold_start, 1);
	} else {
		/* Some came late (down_read_interruptible: 5.11). */
		tk_programs_off_absent(skel->obj, "kf_");
	}
	return 0;
}

TK_SKEL_OPS(klockstat_bpf);

/* Tracepoints for waits where the kernel has them, with kernel functions
 * for hold times where those can be traced; else kernel functions for
 * both. */
static struct klockstat_bpf *load(void)
{
	struct klockstat_bpf *skel;
	char why[512];

	tk_ensure_tracefs();
	if (tk_tracepoint_exists("lock", "contention_begin") &&
	    tk_tracepoint_exists("lock", "contention_end")) {
		way = WAY_TP_HOLD;
		skel = tk_try_load(&klockstat_bpf_ops, configure, NULL, why, sizeof(why));
		if (skel) {
			tk_info("waits from tracepoints lock:contention_begin/end, "
				"hold times from kernel functions (mutex and rwsem lock "
				"calls to mutex_unlock, up_read, up_write)");
			return skel;
		}
		way = WAY_TP;
		skel = tk_try_load(&klockstat_bpf_ops, configure, NULL, no_hold_why,
				   sizeof(no_hold_why));
		if (skel) {
			snprintf(no_hold_why, sizeof(no_hold_why),
				 "no hold times: they need kernel functions (%s); waits only, "
				 "from tracepoints lock:contention_begin/end", why);
			return skel;
		}
		tk_info("no tracepoint tracing (%s); tracing kernel functions instead",
			no_hold_why);
		no_hold_why[0] = '\0';
	} else {
		tk_info("no tracepoints lock:contention_begin/end (Linux 5.19+): waits are "
			"mutex and rwsem lock calls, by kernel functions");
	}
	way = WAY_KF;
	return tk_load(&klockstat_bpf_ops, configure, NULL);
}

int main(int argc, char **argv)
{
	struct tk_syms_opts so = { 0 };
	struct klockstat_bpf *skel;
	struct tk_json j;

	tk_parse_args(&tool, argc, argv);
	resolve_lock();
	tk_init();
	syms = tk_syms_new(&so);
	if (!syms)
		tk_fail("out of memory");
	skel = load();
	if (no_hold_why[0]) {
		if (tk_opts.json) {
			tk_json_begin(&j, stdout);
			tk_json_str(&j, "type", "note");
			tk_json_str(&j, "note", no_hold_why);
			tk_json_end(&j);
		} else {
			tk_warn("%s", no_hold_why);
		}
	}
	tk_ready();
	tk_print_intervals(print_interval, skel);
	tk_losses_report(skel->obj);
	klockstat_bpf__destroy(skel);
	tk_syms_free(syms);
	free(rows.v);
	return tk_exit_status();
}
