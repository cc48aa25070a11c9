/* The stack tools' common half: options, map sizing, noting processes as
 * they appear, printing counted stacks and reporting what was lost. */
#include "stacks.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <bpf/libbpf.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf.h"
#include "cgroups.h"
#include "events.h"
#include "json.h"
#include "opts.h"
#include "output.h"
#include "setup.h"
#include "stackring.h"
#include "symbolize.h"
#include "tk_stack.h"
#include "u64map.h"
#include "unwind.h"

#define DEFAULT_STORAGE 16384
#define DEFAULT_STACKS 16384

struct tk_stack_opts tk_stack_opts = {
	.storage_size = DEFAULT_STORAGE,
	.max_depth = TK_STACK_MAX_DEPTH,
	.max_stacks = DEFAULT_STACKS,
	.unwind = TK_UNWIND_AUTO,
};

/* Bytes of user stack each mode copies at an event. auto: enough for
 * the frames a libc wrapper keeps below its caller (clock_nanosleep and
 * nanosleep take 0x40 bytes), and for stdio's read path (fgets ->
 * _IO_getline_info -> _IO_default_uflow -> _IO_file_underflow -> read
 * needs more than 256) up to the caller; cfi: from python3.11's eval
 * loop to _start takes ~1.4 KiB. */
#define SNAP_AUTO 512
#define SNAP_CFI TK_STACK_SNAP_MAX

static unsigned snap_size;

enum {
	K_INLINE = 0x2000, K_STORAGE, K_DEPTH, K_MAX_STACKS, K_DEBUG_DIR, K_UNWIND,
};

static const struct argp_option stack_options[] = {
	{ "user-stacks-only", 'U', 0, 0, "Only user stacks", 0 },
	{ "kernel-stacks-only", 'K', 0, 0, "Only kernel stacks", 0 },
	{ "folded", 'f', 0, 0,
	  "Folded stacks for flamegraph.pl: comm;outer;...;inner count (--print-cgroup: the cgroup first)", 0 },
	{ "delimited", 'd', 0, 0,
	  "A \"-\" frame between user and kernel frames", 0 },
	{ "annotations", 'a', 0, 0,
	  "Mark kernel frames _[k] and inlined frames _[i] (flamegraph.pl colours them)", 0 },
	{ "inline", K_INLINE, 0, 0,
	  "Show inlined functions of user code where its debug info has them", 0 },
	{ "offset", 's', 0, 0,
	  "Show where in its function each frame is: func+0x1a (of the frame's own address)", 0 },
	{ "address", 'A', 0, 0,
	  "Show each frame's raw address (in the report and -j; folded lines leave it out, as bcc)", 0 },
	{ "stack-storage-size", K_STORAGE, "N", 0,
	  "Distinct stacks the kernel can hold (default 16384)", 0 },
	{ "perf-max-stack-depth", K_DEPTH, "N", 0,
	  "Frames kept of each stack (default 127, at most kernel.perf_event_max_stack)", 0 },
	{ "max-stacks", K_MAX_STACKS, "N", 0,
	  "Distinct (process, stack) counts kept (default 16384)", 0 },
	{ "unwind", K_UNWIND, "MODE", 0,
	  "User stacks: fp (frame pointers only), auto (default: the frames below a function without a frame pointer, such as a libc wrapper, by the binary's CFI from a 512-byte stack copy; then frame pointers), cfi (CFI all the way from a 2 KiB copy: binaries without frame pointers, such as Debian's python3)", 0 },
	{ "debug-dir", K_DEBUG_DIR, "DIR", 0,
	  "Separate debug info under DIR (.build-id/xx/yyy.debug), ':' between several; default /usr/lib/debug", 0 },
	{ 0 },
};

/* The kernel's limit on stack depth, for --perf-max-stack-depth. */
static long kernel_max_stack(void)
{
	return tk_read_sysctl("/proc/sys/kernel/perf_event_max_stack", TK_STACK_MAX_DEPTH);
}

