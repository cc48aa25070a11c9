/* hardirqs and softirqs: options and output (irqstat.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "irqstat.h"
#include "tracekit.h"
#include "tk_irq.h"

struct tk_irq_opts tk_irq_opts = { .cpu = -1 };

static const struct tk_irq_kind *the_kind;

const struct tk_bcc_missing tk_irq_bcc_missing[] = {
	{ "--timestamp", "use -T or --time" },
	{ 0 },
};

error_t tk_irq_parse(int key, char *arg, struct argp_state *state)
{
	int ncpu;

	(void)state;
	switch (key) {
	case 'C': tk_irq_opts.count = true; break;
	case 'd': tk_irq_opts.dist = true; break;
	case 'N': tk_irq_opts.nanos = true; break;
	case 'c':
		ncpu = libbpf_num_possible_cpus();
		tk_irq_opts.cpu = tk_arg_long("--cpu", arg, 0, ncpu > 0 ? ncpu - 1 : 0);
		break;
	case ARGP_KEY_END:
		if (tk_irq_opts.count && (tk_irq_opts.dist || tk_irq_opts.nanos))
			tk_usage_error("%s counts runs: it does not go with the time options -d/--dist and -N/--nanoseconds",
				       the_kind->count_option);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static void no_task_filter(void)
{
	if (tk_filter_any() || tk_opts.filter.cgroup_ids)
		tk_usage_error("interrupts are not a task's: the task filters (-p, --tid, -u, --cgroup, --unit, --name, --ppid, -- COMMAND) and --print-cgroup do not apply; -c CPU keeps one CPU's");
}

static int configure(void *skel, void *ctx)
{
	const struct tk_skel_ops *ops = ctx;
	struct bpf_object *obj = ops->obj(skel);
	const struct { const char *name; bool val; } flags[] = {
		{ "count_only", tk_irq_opts.count }, { "dist", tk_irq_opts.dist },
		{ "nanos", tk_irq_opts.nanos },
	};
	size_t i;
	int err;

	if (tk_irq_opts.count)
		tk_programs_off(obj, the_kind->count_off);
	err = tk_set_rodata(obj, "targ_cpu", &tk_irq_opts.cpu, sizeof(tk_irq_opts.cpu));
	for (i = 0; !err && i < sizeof(flags) / sizeof(flags[0]); i++)
		err = tk_set_rodata(obj, flags[i].name, &flags[i].val, sizeof(bool));
	return err;
}

/* A row: the map's key (key_size bytes of it), then the totals summed
 * over CPUs; after tk_deltas_read, what grew in the interval; and the
 * name the kind gives the key. */
struct row {
	char key[TK_IRQ_NAME_LEN];
	struct tk_irq_val v;
	char name[64];
};

static void sum(void *row, const char *vals, int ncpu, size_t vsize)
{
	struct row *r = row;
	int cpu, s;

	for (cpu = 0; cpu < ncpu; cpu++) {
		const struct tk_irq_val *v = (const void *)(vals + cpu * vsize);

		r->v.count += v->count;
		r->v.total_ns += v->total_ns;
		for (s = 0; s < TK_IRQ_SLOTS; s++)
			r->v.slots[s] += v->slots[s];
	}
}

static bool minus(void *row, const void *prev)
{
	struct row *r = row;
	const struct row *p = prev;
	int s;

	if (p) {
		r->v.count -= p->v.count;
		r->v.total_ns -= p->v.total_ns;
		for (s = 0; s < TK_IRQ_SLOTS; s++)
			r->v.slots[s] -= p->v.slots[s];
	}
	return r->v.count;
}

static struct tk_deltas deltas = {
	.row_size = sizeof(struct row), .sum = sum, .minus = minus,
};

static const char *unit(void)
{
	return tk_irq_opts.count ? "count" : tk_irq_opts.nanos ? "nsecs" : "usecs";
}

/* The value of the text table: runs, or time in the unit. */
static unsigned long long value(const struct row *r)
{
	if (tk_irq_opts.count)
		return r->v.count;
	return tk_irq_opts.nanos ? r->v.total_ns : r->v.total_ns / 1000;
}

static int by_name(const struct row *x, const struct row *y)
{
	if (the_kind->cmp)
		return the_kind->cmp(x->key, y->key);
	return strcmp(x->name, y->name);
}

static int by_name_only(const void *a, const void *b)
{
	return strcmp(((const struct row *)a)->name, ((const struct row *)b)->name);
}

/* Name the n rows, and make one of the rows of each name (hardirqs'
 * actions that share one, as bcc, which keys by name, shows them): the
 * rows left. */
