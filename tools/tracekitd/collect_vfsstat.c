/* vfsstat: VFS calls by operation (kernel functions: fentry or kprobes). */
#include "tracekitd.h"

#include <string.h>

#include "prom.h"
#include "tracekit.h"
#include "vfsstat.h"
#include "vfsstat.skel.h"

/* vfsstat's counting without --print-cgroup: the per-CPU array only. */
static int configure(void *s, void *ctx)
{
	struct vfsstat_bpf *sk = s;

	(void)ctx;
	bpf_map__set_autocreate(sk->maps.by_cgroup, false);
	return 0;
}

COLLECTOR_SKELETON(vfsstat_bpf, configure);

static int start(const struct config *c, char *err, size_t errlen)
{
	(void)c;
	return load_skel(err, errlen);
}

static void add(const void *key, const char *vals, int ncpu, size_t vsize,
		void *ctx)
{
	unsigned long long *sums = ctx;
	unsigned slot = *(const unsigned *)key;
	int c;

	if (slot >= VFSSTAT_SLOTS)
		return;
	for (c = 0; c < ncpu; c++)
		sums[slot] += *(const unsigned long long *)(vals + c * vsize);
}

static void write_metrics(FILE *f)
{
	static const char *const ops[VFSSTAT_SLOTS] = {
		"read", "write", "fsync", "open", "create",
	};
	unsigned long long sums[VFSSTAT_SLOTS] = { 0 };
	int i, err;

	err = tk_percpu_map_read(skel->maps.counts, add, sums);
	if (err) {
		tk_warn("vfsstat: cannot read map counts: %s", strerror(-err));
		return;
	}
	tk_prom_family(f, "tracekit_vfs_calls_total", "counter",
		       "VFS calls by operation: vfs_read, vfs_write, fsync and fdatasync, vfs_open, vfs_create (vfsstat).");
	for (i = 0; i < VFSSTAT_SLOTS; i++)
		tk_prom_sample(f, "tracekit_vfs_calls_total", sums[i], "op", ops[i], NULL);
}

static void stop(void)
{
	unload_skel();
}

const struct collector collector_vfsstat = {
	.name = "vfsstat",
	.help = "VFS reads, writes, fsyncs, opens and creates (vfsstat)",
	.start = start,
	.write = write_metrics,
	.stop = stop,
	.object = object,
};