static error_t parse_stack_opt(int key, char *arg, struct argp_state *state)
{
	struct tk_stack_opts *o = &tk_stack_opts;
	long max;

	(void)state;
	switch (key) {
	case 'U': o->user_only = true; break;
	case 'K': o->kernel_only = true; break;
	case 'f': o->folded = true; break;
	case 'd': o->delimited = true; break;
	case 'a': o->annotations = true; break;
	case K_INLINE: o->inline_frames = true; break;
	case 's': o->offsets = true; break;
	case 'A': o->addresses = true; break;
	case K_STORAGE:
		o->storage_size = tk_arg_long("--stack-storage-size", arg, 1, 1 << 24);
		break;
	case K_DEPTH:
		max = kernel_max_stack();
		o->max_depth = tk_arg_long("--perf-max-stack-depth", arg, 1, 1 << 16);
		if ((long)o->max_depth > max)
			tk_usage_error("invalid --perf-max-stack-depth value '%s': more than kernel.perf_event_max_stack (%ld); raise it first: sysctl -w kernel.perf_event_max_stack=%s",
				       arg, max, arg);
		break;
	case K_MAX_STACKS:
		o->max_stacks = tk_arg_long("--max-stacks", arg, 1, 1 << 24);
		break;
	case K_DEBUG_DIR:
		o->debug_dirs = arg;
		break;
	case K_UNWIND:
		o->unwind = tk_unwind_mode_parse(arg);
		if (o->unwind < 0)
			tk_usage_error("invalid --unwind value '%s': one of fp, auto, cfi", arg);
		break;
	case ARGP_KEY_END:
		if (o->user_only && o->kernel_only)
			tk_usage_error("options -U/--user-stacks-only and -K/--kernel-stacks-only cannot be combined");
		return ARGP_ERR_UNKNOWN;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

const struct argp tk_stack_argp = {
	.options = stack_options,
	.parser = parse_stack_opt,
};

/* tk_stacks' slots: --stack-storage-size; TRACEKIT_STACK_MAP_SLOTS=N
 * makes it N and leaves the spill map its size, which is how a test
 * sends stacks there for sure (a 1-slot map takes one stack). */
static unsigned int main_slots(void)
{
	const char *knob = getenv("TRACEKIT_STACK_MAP_SLOTS");
	unsigned int slots = knob ? (unsigned int)tk_arg_long("TRACEKIT_STACK_MAP_SLOTS", knob, 1,
							     tk_stack_opts.storage_size)
				  : tk_stack_opts.storage_size;

	if (knob)
		tk_info("the stack map has %u slots, the spill map %u (TRACEKIT_STACK_MAP_SLOTS)",
			slots, tk_stack_opts.storage_size / 8);
	return slots;
}

/* tk_stacks_spill (bpf/tk_stack.bpf.h): an eighth of the stack map's
 * slots, for the stacks it cannot keep. Off below 8 slots (a map that
 * small is asked for to see its collisions counted), and past 127
 * frames, which BPF compares in a loop it must bound. */
static int configure_spill(struct bpf_object *obj)
{
	struct bpf_map *spill = bpf_object__find_map_by_name(obj, "tk_stacks_spill");
	struct bpf_map *buf = bpf_object__find_map_by_name(obj, "tk_stack_spill_buf");
	unsigned int slots = tk_stack_opts.storage_size / 8, depth = tk_stack_opts.max_depth;
	size_t size = depth * sizeof(uint64_t);
	bool on = slots > 0 && depth <= TK_STACK_MAX_DEPTH;
	/* TRACEKIT_STACK_RING=0: what neither map keeps is lost and
	 * counted, as before the ring (for the tests of those counters). */
	const char *ring_knob = getenv("TRACEKIT_STACK_RING");
	bool ring = depth <= TK_STACK_MAX_DEPTH && !(ring_knob && !strcmp(ring_knob, "0"));
	int err;

	if (!spill || !buf)
		return -ENOENT;
	if (depth > TK_STACK_MAX_DEPTH)
		tk_info("stacks the stack map cannot keep are lost: no spill map past %d frames",
			TK_STACK_MAX_DEPTH);
	else if (!ring)
		tk_info("stacks neither stack map keeps are lost, not sent by their frames (TRACEKIT_STACK_RING=0)");
	err = bpf_map__set_max_entries(spill, on ? slots : 1);
	if (!err)
		err = bpf_map__set_value_size(spill, size);
	if (!err)
		err = bpf_map__set_value_size(buf, sizeof(struct tk_stack_ring_head) + size);
	if (!err)
		err = tk_set_rodata(obj, "tk_stack_spill_on", &on, sizeof(on));
	if (!err)
		err = tk_set_rodata(obj, "tk_stack_ring_on", &ring, sizeof(ring));
	if (!err)
		err = tk_set_rodata(obj, "tk_stack_depth", &depth, sizeof(depth));
	/* TRACEKIT_STACK_SPILL_HASH_BITS=N (0..29): spilled and sent stacks
	 * keyed by N bits of their hashes, so that a test makes their keys
	 * meet. */
	if (!err && getenv("TRACEKIT_STACK_SPILL_HASH_BITS")) {
		long bits = tk_arg_long("TRACEKIT_STACK_SPILL_HASH_BITS",
					getenv("TRACEKIT_STACK_SPILL_HASH_BITS"), 0, 29);
		uint32_t mask = (uint32_t)((1UL << bits) - 1);

		tk_info("spilled stacks keyed by %ld bits of their hash (TRACEKIT_STACK_SPILL_HASH_BITS)",
			bits);
		err = tk_set_rodata(obj, "tk_stack_spill_mask", &mask, sizeof(mask));
	}
	return err;
}

/* tk_stacks_configure's maps and rodata; not the event buffer. */
static int configure_maps(struct bpf_object *obj)
{
	struct bpf_map *stacks = bpf_object__find_map_by_name(obj, "tk_stacks");
	struct bpf_map *counts = bpf_object__find_map_by_name(obj, "tk_stack_counts");
	struct bpf_map *snaps = bpf_object__find_map_by_name(obj, "tk_stack_snaps");
	int mode = tk_stack_opts.user_only ? TK_STACK_USER :
		   tk_stack_opts.kernel_only ? TK_STACK_KERNEL :
		   TK_STACK_USER | TK_STACK_KERNEL;
	int err;

	if (!stacks || !counts)
		return -ENOENT;
	err = bpf_map__set_max_entries(stacks, main_slots());
	if (!err)
		err = bpf_map__set_value_size(stacks, tk_stack_opts.max_depth * sizeof(uint64_t));
	if (!err)
		err = configure_spill(obj);
	if (!err)
		err = bpf_map__set_max_entries(counts, tk_stack_opts.max_stacks);
	if (!err)
		err = tk_set_rodata(obj, "tk_stack_mode", &mode, sizeof(mode));
	snap_size = tk_stack_opts.kernel_only ? 0 :
		    tk_stack_opts.unwind == TK_UNWIND_AUTO ? SNAP_AUTO :
		    tk_stack_opts.unwind == TK_UNWIND_CFI ? SNAP_CFI : 0;
#if defined(__x86_64__)
	/* Where BPF takes the user registers (tk_stack_user_regs). */
	if (snap_size)
		tk_info("--unwind %s: user registers by %s",
			tk_unwind_mode_name(tk_stack_opts.unwind),
			libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_task_pt_regs, NULL) == 1 ?
			"bpf_task_pt_regs" :
			"the top of the task's kernel stack (no bpf_task_pt_regs: before 5.15)");
#elif defined(__aarch64__)
	if (snap_size)
		tk_info("--unwind %s: user registers by bpf_task_pt_regs",
			tk_unwind_mode_name(tk_stack_opts.unwind));
#else
	if (snap_size)
		tk_info("--unwind %s: user registers are taken on x86-64 and arm64 only: user stacks by frame pointers only",
			tk_unwind_mode_name(tk_stack_opts.unwind));
	snap_size = 0;
#endif
	if (!tk_stack_opts.kernel_only)
		tk_info("user stacks: --unwind %s (%u-byte stack copy per event)",
			snap_size ? tk_unwind_mode_name(tk_stack_opts.unwind) : "fp", snap_size);
	if (!err)
		err = tk_set_rodata(obj, "tk_stack_snap", &snap_size, sizeof(snap_size));
	if (!err)
		err = bpf_map__set_key_size(counts, tk_stacks_key_size());
	if (!err && !snaps)
		err = -ENOENT;
	if (!err)
		err = bpf_map__set_key_size(snaps, tk_stacks_key_size());
	if (!err)
		err = bpf_map__set_value_size(snaps, tk_stacks_snap_size());
	if (!err)
		err = bpf_map__set_max_entries(snaps, snap_size ? tk_stack_opts.max_stacks : 1);
	return err;
}

int tk_stacks_configure(struct bpf_object *obj)
{
	int err = configure_maps(obj);

	/* The event buffer carries only process notices (a few per process
	 * per second): 256 KiB, not the 4 MiB that snoop tools need, which
	 * would be up to 8 MiB of resident memory once read. */
	tk_events_default_kb(256);
	if (!err)
		err = tk_events_prepare(obj);
	return err;
}

size_t tk_stacks_key_size(void)
{
	return snap_size ? sizeof(struct tk_stack_key) : offsetof(struct tk_stack_key, uregs);
}

size_t tk_stacks_snap_size(void)
{
	return offsetof(struct tk_stack_snap, data) + snap_size;
}

/* --- Processes seen: noted while they run ------------------------ */

static struct tk_syms *syms;

/* When each process was last noted (tk_elapsed), by tgid. */
static struct tk_u64map noted = TK_U64MAP_INIT(double);

/* True when tgid's notice should be acted on now. BPF sends one of a
 * process whose address space looks unchanged at most every
 * TK_STACK_RENOTE_NS; what comes sooner than half that is two CPUs
 * racing, and is dropped. */
static bool note_due(uint32_t tgid)
{
	double now = tk_elapsed(), *when;
	bool added;

	if (!(when = tk_u64map_put(&noted, tgid, &added)))
		tk_fail("out of memory");
	if (!added && now - *when < TK_STACK_RENOTE_NS / 2e9)
		return false;
	*when = now;
	return true;
}

static struct tk_syms *symbolizer(void)
{
	struct tk_syms_opts o = {
		.inline_frames = tk_stack_opts.inline_frames,
		.debug_dirs = tk_stack_opts.debug_dirs,
	};

	if (!syms && !(syms = tk_syms_new(&o)))
		tk_fail("cannot set up symbolization: %s", strerror(errno));
	return syms;
}

bool tk_stack_ring_event(const void *data, size_t size)
{
	/* Whole: a shorter event (capable's) whose first word is ~0 is not
	 * one. */
	if (size < sizeof(struct tk_stack_ring_head) + tk_stack_opts.max_depth * sizeof(uint64_t) ||
	    ((const struct tk_stack_ring_head *)data)->marker != TK_STACK_RING_MARKER)
		return false;
	tk_stack_ring_add(data, size, tk_stack_opts.max_depth);
	return true;
}

static int on_pid_event(void *ctx, const void *data, size_t size)
{
	const struct tk_stack_pid_event *ev = data;
	bool due;

	(void)ctx;
	if (tk_stack_ring_event(data, size))
		return 0;
	if (size < sizeof(*ev) || !ev->tgid)
		return 0;
	due = note_due(ev->tgid);
	/* After an exec or a change of mappings, at once: stacks in code
	 * not read yet have begun. A new process: its mappings whole. A
	 * process whose address space BPF saw unchanged: only its JIT map
	 * may have grown (a JIT writes code into mappings it has). */
	if ((ev->flags & (TK_STACK_PID_EXEC | TK_STACK_PID_MAPS)) ||
	    (due && (ev->flags & TK_STACK_PID_NEW)))
		tk_syms_note_fork(symbolizer(), ev->tgid, ev->ppid);
	else if (due)
		tk_syms_note_jit(symbolizer(), ev->tgid);
	return 0;
}

void tk_stacks_open(struct bpf_object *obj)
{
	symbolizer();
	tk_events_open(obj, on_pid_event, NULL);
}

void tk_stacks_wait(void)
{
	tk_events_loop();
}

/* --- Reading and symbolizing the counted stacks ------------------------ */

static void frames_add(struct tk_stack_frames *f, const char *s, uint64_t addr)
{
	if (f->n == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 16;
		f->v = realloc(f->v, f->cap * sizeof(*f->v));
		f->addr = realloc(f->addr, f->cap * sizeof(*f->addr));
		if (!f->v || !f->addr)
			tk_fail("out of memory");
	}
	f->addr[f->n] = addr;
	if (!(f->v[f->n++] = strdup(s)))
		tk_fail("out of memory");
}

void tk_stack_frames_free(struct tk_stack_frames *f)
{
	for (int i = 0; i < f->n; i++)
		free(f->v[i]);
	free(f->v);
	free(f->addr);
}

/* One output stack: possibly many keys merged. */
struct entry {
	char comm[TK_TASK_COMM_LEN + 1];
	uint32_t tgid, pid;
	unsigned long long cgroup_id;  /* --print-cgroup; else 0 */
	struct tk_stack_frames user, kern;
	bool user_missed, kern_missed;
	unsigned long long count;
	char *folded;   /* the folded line without its count: merge key
			 * (with -A in the report or JSON, the addresses
			 * follow after a newline: stacks that differ only
			 * in them are shown apart; with --print-cgroup it
			 * starts with the cgroup: each cgroup's stacks
			 * are shown apart too) */
};

static unsigned long long truncated_stacks;
static unsigned long long stacks_unreadable;

/* A frame name fit for a folded line: ';' separates frames and the
 * last ' ' the count, so ';' and control bytes are replaced. */
static void sanitize(char *s)
{
	for (; *s; s++)
		if (*s == ';' || (unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '_';
}

/* One frame: its name, with -s its offset, with -a its annotation.
 * The symbol was looked up at lookup (the byte before a return address,
 * see read_stack); the offset shown is that of the raw address, as bcc
 * shows it, so that name+offset is the address -A shows. */
static void add_frame(struct tk_stack_frames *f, const struct tk_sym *sym, uint64_t raw,
		      uint64_t lookup, const char *suffix)
{
	char name[1024], buf[1100];
	const char *offset = "";
	char off[32];

	tk_sym_format(sym, name, sizeof(name));
	if (tk_stack_opts.offsets && sym->name) {
		snprintf(off, sizeof(off), "+0x%llx", sym->offset + (raw - lookup));
		offset = off;
	}
	snprintf(buf, sizeof(buf), "%s%s%s", name, offset,
		 tk_stack_opts.annotations ? suffix : "");
	sanitize(buf);
	frames_add(f, buf, raw);
}

/* The tracing machinery's own frames, innermost in kernel stacks taken
 * by tp_btf, raw_tp, tp and fentry programs: dropped, so that a stack
 * starts where the event happened whatever the attach method, and
 * flame graphs of one event from different kernels and methods merge. */
bool tk_ksym_plumbing(const char *name)
{
	static const char *const prefixes[] = {
		"bpf_prog_", "bpf_trampoline_", "bpf_trace_run", "__bpf_trace_",
		"__traceiter_", "perf_trace_", "perf_syscall_", "trace_call_bpf",
		"__bpf_prog_enter", "__bpf_prog_exit",
	};

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

bool tk_kstack_top_plumbing(struct tk_kstack_top *t, const char *name)
{
	bool skip;

	if (t->shown)
		return false;
	/* Unnamed after a program: its trampoline, freed since (the
	 * header says why); the traced function's frame comes next. */
	skip = name ? tk_ksym_plumbing(name) : t->after_prog;
	t->after_prog = name && !strncmp(name, "bpf_prog_", strlen("bpf_prog_"));
	t->shown = !skip;
	return skip;
}

/* Read stack id from the stack map into ips; *n: its frames. false
 * when the stack is gone (it should not be: nothing deletes stacks).
 * poll: a stack sent by its frames that has not come yet is read from
 * the event buffer; never from inside an event callback (the reader
 * would deliver the event being handled again). */
static bool fetch_stack(struct bpf_object *obj, int id, uint64_t *ips, unsigned *n, bool poll)
{
	unsigned depth = tk_stack_opts.max_depth;
	/* A spilled stack's id is its key in the spill map, whole. */
	int fd = bpf_map__fd(bpf_object__find_map_by_name(obj, id & TK_STACK_SPILL_ID ?
							  "tk_stacks_spill" : "tk_stacks"));
	bool ok;

	memset(ips, 0, depth * sizeof(*ips));
	if ((id & TK_STACK_SPILL_ID) && (id & TK_STACK_RING_ID)) {
		/* Sent by its frames: read what the event buffer still
		 * holds when it has not come yet. */
		ok = tk_stack_ring_get(id, ips, depth) ||
		     (poll && tk_events_poll(0) >= 0 && tk_stack_ring_get(id, ips, depth));
	} else {
		ok = fd >= 0 && !bpf_map_lookup_elem(fd, &id, ips);
	}
	if (!ok) {
		stacks_unreadable++;
		return false;
	}
	for (*n = 0; *n < depth && ips[*n]; (*n)++)
		;
	if (*n == depth)
		truncated_stacks++;
	return true;
}

/* Is kernel frame ip the first one shown (prev, just before) again?
 * arm64's 6.1 unwinder gives the frame a tracepoint's program ran from
 * twice, as the registers' pc and as the first frame record's return
 * address (Debian's arm64 6.1: kmalloc_trace+0xf4;kmalloc_trace+0xf4
 * under kmem:kmalloc; 6.12 does not). The same address twice at the top
 * is no call chain: it would be a call returning to the instruction the
 * event was taken at. */
static bool repeated_top(uint64_t ip, uint64_t prev, unsigned shown)
{
	return shown == 1 && ip == prev;
}

/* ips[0..n) as text frames. */
static void symbolize_stack(const uint64_t *ips, unsigned n, bool user, uint32_t tgid,
			    struct tk_stack_frames *out)
{
	struct tk_kstack_top top = TK_KSTACK_TOP_INIT;
	struct tk_sym sym[8];

	for (unsigned i = 0; i < n; i++) {
		/* Past the first frame, addresses are return addresses: the
		 * call is the byte before (a call may end its function). */
		uint64_t addr = i ? ips[i] - 1 : ips[i];

		if (user) {
			int k = tk_syms_user(symbolizer(), tgid, addr, sym, 8);

			for (int j = 0; j < k; j++)
				add_frame(out, &sym[j], ips[i], addr,
					  sym[j].inlined ? "_[i]" : "");
		} else {
			tk_syms_kernel(symbolizer(), addr, sym);
			if (tk_kstack_top_plumbing(&top, sym[0].name))
				continue;
			if (i && repeated_top(ips[i], ips[i - 1], out->n))
				continue;
			add_frame(out, &sym[0], ips[i], addr, "_[k]");
		}
	}
}

bool tk_stack_frames_read(struct bpf_object *obj, int stack_id, bool user,
			  uint32_t tgid, struct tk_stack_frames *out)
{
	uint64_t *ips = calloc(tk_stack_opts.max_depth, sizeof(*ips));
	unsigned n;
	bool ok;

	if (!ips)
		tk_fail("out of memory");
	ok = stack_id >= 0 && fetch_stack(obj, stack_id, ips, &n, true);
	if (ok)
		symbolize_stack(ips, n, user, tgid, out);
	free(ips);
	return ok;
}

/* --- Unwinding user stacks (--unwind auto|cfi) -------------------------- */

/* Stacks (keys) that ended early, by reason; and the files where frames
 * without a frame pointer were found, and where unwinds stopped (-v). */
static unsigned long long unwind_stops[TK_UNWIND_STOP_MAX];
static unsigned long long unwind_fixed;   /* stacks that CFI changed */
#define MAX_NOTED_MODULES 32
static struct {
	const char *name[MAX_NOTED_MODULES];
	size_t n;
} no_fp_modules, stop_modules;

static void note_module(typeof(no_fp_modules) *set, const char *name)
{
	size_t i;

	if (!name)
		return;
	for (i = 0; i < set->n; i++)
		if (!strcmp(set->name[i], name))
			return;
	if (set->n < MAX_NOTED_MODULES && (set->name[set->n] = strdup(name)))
		set->n++;
}

/* The user stack of key by the chosen --unwind mode, from the walk in
 * ips[0..n); into out (the text frames, a marker frame last when the
 * unwind ended early). */
static void unwind_user(int snaps_fd, bool take, const struct tk_stack_key *key,
			uint64_t *ips, unsigned n, struct tk_stack_frames *out)
{
	unsigned depth = tk_stack_opts.max_depth;
	uint64_t *un = calloc(depth, sizeof(*un));
	static struct tk_stack_snap snap;
	enum tk_unwind_stop stop;
	const char *module, *marker;
	struct tk_uregs r = { key->uregs[0], key->uregs[1], key->uregs[2],
			      TK_STACK_UREGS > 3 ? key->uregs[TK_STACK_UREGS - 1] : 0 };
	size_t k;

	/* No copy (the map of copies was full): the leaf cannot be
	 * unwound, and the walk stands. */
	if (bpf_map_lookup_elem(snaps_fd, key, &snap))
		snap.len = 0;
	else if (take)
		bpf_map_delete_elem(snaps_fd, key);
	if (snap.len > snap_size)
		snap.len = snap_size;
	if (!un)
		tk_fail("out of memory");
	k = tk_unwind_user(symbolizer(), key->tgid, tk_stack_opts.unwind, &r, snap.data,
			   snap.len, ips, n, un, depth, &stop, &module);
	unwind_stops[stop]++;
	if (k != n || memcmp(un, ips, n * sizeof(*un))) {
		struct tk_sym sym;

		unwind_fixed++;
		tk_syms_user(symbolizer(), key->tgid, un[0], &sym, 1);
		note_module(&no_fp_modules, sym.module);
	}
	symbolize_stack(un, k, true, key->tgid, out);
	if ((marker = tk_unwind_marker(stop))) {
		frames_add(out, marker, 0);
		note_module(&stop_modules, module);
	}
	free(un);
}

/* A stack id that is neither a stack nor "none of that kind here". */
static bool id_missed(int id)
{
	return id < 0 && id != -EFAULT && id != TK_STACK_NOT_TAKEN;
}

/* The path of cgroup id as a folded frame: a ';' or control byte in a
 * cgroup's name is replaced as in any frame (sanitize). The caller
 * frees it. */
static char *cgroup_frame(unsigned long long id)
{
	char *s = strdup(tk_cgroup_path(id));

	if (!s)
		tk_fail("out of memory");
	sanitize(s);
	return s;
}

/* The folded line of e without its count:
 * [cgroup;]comm;user outer..inner;-;kernel. The cgroup (--print-cgroup)
 * comes first so that a flame graph groups by it. */
static char *fold(const struct entry *e, const struct tk_stacks_print *how)
{
	size_t len = 0, cap = 256;
	char *s = malloc(cap);
	bool first = true;
	int i;

#define PUT(str) do {                                                     \
		const char *p_ = (str);                                   \
		size_t l_ = strlen(p_) + 1;                               \
		while (len + l_ + 1 > cap && (s = realloc(s, cap *= 2)))  \
			;                                                 \
		if (!s)                                                   \
			tk_fail("out of memory");                         \
		if (!first)                                               \
			s[len++] = ';';                                   \
		memcpy(s + len, p_, l_);                                  \
		len += l_ - 1;                                            \
		first = false;                                            \
	} while (0)

	if (!s)
		tk_fail("out of memory");
	s[0] = 0;
	if (tk_opts.filter.cgroup_ids) {
		char *cgroup = cgroup_frame(e->cgroup_id);

		PUT(cgroup);
		free(cgroup);
	}
	if (!how->no_comm)
		PUT(e->comm);
	if (e->user_missed)
		PUT("[Missed User Stack]");
	for (i = e->user.n - 1; i >= 0; i--)
		PUT(e->user.v[i]);
	if (tk_stack_opts.delimited && (e->user.n || e->user_missed) &&
	    (e->kern.n || e->kern_missed))
		PUT("-");
	if (e->kern_missed)
		PUT("[Missed Kernel Stack]");
	for (i = e->kern.n - 1; i >= 0; i--)
		PUT(e->kern.v[i]);
	if (tk_stack_opts.addresses && (!tk_stack_opts.folded || tk_opts.json)) {
		char hex[24];

		PUT("\n");
		for (i = 0; i < e->user.n; i++) {
			snprintf(hex, sizeof(hex), "%" PRIx64, e->user.addr[i]);
			PUT(hex);
		}
		for (i = 0; i < e->kern.n; i++) {
			snprintf(hex, sizeof(hex), "%" PRIx64, e->kern.addr[i]);
			PUT(hex);
		}
	}
#undef PUT
	return s;
}

static struct entry *entries;
static size_t n_entries, cap_entries;

/* Merge e into the entries with the same output (folded line, and for
 * the report the same process), or append it. A hash of the lines keeps
 * this linear. The folded line holds the cgroup with --print-cgroup, so
 * stacks of different cgroups are never merged. */
static struct {
	size_t *slots;  /* entry index + 1; 0 empty */
	size_t cap;
} merge_index;

static uint64_t hash_str(const char *s, uint64_t h)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static uint64_t entry_hash(const struct entry *e, bool with_pid)
{
	uint64_t h = hash_str(e->folded, 14695981039346656037ull);

	return with_pid ? (h ^ e->tgid ^ ((uint64_t)e->pid << 32)) * 1099511628211ull : h;
}

static bool same(const struct entry *a, const struct entry *b, bool with_pid)
{
	return !strcmp(a->folded, b->folded) &&
	       (!with_pid || (a->tgid == b->tgid && a->pid == b->pid));
}

static void merge_rebuild(bool with_pid);

static void merge_entry(struct entry *e, bool with_pid)
{
	size_t i;

	if ((n_entries + 1) * 2 > merge_index.cap)
		merge_rebuild(with_pid);
	for (i = entry_hash(e, with_pid) & (merge_index.cap - 1);
	     merge_index.slots[i]; i = (i + 1) & (merge_index.cap - 1)) {
		struct entry *o = &entries[merge_index.slots[i] - 1];

		if (same(o, e, with_pid)) {
			o->count += e->count;
			tk_stack_frames_free(&e->user);
			tk_stack_frames_free(&e->kern);
			free(e->folded);
			return;
		}
	}
	if (n_entries == cap_entries) {
		cap_entries = cap_entries ? cap_entries * 2 : 256;
		entries = realloc(entries, cap_entries * sizeof(*entries));
		if (!entries)
			tk_fail("out of memory");
	}
	entries[n_entries++] = *e;
	merge_index.slots[i] = n_entries;
}

static void merge_rebuild(bool with_pid)
{
	size_t i, j;

	free(merge_index.slots);
	merge_index.cap = merge_index.cap ? merge_index.cap * 2 : 1024;
	while ((n_entries + 1) * 2 > merge_index.cap)
		merge_index.cap *= 2;
	merge_index.slots = calloc(merge_index.cap, sizeof(*merge_index.slots));
	if (!merge_index.slots)
		tk_fail("out of memory");
	for (j = 0; j < n_entries; j++) {
		for (i = entry_hash(&entries[j], with_pid) & (merge_index.cap - 1);
		     merge_index.slots[i]; i = (i + 1) & (merge_index.cap - 1))
			;
		merge_index.slots[i] = j + 1;
	}
}

/* The counts so far, as arrays of n keys and counts, read in batches
 * (kernel 5.6+). With take, they leave the map as they are read (batch
 * lookup-and-delete), so that each count is in exactly one interval's
 * block; a kernel without batch operations gets each key read, then
 * deleted: a count added in between is lost. */
struct counts {
	struct tk_stack_key *keys;
	uint64_t *vals;
	size_t n, cap;
};

/* The map's keys are tk_stacks_key_size() bytes (the mode's part of
 * struct tk_stack_key), packed so in a batch: spread into whole
 * structs, the rest zero. */
static void counts_unpack(struct counts *c, const char *raw, size_t ksz)
{
	for (size_t i = 0; i < c->n; i++)
		memcpy(&c->keys[i], raw + i * ksz, ksz);
}

static void counts_read_raw(int fd, struct counts *c, bool take, char *raw, size_t ksz);

static void counts_read(int fd, struct counts *c, bool take)
{
	size_t ksz = tk_stacks_key_size();
	char *raw;

	c->cap = tk_stack_opts.max_stacks;
	c->n = 0;
	c->keys = calloc(c->cap, sizeof(*c->keys));
	c->vals = calloc(c->cap, sizeof(*c->vals));
	raw = calloc(c->cap, ksz);
	if (!c->keys || !c->vals || !raw)
		tk_fail("out of memory");
	counts_read_raw(fd, c, take, raw, ksz);
	counts_unpack(c, raw, ksz);
	free(raw);
}

static void counts_read_raw(int fd, struct counts *c, bool take, char *raw, size_t ksz)
{
	struct tk_stack_key key, next, *prev = NULL;
	uint64_t token[8];  /* the map's batch position (a bucket) */
	void *in = NULL;

	for (;;) {
		__u32 got = c->cap - c->n;
		/* Without take too: one call for the map, not two a key
		 * (9,800 keys of a 20,000-function profile took 23 ms
		 * of bpf() calls one by one). */
		int err = take ? bpf_map_lookup_and_delete_batch(fd, in, token, raw + c->n * ksz,
								 c->vals + c->n, &got, NULL)
			       : bpf_map_lookup_batch(fd, in, token, raw + c->n * ksz,
						      c->vals + c->n, &got, NULL);

		if (err && err != -ENOENT && !c->n && (err == -EINVAL || err == -524 /* ENOTSUPP */ ||
							err == -EOPNOTSUPP))
			break;  /* no batch operations: one by one below */
		if (err == -ENOSPC)
			return;  /* more than the map holds (added while read):
				  * the rest stays for the next block */
		if (err && err != -ENOENT)
			tk_fail("cannot read the stack counts: %s", strerror(-err));
		c->n += got;
		if (err == -ENOENT || c->n == c->cap)
			return;
		in = token;
	}
	while (c->n < c->cap && !bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &c->vals[c->n]))
			continue;  /* deleted meanwhile */
		memcpy(raw + c->n++ * ksz, &key, ksz);
		if (take)
			bpf_map_delete_elem(fd, &key);
	}
}

static void counts_free(struct counts *c)
{
	free(c->keys);
	free(c->vals);
}

/* Read, symbolize and merge the counted stacks into entries; with take,
 * emptying the counts map. */
static void collect(struct bpf_object *obj, const struct tk_stacks_print *how,
		    bool take)
{
	struct bpf_map *counts = bpf_object__find_map_by_name(obj, "tk_stack_counts");
	int snaps_fd = bpf_map__fd(bpf_object__find_map_by_name(obj, "tk_stack_snaps"));
	/* The report keeps processes apart; folded lines merge them. */
	bool with_pid = !how->no_comm && !tk_stack_opts.folded;
	uint64_t *ips = calloc(tk_stack_opts.max_depth, sizeof(*ips));
	struct counts c;

	if (!ips)
		tk_fail("out of memory");
	/* Stacks sent by their frames, and process notices, still in the
	 * event buffer: read before the stacks are (fetch_stack would read
	 * them one miss at a time). */
	tk_events_poll(0);
	counts_read(bpf_map__fd(counts), &c, take);
	for (size_t i = 0; i < c.n; i++) {
		const struct tk_stack_key *key = &c.keys[i];
		struct entry e = { 0 };
		unsigned n;

		if (!key->tgid && !how->include_idle)
			continue;
		memcpy(e.comm, key->comm, TK_TASK_COMM_LEN);
		e.comm[TK_TASK_COMM_LEN] = 0;
		sanitize(e.comm);
		e.tgid = key->tgid;
		e.pid = how->by_thread ? key->pid : key->tgid;
		e.cgroup_id = key->cgroup_id;
		e.count = c.vals[i];
		e.user_missed = id_missed(key->user_stack_id);
		e.kern_missed = id_missed(key->kern_stack_id);
		if (key->user_stack_id >= 0) {
			if (!fetch_stack(obj, key->user_stack_id, ips, &n, true))
				e.user_missed = true;
			else if (snap_size && key->uregs[1])
				unwind_user(snaps_fd, take, key, ips, n, &e.user);
			else
				symbolize_stack(ips, n, true, key->tgid, &e.user);
		}
		if (key->kern_stack_id >= 0) {
			if (!fetch_stack(obj, key->kern_stack_id, ips, &n, true))
				e.kern_missed = true;
			else
				symbolize_stack(ips, n, false, 0, &e.kern);
		}
		e.folded = fold(&e, how);
		merge_entry(&e, with_pid);
	}
	counts_free(&c);
	free(ips);
}

/* Forget the entries printed, for the next interval. */
static void entries_reset(void)
{
	for (size_t i = 0; i < n_entries; i++) {
		tk_stack_frames_free(&entries[i].user);
		tk_stack_frames_free(&entries[i].kern);
		free(entries[i].folded);
	}
	n_entries = 0;
	if (merge_index.slots)
		memset(merge_index.slots, 0, merge_index.cap * sizeof(*merge_index.slots));
}

static int by_count(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? -1 : 1;
	return strcmp(x->folded, y->folded);
}

static int by_line(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->folded,
		      ((const struct entry *)b)->folded);
}

