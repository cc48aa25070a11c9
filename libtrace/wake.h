/* The userspace half of the wakeup tools (offwaketime, wakeuptime): each
 * counts microseconds by a key holding one or two sides of a wakeup
 * (bpf/tk_wake.h: a thread, its comm, its stacks in tk_stacks). Here the
 * sides are symbolized, keys whose output is the same are merged, and the
 * entries printed: folded lines (sorted), or bcc's report and NDJSON
 * (largest total last). Stack options and losses: stacks.h. */
#ifndef TK_WAKE_LIB_H
#define TK_WAKE_LIB_H

#include <argp.h>
#include <bpf/libbpf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stacks.h"
#include "tk_wake.h"

struct tk_json;

/* One side, symbolized: frames innermost first. */
struct tk_wake_frames {
	char comm[TK_TASK_COMM_LEN + 1];   /* fit for a folded frame */
	uint32_t tgid, pid;
	struct tk_stack_frames user, kern;
	bool user_missed, kern_missed;
};

struct tk_wake_entry {
	struct tk_wake_frames target, waker;
	unsigned long long us;
	char *folded;    /* the folded line without its count */
};

/* A folded line being built: frames joined by ';'. */
struct tk_fold {
	char *s;
	size_t len, cap;
};

void tk_fold_put(struct tk_fold *l, const char *frame);
/* Side s's frames, user outermost first then kernel (a "-" between with
 * -d) ... */
void tk_fold_outward(struct tk_fold *l, const struct tk_wake_frames *s);
/* ... or kernel innermost first then user. */
void tk_fold_inward(struct tk_fold *l, const struct tk_wake_frames *s);
/* The same as report lines ("    frame"). */
void tk_wake_print_outward(const struct tk_wake_frames *s);
void tk_wake_print_inward(const struct tk_wake_frames *s);
/* s's stacks as JSON arrays, outermost first: PREFIXuser,
 * PREFIXuser_missed, PREFIXkernel, PREFIXkernel_missed (as -U/-K ask). */
void tk_wake_json_stacks(struct tk_json *j, const struct tk_wake_frames *s, const char *prefix);

/* Read side k of stack map tk_stacks into s (comm, ids, frames). */
void tk_wake_side_read(struct bpf_object *obj, const struct tk_wake_side *k,
		       struct tk_wake_frames *s);

struct tk_wake_print {
	size_t key_size;
	/* The entry of key (its sides read with tk_wake_side_read). */
	void (*read)(struct bpf_object *obj, const void *key, struct tk_wake_entry *e);
	char *(*fold)(const struct tk_wake_entry *e);
	void (*report)(const struct tk_wake_entry *e);
	void (*json)(struct tk_json *j, const struct tk_wake_entry *e);
	bool untimed;   /* BPF counts TK_LOSS_UNSEEN: blocks whose switch
			 * back in was not traced (offwaketime) */
};

/* Read every count of map counts (key -> u64 us), merge keys with the
 * same folded line (and, in the report and JSON, the same threads), and
 * print them. */
void tk_wake_print_counts(struct bpf_object *obj, struct bpf_map *counts,
			  const struct tk_wake_print *how);

#endif

/* The wakeup tools' own options (bcc's): -u/--user-threads-only,
 * -k/--kernel-threads-only, -m/--min-block-time US,
 * -M/--max-block-time US, [duration]; as struct tk_tool's options and
 * parser (own_letters "ud", extra &tk_stack_argp). User stacks are
 * walked by frame pointers: --unwind fp only. */
struct tk_wake_opts {
	bool user_threads, kernel_threads;
	long min_us, max_us;
	bool duration_arg;
};

extern struct tk_wake_opts tk_wake_opts;
extern const struct argp_option tk_wake_options[];
error_t tk_wake_parse(int key, char *arg, struct argp_state *state);

/* From the tool's tk_load configure: the options into the rodata
 * user_threads_only, kernel_threads_only, min_block_us, max_block_us;
 * tk_stacks_configure; the counts map counts sized by --max-stacks (the
 * unused tk_stack_counts to 1). */
int tk_wake_configure(struct bpf_object *obj, struct bpf_map *counts);

/* After tk_load: trace until --duration, a signal or COMMAND's end,
 * then print the counts and report what was lost. */
void tk_wake_run(struct bpf_object *obj, struct bpf_map *counts, const struct tk_wake_print *how);
