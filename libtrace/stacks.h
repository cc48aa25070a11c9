/* The userspace half of the stack tools (profile, offcputime,
 * stackcount, memleak; trace's stacks per event): their common options,
 * sizing the maps of tk_stack.bpf.h, noting processes as they appear
 * (for symbols after they exit), and the output: folded stacks for
 * flamegraph.pl, bcc's multi-line report, or NDJSON, with offsets (-s)
 * and raw addresses (-A) as bcc's tools show them, at exit or every
 * interval (stackcount -i); and the report of everything that made the
 * stacks incomplete.
 *
 *   tk_parse_args(&tool, ...)      tool.children = &tk_stack_argp
 *   skel = tk_load(..., configure) configure calls tk_stacks_configure
 *   tk_stacks_open(skel->obj)      after tk_load: starts noting pids
 *   tk_ready(); tk_stacks_wait()   until -d or a signal
 *   tk_stacks_print(skel->obj, &how); tk_stacks_report(skel->obj, &how)
 */
#ifndef TK_STACKS_H
#define TK_STACKS_H

#include <argp.h>
#include <bpf/libbpf.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct tk_stack_opts {
	bool user_only;          /* -U */
	bool kernel_only;        /* -K */
	bool folded;             /* -f */
	bool delimited;          /* -d/--delimited: "-" between kernel and
				  * user frames */
	bool annotations;        /* -a: "_[k]" after kernel frames */
	bool inline_frames;      /* --inline */
	bool offsets;            /* -s/--offset: "func+0x1a" */
	bool addresses;          /* -A/--address (stackcount's -v): each
				  * frame's raw address, in the report and
				  * in JSON (not folded: as bcc) */
	unsigned storage_size;   /* --stack-storage-size: stack map entries */
	unsigned max_depth;      /* --perf-max-stack-depth */
	unsigned max_stacks;     /* --max-stacks: counts map entries */
	const char *debug_dirs;  /* --debug-dir (':'-separated) */
	int unwind;              /* --unwind: enum tk_unwind_mode */
};

extern struct tk_stack_opts tk_stack_opts;

/* The options above, as an argp child for struct tk_tool.children. */
extern const struct argp tk_stack_argp;

/* From a tool's tk_load configure callback: size tk_stacks,
 * tk_stack_counts (and the stack depth), set tk_stack_mode. */
int tk_stacks_configure(struct bpf_object *obj);

/* After tk_stacks_configure: the bytes of struct tk_stack_key that the
 * counts map's keys hold in the --unwind mode chosen (a tool whose
 * map values hold a key sizes them by it). */
size_t tk_stacks_key_size(void);
/* After tk_stacks_configure: the bytes of struct tk_stack_snap that the
 * mode's stack copies take (offcputime's start entries hold one). */
size_t tk_stacks_snap_size(void);

/* After tk_load: read tk_events (first-seen processes), noting each
 * process's mappings while it runs. */
void tk_stacks_open(struct bpf_object *obj);

/* Handle process events until tk_exiting() (--duration or a signal). */
void tk_stacks_wait(void);

/* What the counts are, for output. */
struct tk_stacks_print {
	const char *unit;        /* JSON: "samples", "us", "calls" */
	bool by_thread;          /* keys carry the thread id (offcputime) */
	bool include_idle;       /* keep tgid 0 (the idle task) */
	bool no_comm;            /* stacks merged across processes: no
				  * "comm;" prefix when folded, no
				  * "-  comm (pid)" line (stackcount
				  * without -P) */
	/* A tool whose programs count TK_LOSS_UNSEEN: its key in the JSON
	 * loss record, and what the text line says of each. */
	const char *unseen_key;  /* "blocks_untimed" */
	const char *unseen_text; /* "blocks not timed: ..." */
	/* Raw addresses as bcc's stackcount prints them ("%-16x") rather
	 * than as its profile does ("0x%016x"). */
	bool bare_addresses;
	/* What a full counts map (TK_LOSS_MAP_FULL) lost, when the tool's
	 * map is another: "allocations not tracked: ..." */
	const char *map_full_text;
	/* The tool's own events go on tk_events (trace): events lost and
	 * failed map inserts are told as tk_losses_report tells them, not
	 * as process notices lost. */
	bool own_events;
};

/* Print every counted stack: folded (-f; identical lines merged), bcc's
 * report (stacks with the largest count last), or NDJSON records
 * {"type":"stack",...}. With --print-cgroup (tk_opts.filter.cgroup_ids)
 * each cgroup's stacks are apart, and its path is the first frame of a
 * folded line, a "cgroup" line after the comm line of the report, and
 * "cgroup" in JSON. */
void tk_stacks_print(struct bpf_object *obj, const struct tk_stacks_print *how);

/* At exit: what made stacks incomplete or samples lost, each with the
 * option that fixes it, as stderr lines (text) or one {"type":"loss"}
 * record (JSON). Replaces tk_losses_report for stack tools. */
