/* fs: file system operation latency (read, write, open, fsync, getattr)
 * per file system type, with fsdist's BPF: one fsdist object per file
 * system (its probes and rodata name one), loaded kernel functions
 * first, else syscall tracepoints, as fsdist. */
#include "tracekitd.h"

#include <string.h>

#include "tracekit.h"  /* before the skeleton: its rodata's struct tk_filter */

#include "fsdist.skel.h"
#include "fstypes.h"
#include "kfunc_or_tp.h"
#include "prom.h"

#define FS_MAX 4  /* the file systems libtrace/fstypes.c knows */

TK_SKEL_OPS(fsdist_bpf);

static struct {
	const struct tk_fs *fs;
	struct fsdist_bpf *skel;
	enum tk_way way;
} loaded[FS_MAX];
static int n_loaded;

/* ctx: the file system being loaded (its way is set before each try). */
static int configure(void *s, void *ctx)
{
	struct fsdist_bpf *sk = s;
	int i = (int)(long)ctx;

	/* unit_ns stays 1000: buckets of whole microseconds */
	tk_fs_configure(sk->obj, loaded[i].fs, loaded[i].way);
	return 0;
}

static void stop(void);

/* Is fs among the configured (every known one when none is)? */
static bool wanted(const struct config *c, const struct tk_fs *fs)
{
	char copy[sizeof(c->fs_types)], *tok, *save = NULL;

	if (!c->fs_types[0])
		return true;
	strcpy(copy, c->fs_types);
	for (tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save))
		if (!strcmp(tok, fs->type))
			return true;
	return false;
}

static int start(const struct config *c, char *err, size_t errlen)
{
	const struct tk_fs *fs;
	char why[512];
	unsigned i;
	int present;

	n_loaded = 0;
	for (i = 0; (fs = tk_fs_at(i)) && n_loaded < FS_MAX; i++) {
		if (!wanted(c, fs))
			continue;
		present = tk_fs_present(fs);
		if (present <= 0) {
			/* Absent is no failure: the others still count. */
			tk_warn("collector fs: %s skipped: %s", fs->type,
				present < 0 ? "cannot read /proc/filesystems"
					    : "not in /proc/filesystems (not built in, module not loaded)");
			continue;
		}
		loaded[n_loaded].fs = fs;
		tk_fs_targets(fs);
		loaded[n_loaded].skel = tk_try_load_kfunc_or_tp(&fsdist_bpf_ops, configure,
								(void *)(long)n_loaded,
								&loaded[n_loaded].way,
								tk_fs_tp_blind, why, sizeof(why));
		if (!loaded[n_loaded].skel) {
			snprintf(err, errlen, "%s: %s", fs->type, why);
			stop();
			return -1;
		}
		/* Said always, not only with -v: what the series can miss. */
		if (loaded[n_loaded].way == TK_WAY_TP)
			tk_warn("collector fs: %s by syscall tracepoints (no kernel function "
				"tracing here); they cannot see %s", fs->type, tk_fs_tp_blind);
		else
			tk_notice("collector fs: %s by its kernel functions", fs->type);
		n_loaded++;
	}
	if (!n_loaded) {
		snprintf(err, errlen, "none of its file systems (%s) is in /proc/filesystems",
			 c->fs_types[0] ? c->fs_types : "ext4 xfs btrfs nfs");
		return -1;
	}
	return 0;
}

/* The array's entry for one operation (the key), summed over CPUs. */
static void add(const void *key, const char *vals, int ncpu, size_t vsize, void *ctx)
{
	unsigned op = *(const unsigned *)key;
	struct fsdist_slots *sum = (struct fsdist_slots *)ctx + op;
	int c, b;

	if (op >= FSOP_MAX)
		return;
	for (c = 0; c < ncpu; c++) {
		const struct fsdist_slots *v = (const void *)(vals + c * vsize);

		for (b = 0; b < FSOP_SLOTS; b++)
			sum->slots[b] += v->slots[b];
		sum->sum_ns += v->sum_ns;
	}
}

static void write_metrics(FILE *f)
{
	static const char name[] = "tracekit_fs_op_latency_seconds";
	struct fsdist_slots sums[FS_MAX][FSOP_MAX];
	unsigned op;
	int i, err;

	memset(sums, 0, sizeof(sums));
	for (i = 0; i < n_loaded; i++) {
		err = tk_percpu_map_read(loaded[i].skel->maps.hists, add, sums[i]);
		if (err) {
			tk_warn("fs: cannot read map hists: %s", strerror(-err));
			return;
		}
	}
	tk_prom_family(f, name, "histogram",
		       "File system operation latency, by file system type and operation (fsdist).");
	for (i = 0; i < n_loaded; i++)
		for (op = 0; op < FSOP_MAX; op++) {
			const char *labels[] = { "fs", loaded[i].fs->type, "op", tk_fsop_name(op) };

			/* Buckets of whole microseconds: le = 2^(b+1) us. */
			tk_prom_log2_histogram(f, name, sums[i][op].slots, FSOP_SLOTS, 1e-6,
					       sums[i][op].sum_ns / 1e9, labels, 2);
		}
}

/* The first loaded object stands for the collector in the health
 * metrics. */
static struct bpf_object *object(void)
{
	return n_loaded ? loaded[0].skel->obj : NULL;
}

static void stop(void)
{
	int i;

	for (i = 0; i < FS_MAX; i++) {
		if (!loaded[i].skel)
			continue;
		tk_detach_object(loaded[i].skel->obj);
		fsdist_bpf__destroy(loaded[i].skel);
		loaded[i].skel = NULL;
	}
	n_loaded = 0;
}

const struct collector collector_fs = {
	.name = "fs",
	.help = "file system operation latency histogram by file system type and operation (fsdist)",
	.start = start,
	.write = write_metrics,
	.stop = stop,
	.object = object,
	.off_by_default = true,
};
