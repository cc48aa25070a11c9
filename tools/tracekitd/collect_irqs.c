/* hardirqs and softirqs: what their collectors share, the totals of
 * the tools' map irqs (bpf/tk_irq.bpf.h: time and runs per interrupt,
 * no histograms) written as two counter families. */
#include "tracekitd.h"

#include <bpf/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "irqstat.h"
#include "prom.h"
#include "tk_irq.h"
#include "tracekit.h"

/* One interrupt's totals over all CPUs. */
struct irq_sum {
	char name[TK_IRQ_NAME_LEN + 1];
	unsigned long long count, total_ns;
};

struct irq_sums {
	struct irq_sum *v;
	size_t n, cap;
	int names_fd;  /* hardirqs' names by action address; -1: softirqs' vectors */
};

static struct irq_sum *irq_sum_of(struct irq_sums *s, const char *name)
{
	struct irq_sum *n;
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->v[i].name, name))
			return &s->v[i];
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 32;
		n = realloc(s->v, s->cap * sizeof(*n));
		if (!n)
			return NULL;
		s->v = n;
	}
	n = &s->v[s->n++];
	memset(n, 0, sizeof(*n));
	snprintf(n->name, sizeof(n->name), "%s", name);
	return n;
}

static void add(const void *key, const char *vals, int ncpu, size_t vsize,
		void *ctx)
{
	struct irq_sums *s = ctx;
	struct irq_sum *sum;
	char name[TK_IRQ_NAME_LEN + 1];
	int c;

	/* softirqs' array has every vector: those never seen stay out,
	 * as they do from hardirqs' hash. */
	for (c = 0; c < ncpu; c++)
		if (((const struct tk_irq_val *)(const void *)(vals + c * vsize))->count)
			break;
	if (c == ncpu)
		return;
	memset(name, 0, sizeof(name));
	if (s->names_fd < 0)
		tk_softirq_name(*(const unsigned *)key, name, sizeof(name));
	else if (bpf_map_lookup_elem(s->names_fd, key, name))
		snprintf(name, sizeof(name), "?");  /* written with the totals */
	sum = irq_sum_of(s, name);
	if (!sum)
		return;
	for (c = 0; c < ncpu; c++) {
		const struct tk_irq_val *v = (const void *)(vals + c * vsize);

		sum->count += v->count;
		sum->total_ns += v->total_ns;
	}
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct irq_sum *)a)->name, ((const struct irq_sum *)b)->name);
}

/* The two families of one tool's map: seconds, then runs. */
void irqs_write(FILE *f, struct bpf_map *map, struct bpf_map *names, const char *tool,
		       const char *label, const char *seconds, const char *seconds_help,
		       const char *runs, const char *runs_help)
{
	struct irq_sums s = { .names_fd = names ? bpf_map__fd(names) : -1 };
	size_t i;
	int err;

	err = tk_percpu_map_read(map, add, &s);
	if (err) {
		tk_warn("%s: cannot read map irqs: %s", tool, strerror(-err));
		free(s.v);
		return;
	}
	if (s.n)
		qsort(s.v, s.n, sizeof(*s.v), by_name);
	tk_prom_family(f, seconds, "counter", seconds_help);
	for (i = 0; i < s.n; i++)
		tk_prom_sample(f, seconds, s.v[i].total_ns / 1e9, label, s.v[i].name, NULL);
	tk_prom_family(f, runs, "counter", runs_help);
	for (i = 0; i < s.n; i++)
		tk_prom_sample(f, runs, s.v[i].count, label, s.v[i].name, NULL);
	free(s.v);
}