/* One frame of the report; with -A its raw address first, as the tool's
 * bcc counterpart prints it. */
static void print_report_frame(const struct tk_stack_frames *f, int i,
			       const struct tk_stacks_print *how)
{
	if (!tk_stack_opts.addresses)
		printf("    %s\n", f->v[i]);
	else if (how->bare_addresses)
		printf("    %-16" PRIx64 " %s\n", f->addr[i], f->v[i]);
	else
		printf("    0x%016" PRIx64 " %s\n", f->addr[i], f->v[i]);
}

/* --print-cgroup: the cgroup's path on a line of its own, after the
 * "-  comm (pid)" line or in its place. */
static void print_report_cgroup(const struct entry *e)
{
	printf("    %-16s ", "cgroup");
	tk_print_cgroup(stdout, e->cgroup_id, 0);
	putchar('\n');
}

static void print_report_entry(const struct entry *e,
			       const struct tk_stacks_print *how)
{
	int i;

	if (e->kern_missed)
		printf("    [Missed Kernel Stack]\n");
	for (i = 0; i < e->kern.n; i++)
		print_report_frame(&e->kern, i, how);
	if (tk_stack_opts.delimited && (e->kern.n || e->kern_missed) &&
	    (e->user.n || e->user_missed))
		printf("    --\n");
	if (e->user_missed)
		printf("    [Missed User Stack]\n");
	for (i = 0; i < e->user.n; i++)
		print_report_frame(&e->user, i, how);
	if (!how->no_comm)
		printf("    %-16s %s (%u)\n", "-", e->comm, e->pid);
	if (tk_opts.filter.cgroup_ids)
		print_report_cgroup(e);
	printf("        %llu\n\n", e->count);
}

