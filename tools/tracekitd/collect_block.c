/* block: block I/O latency (a histogram), I/Os and bytes, per disk and
 * operation, with biolatency's BPF (-D -F, and its bytes). */
#include "tracekitd.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "biolatency.h"
#include "biolatency.skel.h"
#include "block.h"
#include "prom.h"
#include "tracekit.h"

/* Every disk, every submitter: the block_getrq programs stay unloaded. */
static int configure(void *s, void *ctx)
{
	struct biolatency_bpf *sk = s;
	bool yes = true;
	unsigned int need = TK_BLOCK_NEED_DEV | TK_BLOCK_NEED_FLAGS | TK_BLOCK_NEED_LEN;

	(void)ctx;
	if (tk_set_rodata(sk->obj, "per_disk", &yes, sizeof(yes)) ||
	    tk_set_rodata(sk->obj, "per_flags", &yes, sizeof(yes)) ||
	    tk_set_rodata(sk->obj, "count_bytes", &yes, sizeof(yes)) ||
	    tk_set_rodata(sk->obj, "tk_block_need", &need, sizeof(need)))
		return -ENOENT;
	return tk_block_configure(sk->obj, 0, false);
}

COLLECTOR_SKELETON(biolatency_bpf, configure);

static int start(const struct config *c, char *err, size_t errlen)
{
	(void)c;
	return load_skel(err, errlen);
}

/* The operations by their REQ_OP_* number (tk_block.h); others "other". */
static const char *op_name(unsigned int flags)
{
	switch (TK_BIO_OP(flags)) {
	case 0: return "read";
	case 1: return "write";
	case 2: return "flush";
	case 3: return "discard";
	case 5: return "secure_erase";
	case 9: return "write_zeroes";
	default: return "other";
	}
}

/* The map's histograms summed over the flags of each (disk, operation):
 * the map has a key per (disk, operation and flags), at most
 * BIOLAT_MAX_KEYS. */
struct row {
	unsigned int dev;
	const char *op;
	struct biolat_hist h;
};

static struct row rows[BIOLAT_MAX_KEYS];

static int read_rows(void)
{
	struct bpf_map *map = skel->maps.hists;
	struct biolat_key key, next, *prev = NULL;
	struct biolat_hist h;
	int n = 0, i, b;

	while (!bpf_map__get_next_key(map, prev, &next, sizeof(next))) {
		key = next;
		prev = &key;
		if (bpf_map__lookup_elem(map, &key, sizeof(key), &h, sizeof(h), 0))
			continue;  /* not there any more */
		for (i = 0; i < n; i++)
			if (rows[i].dev == key.dev && !strcmp(rows[i].op, op_name(key.flags)))
				break;
		if (i == n) {
			if (n == BIOLAT_MAX_KEYS)
				break;
			memset(&rows[n], 0, sizeof(rows[n]));
			rows[n].dev = key.dev;
			rows[n].op = op_name(key.flags);
			n++;
		}
		for (b = 0; b < BIOLAT_SLOTS; b++)
			rows[i].h.slots[b] += h.slots[b];
		rows[i].h.count += h.count;
		rows[i].h.sum_ns += h.sum_ns;
		rows[i].h.bytes += h.bytes;
	}
	return n;
}

static void write_metrics(FILE *f)
{
	int n = read_rows(), i;

	tk_prom_family(f, "tracekit_block_io_latency_seconds", "histogram",
		       "Block I/O latency from issue to the driver to completion, by disk and operation (biolatency -D).");
	for (i = 0; i < n; i++) {
		const char *labels[] = { "disk", tk_disk_name(rows[i].dev), "op", rows[i].op };

		/* Buckets of whole microseconds: le = 2^(b+1) us. */
		tk_prom_log2_histogram(f, "tracekit_block_io_latency_seconds", rows[i].h.slots,
				       BIOLAT_SLOTS, 1e-6, rows[i].h.sum_ns / 1e9, labels, 2);
	}
	tk_prom_family(f, "tracekit_block_ios_total", "counter",
		       "Block I/Os completed, by disk and operation.");
	for (i = 0; i < n; i++)
		tk_prom_sample(f, "tracekit_block_ios_total", rows[i].h.count,
			       "disk", tk_disk_name(rows[i].dev), "op", rows[i].op, NULL);
	tk_prom_family(f, "tracekit_block_io_bytes_total", "counter",
		       "Bytes of the block I/Os completed, by disk and operation.");
	for (i = 0; i < n; i++)
		tk_prom_sample(f, "tracekit_block_io_bytes_total", rows[i].h.bytes,
			       "disk", tk_disk_name(rows[i].dev), "op", rows[i].op, NULL);
}

static void stop(void)
{
	unload_skel();
}

const struct collector collector_block = {
	.name = "block",
	.help = "block I/O latency histogram, I/Os and bytes by disk and operation (biolatency)",
	.start = start,
	.write = write_metrics,
	.stop = stop,
	.object = object,
	.off_by_default = true,
};
