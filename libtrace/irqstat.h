/* hardirqs and softirqs: their shared options (-C, -d, -N, -c CPU), the
 * BPF side's settings, and the per-interval output (bcc's columns or
 * histograms, or NDJSON) of the per-CPU totals in bpf/tk_irq.bpf.h. */
#ifndef TK_IRQSTAT_H
#define TK_IRQSTAT_H

#include <bpf/libbpf.h>
#include <stdbool.h>
#include <stddef.h>

#include "json.h"
#include "opts.h"

struct tk_irq_opts {
	bool count;   /* -C: runs, not time */
	bool dist;    /* -d: histograms */
	bool nanos;   /* -N */
	int cpu;      /* -c CPU; -1: every CPU */
};

extern struct tk_irq_opts tk_irq_opts;

/* The tools' argp parser (tk_tool.parser): -C, -d, -N, -c, checked
 * together at the end; and bcc's options they have not
 * (tk_tool.bcc_missing). */
error_t tk_irq_parse(int key, char *arg, struct argp_state *state);
extern const struct tk_bcc_missing tk_irq_bcc_missing[];

/* What the tool counts. */
struct tk_irq_kind {
	const char *what;     /* "hard irq": "Tracing hard irq event time..." */
	const char *count_off; /* the probe family -C does not load */
	const char *count_option; /* -C's names, for usage errors: "-C/--count" */
	const char *column;   /* text header: "HARDIRQ" */
	int width;            /* of that column (bcc's) */
	const char *section;  /* -d section label, JSON type: "hardirq" */
	size_t key_size;      /* of the map's key */
	/* After the load: what name needs of the object (hardirqs' map of
	 * names); NULL: nothing. */
	void (*loaded)(struct bpf_object *obj);
	/* The interrupt's name from the map's key, into buf. Keys of one
	 * name are shown as one, their totals added. */
	void (*name)(const void *key, char *buf, size_t len);
	/* -d: the order of the sections (bcc's: by key); NULL: by name. */
	int (*cmp)(const void *a, const void *b);
	/* JSON members of the key besides the name (softirqs' "vec"). */
	void (*json_key)(struct tk_json *j, const void *key);
};

/* The whole tool after its options: no task filter (a usage error),
 * load (the object includes bpf/tk_irq.bpf.h and its map of totals is
 * "irqs"), print per interval (bcc's columns or histograms, or NDJSON:
 * what grew since the last), the losses; the exit status. */
struct tk_skel_ops;
int tk_irq_main(const struct tk_tool *tool, int argc, char **argv,
		const struct tk_skel_ops *ops, const struct tk_irq_kind *kind);

/* softirqs' name of vector vec (kernel/softirq.c's softirq_to_name in
 * bcc's lower case: "net_rx"; "vecN" past them), into buf. */
void tk_softirq_name(unsigned vec, char *buf, size_t len);

#endif