/* Frames outermost first; with -A, "KEY_addresses" beside them, the
 * same length (hex strings: JSON numbers lose 64-bit precision). */
static void json_frames(struct tk_json *j, const char *key, const struct tk_stack_frames *f)
{
	char name[32], hex[24];

	tk_json_arr_open(j, key);
	for (int i = f->n - 1; i >= 0; i--)
		tk_json_str(j, NULL, f->v[i]);
	tk_json_arr_close(j);
	if (!tk_stack_opts.addresses)
		return;
	snprintf(name, sizeof(name), "%s_addresses", key);
	tk_json_arr_open(j, name);
	for (int i = f->n - 1; i >= 0; i--) {
		snprintf(hex, sizeof(hex), "0x%" PRIx64, f->addr[i]);
		tk_json_str(j, NULL, hex);
	}
	tk_json_arr_close(j);
}

static void print_json_entry(const struct entry *e,
			     const struct tk_stacks_print *how, long seq)
{
	struct tk_json j;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "stack");
	if (tk_opts.interval || tk_opts.time)
		tk_json_time(&j);
	if (tk_opts.interval)
		tk_json_int(&j, "interval", seq);
	if (!how->no_comm) {
		tk_json_str(&j, "comm", e->comm);
		tk_json_uint(&j, "pid", e->tgid);
		if (how->by_thread)
			tk_json_uint(&j, "tid", e->pid);
	}
	if (tk_opts.filter.cgroup_ids)
		tk_json_cgroup(&j, e->cgroup_id);
	if (!tk_stack_opts.kernel_only) {
		json_frames(&j, "user", &e->user);
		tk_json_bool(&j, "user_missed", e->user_missed);
	}
	if (!tk_stack_opts.user_only) {
		json_frames(&j, "kernel", &e->kern);
		tk_json_bool(&j, "kernel_missed", e->kern_missed);
	}
	tk_json_uint(&j, "value", e->count);
	tk_json_str(&j, "unit", how->unit);
	tk_json_end(&j);
}