void tk_stacks_report(struct bpf_object *obj, const struct tk_stacks_print *how);

/* Everything after tk_load: note processes while tracing runs, until
 * --duration or a signal; stop tracing (so that symbolizing is not
 * counted, and the counts are of the run alone); print; report losses.
 * With tk_opts.interval (stackcount -i), print a block every interval
 * seconds and clear the counts, as bcc's stackcount: in text a blank
 * line, then with -T the time (HH:MM:SS), then the stacks; in JSON each
 * record carries "time" and "interval" (1, 2, ...). The last block is
 * the part interval at exit. */
void tk_stacks_run(struct bpf_object *obj, const struct tk_stacks_print *how);

/* One stack of the stack map as text frames, innermost first, each
 * with the raw address it came from (inlined frames share their
 * caller's): for a tool that keeps its own values per stack (memleak).
 * user: a user stack of process tgid. False when there is no such stack
 * (a negative id, or gone from the map). */
struct tk_stack_frames {
	char **v;
	uint64_t *addr;
	int n, cap;
};

bool tk_stack_frames_read(struct bpf_object *obj, int stack_id, bool user,
			  uint32_t tgid, struct tk_stack_frames *out);
void tk_stack_frames_free(struct tk_stack_frames *f);

/* The tracing machinery's own frames (kernel symbol name), innermost in
 * kernel stacks taken by tp_btf, raw_tp, tp and fentry programs: the BPF
 * program, its trampoline, the tracepoint's functions. The stack tools
 * drop them, so that a stack starts where the event happened. */
bool tk_ksym_plumbing(const char *name);

/* Walking a kernel stack from its innermost frame: whether the next
 * frame, of symbol name (NULL: no symbol names it), is still the tracing
 * machinery's at the top and is left out. Once a frame is not, none
 * after it is. A frame that no symbol names, just after a BPF program's
 * (bpf_prog_), is left out too. A program is called by the kernel's
 * tracing code, whose text always has a name, or by BPF-made code: a
 * trampoline, whose name goes when it is freed. Closing the probes
 * before the drain at exit (tk_events_loop) frees it, maybe before a
 * stack that went through it is read (arm64's 6.12 under TCG: capable's
 * stacks drained at exit began at the bare address). Start from
 * TK_KSTACK_TOP_INIT. */
struct tk_kstack_top {
	bool shown;        /* a frame has been kept */
	bool after_prog;   /* the frame before was a BPF program's */
};
#define TK_KSTACK_TOP_INIT ((struct tk_kstack_top){ false, false })
bool tk_kstack_top_plumbing(struct tk_kstack_top *t, const char *name);

/* One event's stack, for the tools that print a stack under an event
 * line (trace, capable): stack id of tk_stack_id (bpf/tk_stack.bpf.h)
 * in obj, from tk_stacks, tk_stacks_spill, or the frames sent on
 * tk_events, which the event callback gave tk_stack_ring_event before
 * this event (the event buffer is not read from here); innermost first,
 * each frame as tk_syms_addr_text gives it (a kernel address unless
 * user, then one of process pid). Text: a line "        func+0x1a" a
 * frame, or "        [kernel stack unavailable]" (user) when id is
 * negative or cannot be read; JSON (j not NULL): an array "kstack"
 * ("ustack"), or null. skip_plumbing: leading kernel frames of the
 * tracing machinery (tk_ksym_plumbing) left out. A stack that cannot be
 * read, or that fills every frame slot, is counted for
 * tk_stacks_report. */
struct tk_json;
struct tk_syms;
void tk_event_stack(struct tk_syms *s, struct bpf_object *obj, int id, bool user, pid_t pid,
		    bool skip_plumbing, struct tk_json *j);

/* For a tool that prints stacks under its events by tk_stack_id's ids
 * (trace, capable), with -K (kernel) and -U (user). Before tk_load: the
 * shared stack maps for frame-pointer stacks, storage_size slots
 * (--stack-storage-size, 0 when not given: default_size; a usage error
 * without -K and -U), one slot without -K and -U; no counts map. */
void tk_event_stacks_setup(bool kernel, bool user, unsigned storage_size,
			   unsigned default_size);
/* From the tool's tk_load configure callback: size the maps (the event
 * buffer keeps its size); over perf buffers, tk_stack_ring_resend. */
int tk_event_stacks_configure(struct bpf_object *obj);
/* At exit: with -K or -U, tk_stacks_report (the stack tools' loss keys,
 * the tool's events lost as tk_losses_report tells them); else
 * tk_losses_report. */
void tk_event_stacks_report(struct bpf_object *obj);

/* For a tool whose own events share tk_events with stacks sent by their
 * frames: true when data is such a stack, now kept for tk_event_stack
 * (the event callback calls it first, and returns at once when it is
 * true). */
bool tk_stack_ring_event(const void *data, size_t size);

#endif
