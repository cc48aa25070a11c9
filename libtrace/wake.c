/* The wakeup tools' output (wake.h). */
#include "wake.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "opts.h"
#include "bpf.h"
#include "setup.h"
#include "unwind.h"

void tk_fold_put(struct tk_fold *l, const char *frame)
{
	size_t n = strlen(frame);

	if (l->len + n + 2 > l->cap) {
		l->cap = (l->len + n + 2) * 2;
		if (!(l->s = realloc(l->s, l->cap)))
			tk_fail("out of memory");
	}
	if (l->len)
		l->s[l->len++] = ';';
	memcpy(l->s + l->len, frame, n + 1);
	l->len += n;
}

/* -d: a "-" between the user and the kernel frames. */
static bool delimit(const struct tk_wake_frames *s)
{
	return tk_stack_opts.delimited && (s->user.n || s->user_missed) &&
	       (s->kern.n || s->kern_missed);
}

void tk_fold_outward(struct tk_fold *l, const struct tk_wake_frames *s)
{
	int i;

	if (s->user_missed)
		tk_fold_put(l, "[Missed User Stack]");
	for (i = s->user.n - 1; i >= 0; i--)
		tk_fold_put(l, s->user.v[i]);
	if (delimit(s))
		tk_fold_put(l, "-");
	if (s->kern_missed)
		tk_fold_put(l, "[Missed Kernel Stack]");
	for (i = s->kern.n - 1; i >= 0; i--)
		tk_fold_put(l, s->kern.v[i]);
}

void tk_fold_inward(struct tk_fold *l, const struct tk_wake_frames *s)
{
	int i;

	if (s->kern_missed)
		tk_fold_put(l, "[Missed Kernel Stack]");
	for (i = 0; i < s->kern.n; i++)
		tk_fold_put(l, s->kern.v[i]);
	if (delimit(s))
		tk_fold_put(l, "-");
	if (s->user_missed)
		tk_fold_put(l, "[Missed User Stack]");
	for (i = 0; i < s->user.n; i++)
		tk_fold_put(l, s->user.v[i]);
}

void tk_wake_print_outward(const struct tk_wake_frames *s)
{
	int i;

	if (s->user_missed)
		printf("    [Missed User Stack]\n");
	for (i = s->user.n - 1; i >= 0; i--)
		printf("    %s\n", s->user.v[i]);
	if (delimit(s))
		printf("    -\n");
	if (s->kern_missed)
		printf("    [Missed Kernel Stack]\n");
	for (i = s->kern.n - 1; i >= 0; i--)
		printf("    %s\n", s->kern.v[i]);
}

void tk_wake_print_inward(const struct tk_wake_frames *s)
{
	int i;

	if (s->kern_missed)
		printf("    [Missed Kernel Stack]\n");
	for (i = 0; i < s->kern.n; i++)
		printf("    %s\n", s->kern.v[i]);
	if (delimit(s))
		printf("    -\n");
	if (s->user_missed)
		printf("    [Missed User Stack]\n");
	for (i = 0; i < s->user.n; i++)
		printf("    %s\n", s->user.v[i]);
}

static void json_frames(struct tk_json *j, const char *key, const struct tk_stack_frames *f)
{
	tk_json_arr_open(j, key);
	for (int i = f->n - 1; i >= 0; i--)
		tk_json_str(j, NULL, f->v[i]);
	tk_json_arr_close(j);
}

void tk_wake_json_stacks(struct tk_json *j, const struct tk_wake_frames *s, const char *prefix)
{
	char key[64];

	if (!tk_stack_opts.kernel_only) {
		snprintf(key, sizeof(key), "%suser", prefix);
		json_frames(j, key, &s->user);
		snprintf(key, sizeof(key), "%suser_missed", prefix);
		tk_json_bool(j, key, s->user_missed);
	}
	if (!tk_stack_opts.user_only) {
		snprintf(key, sizeof(key), "%skernel", prefix);
		json_frames(j, key, &s->kern);
		snprintf(key, sizeof(key), "%skernel_missed", prefix);
		tk_json_bool(j, key, s->kern_missed);
	}
}

/* A stack id that is neither a stack nor "none of that kind here". */
static bool id_missed(int id)
{
	return id < 0 && id != -EFAULT && id != TK_STACK_NOT_TAKEN;
}