/* One block of output: in text, with -i a blank line first (as bcc's
 * stackcount), with -T the time (HH:MM:SS); flushed before the counts
 * are read, so that a reader that sees the header knows that what
 * happened before it is in this block. seq: the interval, from 1. */
static void print_block(struct bpf_object *obj, const struct tk_stacks_print *how,
			bool take, long seq)
{
	char buf[32];
	size_t i;

	if (!tk_opts.json) {
		if (tk_opts.interval && !tk_stack_opts.folded)
			putchar('\n');
		if (tk_opts.time)
			printf("%-8s\n", tk_time_str(buf, sizeof(buf)));
		fflush(stdout);
	}
	collect(obj, how, take);
	if (tk_stack_opts.folded && !tk_opts.json)
		qsort(entries, n_entries, sizeof(*entries), by_line);
	else
		qsort(entries, n_entries, sizeof(*entries), by_count);
	for (i = 0; i < n_entries; i++) {
		const struct entry *e = &entries[i];

		if (tk_opts.json)
			print_json_entry(e, how, seq);
		else if (tk_stack_opts.folded)
			printf("%s %llu\n", e->folded, e->count);
		else
			print_report_entry(e, how);
	}
	fflush(stdout);
	entries_reset();
}

void tk_stacks_print(struct bpf_object *obj, const struct tk_stacks_print *how)
{
	print_block(obj, how, false, 0);
}