static long name_and_merge(struct row *rows, long n)
{
	long i, out = 0;
	int s;

	for (i = 0; i < n; i++)
		the_kind->name(rows[i].key, rows[i].name, sizeof(rows[i].name));
	qsort(rows, n, sizeof(*rows), by_name_only);
	for (i = 0; i < n; i++) {
		struct row *o = out ? &rows[out - 1] : NULL;

		if (o && !strcmp(o->name, rows[i].name)) {
			o->v.count += rows[i].v.count;
			o->v.total_ns += rows[i].v.total_ns;
			for (s = 0; s < TK_IRQ_SLOTS; s++)
				o->v.slots[s] += rows[i].v.slots[s];
			continue;
		}
		if (out != i)
			rows[out] = rows[i];
		out++;
	}
	return out;
}

/* bcc's orders: the table by value, largest first; -d by key. */
static int by_order(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (!tk_irq_opts.dist && value(x) != value(y))
		return value(x) < value(y) ? 1 : -1;
	return by_name(x, y);
}

static void print_json(const struct row *r, const char *name, int seq)
{
	struct tk_json j;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", tk_irq_opts.dist ? "histogram" : the_kind->section);
	tk_json_time(&j);
	tk_json_int(&j, "interval", seq);
	tk_json_str(&j, the_kind->section, name);
	if (the_kind->json_key)
		the_kind->json_key(&j, r->key);
	tk_json_uint(&j, "count", r->v.count);
	if (!tk_irq_opts.count)
		tk_json_uint(&j, "total_ns", r->v.total_ns);
	if (tk_irq_opts.dist)
		tk_hist_json_log2(&j, r->v.slots, TK_IRQ_SLOTS, unit());
	tk_json_end(&j);
}

static void print(struct bpf_map *map, const struct tk_irq_kind *kind, int seq)
{
	static struct row *rows;
	char buf[64];
	long n, i;

	the_kind = kind;
	if (!rows) {
		deltas.map = map;
		deltas.key_size = kind->key_size;
		rows = calloc(bpf_map__max_entries(map), sizeof(*rows));
		if (!rows)
			tk_fail("out of memory");
	}
	n = tk_deltas_read(&deltas, rows);
	if (n < 0)
		tk_fail("cannot read the map of interrupts: %s", strerror(-n));
	n = name_and_merge(rows, n);
	qsort(rows, n, sizeof(*rows), by_order);
	if (!tk_opts.json) {
		putchar('\n');
		if (tk_opts.time)
			printf("%-8s\n", tk_time_str(buf, sizeof(buf)));
		if (!tk_irq_opts.dist) {
			snprintf(buf, sizeof(buf), "TOTAL_%s", unit());
			printf("%-*s %11s\n", kind->width, kind->column, buf);
		}
	}
	for (i = 0; i < n; i++) {
		const char *name = rows[i].name;

		if (tk_opts.json) {
			print_json(&rows[i], name, seq);
		} else if (tk_irq_opts.dist) {
			printf("\n%s = ", kind->section);
			tk_print_safe(stdout, name, strlen(name));
			putchar('\n');
			tk_hist_print_log2(stdout, rows[i].v.slots, TK_IRQ_SLOTS, unit());
		} else {
			tk_print_safe_padded(stdout, name, strlen(name), kind->width);
			printf(" %11llu\n", value(&rows[i]));
		}
	}
	fflush(stdout);
}

struct run {
	struct bpf_map *map;
	const struct tk_irq_kind *kind;
};

static void print_interval(void *arg, int seq)
{
	struct run *r = arg;

	print(r->map, r->kind, seq);
}

int tk_irq_main(const struct tk_tool *tool, int argc, char **argv,
		const struct tk_skel_ops *ops, const struct tk_irq_kind *kind)
{
	struct run r = { .kind = kind };
	void *skel;

	the_kind = kind;
	tk_parse_args(tool, argc, argv);
	no_task_filter();
	tk_init();
	skel = tk_load(ops, configure, (void *)ops);
	r.map = bpf_object__find_map_by_name(ops->obj(skel), "irqs");
	if (!r.map)
		tk_fail("the BPF object has no map 'irqs'");
	if (kind->loaded)
		kind->loaded(ops->obj(skel));
	if (!tk_opts.json)
		printf("Tracing %s event%s... Hit Ctrl-C to end.\n", kind->what,
		       tk_irq_opts.count ? "s" : " time");
	tk_ready();
	tk_print_intervals(print_interval, &r);
	tk_losses_report(ops->obj(skel));
	ops->destroy(skel);
	return tk_exit_status();
}

/* softirq_to_name[] of kernel/softirq.c, in bcc's lower case. */
static const char *const softirq_names[] = {
	"hi", "timer", "net_tx", "net_rx", "block", "irq_poll",
	"tasklet", "sched", "hrtimer", "rcu",
};

void tk_softirq_name(unsigned vec, char *buf, size_t len)
{
	if (vec < sizeof(softirq_names) / sizeof(softirq_names[0]))
		snprintf(buf, len, "%s", softirq_names[vec]);
	else
		snprintf(buf, len, "vec%u", vec);
}