void tk_wake_side_read(struct bpf_object *obj, const struct tk_wake_side *k,
		       struct tk_wake_frames *s)
{
	memcpy(s->comm, k->comm, TK_TASK_COMM_LEN);
	s->comm[TK_TASK_COMM_LEN] = 0;
	for (char *c = s->comm; *c; c++)  /* a folded frame: no ';' or control byte */
		if (*c == ';' || (unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '_';
	s->tgid = k->tgid;
	s->pid = k->pid;
	s->user_missed = id_missed(k->user_stack_id);
	s->kern_missed = id_missed(k->kern_stack_id);
	if (k->user_stack_id >= 0 &&
	    !tk_stack_frames_read(obj, k->user_stack_id, true, k->tgid, &s->user))
		s->user_missed = true;
	if (k->kern_stack_id >= 0 &&
	    !tk_stack_frames_read(obj, k->kern_stack_id, false, 0, &s->kern))
		s->kern_missed = true;
}

static void entry_free(struct tk_wake_entry *e)
{
	tk_stack_frames_free(&e->target.user);
	tk_stack_frames_free(&e->target.kern);
	tk_stack_frames_free(&e->waker.user);
	tk_stack_frames_free(&e->waker.kern);
	free(e->folded);
}

static bool folded_out(void)
{
	return tk_stack_opts.folded && !tk_opts.json;
}

/* By folded line; in the report and JSON, which show the threads, by
 * the threads too. */
static int by_line(const void *a, const void *b)
{
	const struct tk_wake_entry *x = a, *y = b;
	int c = strcmp(x->folded, y->folded);

	if (c || folded_out())
		return c;
	if (x->target.pid != y->target.pid)
		return x->target.pid < y->target.pid ? -1 : 1;
	if (x->waker.pid != y->waker.pid)
		return x->waker.pid < y->waker.pid ? -1 : 1;
	return 0;
}

static int by_us(const void *a, const void *b)
{
	const struct tk_wake_entry *x = a, *y = b;

	if (x->us != y->us)
		return x->us < y->us ? -1 : 1;
	return by_line(a, b);
}

void tk_wake_print_counts(struct bpf_object *obj, struct bpf_map *counts,
			  const struct tk_wake_print *how)
{
	int fd = bpf_map__fd(counts);
	char *key = calloc(2, how->key_size), *next = key + how->key_size;
	struct tk_wake_entry *v = NULL;
	size_t n = 0, cap = 0, i, m;
	unsigned long long us;
	bool first = true;
	struct tk_json j;

	if (!key)
		tk_fail("out of memory");
	while (!bpf_map_get_next_key(fd, first ? NULL : key, next)) {
		first = false;
		memcpy(key, next, how->key_size);
		if (bpf_map_lookup_elem(fd, key, &us))
			continue;  /* deleted meanwhile */
		if (n == cap && !(v = realloc(v, (cap = cap ? cap * 2 : 256) * sizeof(*v))))
			tk_fail("out of memory");
		memset(&v[n], 0, sizeof(v[n]));
		how->read(obj, key, &v[n]);
		v[n].us = us;
		v[n].folded = how->fold(&v[n]);
		n++;
	}
	free(key);
	/* Keys that differ only in addresses within the same functions (a
	 * function that wakes from two call sites) are one entry. */
	if (n)
		qsort(v, n, sizeof(*v), by_line);
	for (i = 0, m = 0; i < n; i++) {
		if (m && !by_line(&v[m - 1], &v[i])) {
			v[m - 1].us += v[i].us;
			entry_free(&v[i]);
		} else {
			v[m++] = v[i];
		}
	}
	n = m;
	if (n && !folded_out())
		qsort(v, n, sizeof(*v), by_us);
	for (i = 0; i < n; i++) {
		if (tk_opts.json) {
			tk_json_begin(&j, stdout);
			tk_json_str(&j, "type", "stack");
			how->json(&j, &v[i]);
			tk_json_uint(&j, "value", v[i].us);
			tk_json_str(&j, "unit", "us");
			tk_json_end(&j);
		} else if (folded_out()) {
			printf("%s %llu\n", v[i].folded, v[i].us);
		} else {
			how->report(&v[i]);
		}
	}
	fflush(stdout);
	for (i = 0; i < n; i++)
		entry_free(&v[i]);
	free(v);
}

/* --- Options, set-up and the run ------------------------------------------ */

struct tk_wake_opts tk_wake_opts = { .min_us = 1, .max_us = LONG_MAX };

const struct argp_option tk_wake_options[] = {
	{ "user-threads-only", 'u', 0, 0, "Only user threads (no kernel threads) blocked", 0 },
	{ "kernel-threads-only", 'k', 0, 0, "Only kernel threads (no user threads) blocked", 0 },
	{ "min-block-time", 'm', "US", 0,
	  "Only blocks of at least US microseconds (default 1)", 0 },
	{ "max-block-time", 'M', "US", 0,
	  "Only blocks of at most US microseconds (default: no limit)", 0 },
	{ 0 },
};

error_t tk_wake_parse(int key, char *arg, struct argp_state *state)
{
	struct tk_wake_opts *o = &tk_wake_opts;

	(void)state;
	switch (key) {
	case 'u': o->user_threads = true; break;
	case 'k': o->kernel_threads = true; break;
	case 'm':
		o->min_us = tk_arg_long("-m/--min-block-time", arg, 0, LONG_MAX);
		break;
	case 'M':
		o->max_us = tk_arg_long("-M/--max-block-time", arg, 0, LONG_MAX);
		break;
	case ARGP_KEY_ARG:
		if (o->duration_arg)
			tk_usage_error("unexpected argument '%s' after [duration]", arg);
		tk_opts.duration = tk_arg_double("duration", arg, 0.001, 1e9);
		o->duration_arg = true;
		break;
	case ARGP_KEY_INIT:
		/* The default here: the unwinders need a stack copy of the
		 * task at the event, and a waker's is not kept. */
		tk_stack_opts.unwind = TK_UNWIND_FP;
		break;
	case ARGP_KEY_END:
		if (o->user_threads && o->kernel_threads)
			tk_usage_error("options -u/--user-threads-only and -k/--kernel-threads-only cannot be combined");
		if (o->min_us > o->max_us)
			tk_usage_error("invalid -m/--min-block-time value '%ld': more than -M/--max-block-time %ld",
				       o->min_us, o->max_us);
		if (tk_stack_opts.unwind != TK_UNWIND_FP)
			tk_usage_error("invalid --unwind value '%s': %s walks user stacks by frame pointers only (fp)",
				       tk_unwind_mode_name(tk_stack_opts.unwind), tk_tool_name());
		if (tk_stack_opts.addresses)
			tk_usage_error("option -A/--address is not offered by %s: -s/--offset shows where in its function each frame is",
				       tk_tool_name());
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

int tk_wake_configure(struct bpf_object *obj, struct bpf_map *counts)
{
	const struct tk_wake_opts *o = &tk_wake_opts;
	bool user = o->user_threads, kernel = o->kernel_threads;
	uint64_t min = o->min_us, max = o->max_us == LONG_MAX ? UINT64_MAX : (uint64_t)o->max_us;
	int err;

	err = tk_set_rodata(obj, "user_threads_only", &user, sizeof(user));
	if (!err)
		err = tk_set_rodata(obj, "kernel_threads_only", &kernel, sizeof(kernel));
	if (!err)
		err = tk_set_rodata(obj, "min_block_us", &min, sizeof(min));
	if (!err)
		err = tk_set_rodata(obj, "max_block_us", &max, sizeof(max));
	if (!err)
		err = tk_stacks_configure(obj);
	if (!err)
		err = bpf_map__set_max_entries(bpf_object__find_map_by_name(obj, "tk_stack_counts"), 1);
	if (!err)
		err = bpf_map__set_max_entries(counts, tk_stack_opts.max_stacks);
	return err;
}

void tk_wake_run(struct bpf_object *obj, struct bpf_map *counts, const struct tk_wake_print *how)
{
	struct tk_stacks_print losses = {
		.unit = "us",
		.unseen_key = how->untimed ? "blocks_untimed" : NULL,
		.unseen_text = "blocks not timed: the thread's switch back in reached no tracer "
			       "(this kernel does not trace every context switch)",
		.map_full_text = "blocks not counted: a map was full (the counts: raise --max-stacks)",
	};

	tk_stacks_open(obj);
	tk_ready();
	tk_stacks_wait();
	tk_detach();
	tk_wake_print_counts(obj, counts, how);
	tk_stacks_report(obj, &losses);
}