/* --- What made the stacks incomplete ------------------------------------ */

static unsigned long long unwind_incomplete(void)
{
	return unwind_stops[TK_UNWIND_SNAPSHOT] + unwind_stops[TK_UNWIND_NO_CFI] +
	       unwind_stops[TK_UNWIND_REGISTER] + unwind_stops[TK_UNWIND_BAD_CFI];
}

/* -v: what the unwinder did. */
static void unwind_info(void)
{
	char list[1024];
	size_t len, i;

	list[0] = 0;
	for (i = 0, len = 0; i < no_fp_modules.n && len < sizeof(list); i++)
		len += snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "",
				no_fp_modules.name[i]);
	tk_info("--unwind %s: %llu stacks recovered frames that frame pointers miss (leaf functions without a frame pointer in: %s); %llu kept the frame-pointer walk",
		tk_unwind_mode_name(tk_stack_opts.unwind), unwind_fixed,
		no_fp_modules.n ? list : "none", unwind_stops[TK_UNWIND_FALLBACK]);
	list[0] = 0;
	for (i = 0, len = 0; i < stop_modules.n && len < sizeof(list); i++)
		len += snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "",
				stop_modules.name[i]);
	if (stop_modules.n)
		tk_info("--unwind %s: unwinds stopped early in: %s",
			tk_unwind_mode_name(tk_stack_opts.unwind), list);
}

void tk_stacks_report(struct bpf_object *obj, const struct tk_stacks_print *how)
{
	struct bpf_map *errs = bpf_object__find_map_by_name(obj, "tk_stack_errs");
	unsigned long long collisions = 0, full = 0, other = 0, snaps_lost = 0, ring_lost = 0;
	unsigned long long ring_stacks, ring_conflicts;
	const char *tool = tk_tool_name();
	struct tk_losses l;
	struct tk_json j;

	tk_losses_read(obj, &l);
	if (errs) {
		tk_percpu_sum(errs, TK_STACK_ERR_COLLISION, &collisions);
		tk_percpu_sum(errs, TK_STACK_ERR_FULL, &full);
		tk_percpu_sum(errs, TK_STACK_ERR_OTHER, &other);
		tk_percpu_sum(errs, TK_STACK_ERR_SNAP, &snaps_lost);
		tk_percpu_sum(errs, TK_STACK_ERR_RING, &ring_lost);
	}
	/* Each stack the event buffer had no room for is an event lost
	 * too: l.events is left with the process notices lost. */
	l.events -= ring_lost < l.events ? ring_lost : l.events;
	tk_stack_ring_stats(&ring_stacks, &ring_conflicts);
	if (ring_stacks)
		tk_info("%llu stacks reached userspace by their frames: the stack map and the spill map could not keep them; %llu ids were shared by two or more (their %s)",
			ring_stacks, ring_conflicts,
			how->own_events ? "events show [... stack unavailable]" : "samples show [Missed ...]");
	fflush(stdout);
	if (tk_opts.json) {
		tk_json_begin(&j, stdout);
		tk_json_str(&j, "type", "loss");
		tk_json_uint(&j, "events_lost", l.events);
		tk_json_uint(&j, "map_inserts_failed", l.map_full);
		tk_json_uint(&j, "stack_collisions", collisions);
		tk_json_uint(&j, "stack_map_full", full);
		tk_json_uint(&j, "stack_buffer_full", ring_lost);
		tk_json_uint(&j, "stack_errors", other + stacks_unreadable);
		tk_json_uint(&j, "stacks_truncated", truncated_stacks);
		tk_json_uint(&j, "stacks_unwind_incomplete", unwind_incomplete() + snaps_lost);
		tk_json_uint(&j, "runs_missed", l.runs_missed);
		if (how->unseen_key)
			tk_json_uint(&j, how->unseen_key, l.unseen);
		tk_json_end(&j);
		fflush(stdout);
		return;
	}
	if (l.map_full && how->own_events)
		;  /* tk_losses_warn_events, below */
	else if (l.map_full && how->map_full_text)
		fprintf(stderr, "%s: %llu %s\n", tool, l.map_full, how->map_full_text);
	else if (l.map_full)
		fprintf(stderr, "%s: %llu samples dropped: the counts map was full (%u stacks); raise --max-stacks\n",
			tool, l.map_full, tk_stack_opts.max_stacks);
	if (collisions)
		fprintf(stderr, "%s: %llu stacks lost to hash collisions in the stack map; raise --stack-storage-size (now %u)\n",
			tool, collisions, tk_stack_opts.storage_size);
	if (full)
		fprintf(stderr, "%s: %llu stacks lost: the stack map was full; raise --stack-storage-size (now %u)\n",
			tool, full, tk_stack_opts.storage_size);
	if (ring_lost)
		fprintf(stderr, "%s: %llu stacks lost: neither stack map could keep them and the %s was full; raise --stack-storage-size (now %u) or --buffer-kb\n",
			tool, ring_lost, tk_events_transport_name(), tk_stack_opts.storage_size);
	if (other + stacks_unreadable)
		fprintf(stderr, "%s: %llu stacks could not be taken or read; run with -v\n",
			tool, other + stacks_unreadable);
	if (snaps_lost)
		fprintf(stderr, "%s: %llu user stacks kept no stack copy (its map was full) and stand as frame pointers walked them; raise --max-stacks\n",
			tool, snaps_lost);
	if (truncated_stacks)
		fprintf(stderr, "%s: %llu stacks reached the %u-frame limit and may be truncated; raise --perf-max-stack-depth (and kernel.perf_event_max_stack)\n",
			tool, truncated_stacks, tk_stack_opts.max_depth);
	if (how->unseen_key && l.unseen)
		fprintf(stderr, "%s: %llu %s\n", tool, l.unseen, how->unseen_text);
	if (snap_size && unwind_incomplete())
		fprintf(stderr, "%s: %llu user stacks end early with an [unwind: ...] frame (%llu snapshot too small, %llu no CFI, %llu register not captured, %llu bad CFI)%s\n",
			tool, unwind_incomplete(), unwind_stops[TK_UNWIND_SNAPSHOT],
			unwind_stops[TK_UNWIND_NO_CFI], unwind_stops[TK_UNWIND_REGISTER],
			unwind_stops[TK_UNWIND_BAD_CFI],
			tk_stack_opts.unwind == TK_UNWIND_AUTO && unwind_stops[TK_UNWIND_SNAPSHOT] ?
			"; --unwind cfi copies more of each stack" : "");
	if (snap_size)
		unwind_info();
	if (how->own_events)
		tk_losses_warn_events(&l);
	else if (l.events)
		fprintf(stderr, "%s: %llu new-process notices lost (the %s was full): processes that exited may not symbolize; raise --buffer-kb\n",
			tool, l.events, tk_events_transport_name());
	tk_losses_warn_missed(&l);
}

/* Until tk_exiting(), a block every tk_opts.interval seconds, its
 * counts taken out of the map; then the last, part interval's. */
static void run_intervals(struct bpf_object *obj, const struct tk_stacks_print *how)
{
	/* Intervals count from attach (tk_ready), not from start-up:
	 * loading may take seconds. */
	double next = tk_elapsed() + tk_opts.interval;
	long seq = 0;

	while (!tk_exiting()) {
		double left = next - tk_elapsed();

		if (left > 0) {
			if (tk_events_poll(tk_wait_ms(left > 0.1 ? 100 : (int)(left * 1000) + 1)) < 0)
				break;
			continue;
		}
		print_block(obj, how, true, ++seq);
		next += tk_opts.interval;
	}
	tk_stacks_wait();  /* drains the process notices */
	tk_detach();
	print_block(obj, how, true, ++seq);
}

void tk_stacks_run(struct bpf_object *obj, const struct tk_stacks_print *how)
{
	tk_stacks_open(obj);
	tk_ready();
	if (tk_opts.interval) {
		run_intervals(obj, how);
	} else {
		tk_stacks_wait();
		tk_detach();
		tk_stacks_print(obj, how);
	}
	tk_stacks_report(obj, how);
}

/* --- One event's stack (trace, capable) ---------------------------------- */

/* -K or -U: the maps are sized, and the report is the stack tools'. */
static bool event_stacks;

void tk_event_stacks_setup(bool kernel, bool user, unsigned storage_size,
			   unsigned default_size)
{
	if (storage_size && !kernel && !user)
		tk_usage_error("option --stack-storage-size needs -K or -U");
	event_stacks = kernel || user;
	tk_stack_opts.unwind = TK_UNWIND_FP;
	tk_stack_opts.max_stacks = 1;   /* no counts: ids go in the events */
	tk_stack_opts.kernel_only = !user;
	tk_stack_opts.user_only = user && !kernel;
	tk_stack_opts.storage_size = !event_stacks ? 1 : storage_size ? storage_size : default_size;
}

int tk_event_stacks_configure(struct bpf_object *obj)
{
	bool on = true;
	/* The event buffer keeps the size tk_load gave it: the events' own. */
	int err = configure_maps(obj);

	/* Per-CPU perf buffers: a stack sent by its frames goes before each
	 * event that names it, in the event's CPU's buffer. */
	if (!err && !strcmp(tk_events_transport_id(), "perf"))
		err = tk_set_rodata(obj, "tk_stack_ring_resend", &on, sizeof(on));
	return err;
}

void tk_event_stacks_report(struct bpf_object *obj)
{
	if (event_stacks)
		tk_stacks_report(obj, &(struct tk_stacks_print){ .own_events = true });
	else
		tk_losses_report(obj);
}

void tk_event_stack(struct tk_syms *s, struct bpf_object *obj, int id, bool user, pid_t pid,
		    bool skip_plumbing, struct tk_json *j)
{
	uint64_t *ips = calloc(tk_stack_opts.max_depth, sizeof(*ips));
	struct tk_kstack_top top = TK_KSTACK_TOP_INIT;
	struct tk_sym sym;
	char buf[512];
	unsigned n = 0, shown = 0;

	if (!ips)
		tk_fail("out of memory");
	/* No poll: a stack sent by its frames came before its event. */
	if (id < 0 || !fetch_stack(obj, id, ips, &n, false)) {
		if (!j)
			printf("        [%s stack unavailable]\n", user ? "user" : "kernel");
		else
			tk_json_null(j, user ? "ustack" : "kstack");
		free(ips);
		return;
	}
	if (j)
		tk_json_arr_open(j, user ? "ustack" : "kstack");
	for (unsigned i = 0; i < n; i++) {
		if (skip_plumbing && !user && s && tk_syms_kernel(s, ips[i], &sym) == 1 &&
		    tk_kstack_top_plumbing(&top, sym.name))
			continue;
		if (!user && i && repeated_top(ips[i], ips[i - 1], shown))
			continue;
		shown++;
		tk_syms_addr_text(s, ips[i], user, pid, buf, sizeof(buf));
		if (j)
			tk_json_str(j, NULL, buf);
		else
			printf("        %s\n", buf);
	}
	if (j)
		tk_json_arr_close(j);
	free(ips);
}
