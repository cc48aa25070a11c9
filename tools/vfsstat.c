/* vfsstat: VFS read, write, fsync, open and create calls per second. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vfsstat.h"
#include "vfsstat.skel.h"
#include "tracekit.h"

static const char doc[] =
"Count VFS calls (read, write, fsync, open, create) per interval.\n"
"\v"
"READ/s counts calls of the kernel function vfs_read (read(2), pread64(2)),\n"
"WRITE/s of vfs_write (write(2), pwrite64(2)), OPEN/s of vfs_open (each\n"
"open of a file by path: open(2), openat(2), exec, ...), CREATE/s of\n"
"vfs_create (mknod(2) of a regular file, creations by nfsd or overlayfs;\n"
"open(2) with O_CREAT calls the filesystem directly). readv(2), writev(2),\n"
"splice and the kernel's own file I/O do not go through vfs_read or\n"
"vfs_write; on overlayfs an open or create can count twice (the overlay,\n"
"then the filesystem below). FSYNC/s counts the fsync(2) and fdatasync(2)\n"
"calls of 64-bit programs at their syscall functions, since the VFS\n"
"functions they reach are compiled inline (bcc's vfs_fsync is never called\n"
"on Debian's 5.10 to 6.12); msync(2) and O_SYNC writes are not counted.\n"
"Rates are per second over the time each interval really lasted, rounded;\n"
"an interrupted run prints its last, shorter interval too. JSON records\n"
"hold the raw counts and that time (\"seconds\").\n"
"The TIME column is always printed (--time changes nothing).\n"
"--print-cgroup: a row per cgroup v2 with calls in the interval, in the\n"
"order the cgroups were made (by id), its path in a last column CGROUP\n"
"(JSON: \"cgroup\"); an interval without calls prints no row.\n"
"\n"
"Examples:\n"
"  vfsstat                # every second, until Ctrl-C\n"
"  vfsstat 5 3            # every five seconds, three times\n"
"  vfsstat -p 181         # only process 181\n"
"  vfsstat -c /sys/fs/cgroup/system.slice  # only this cgroup\n"
"  vfsstat -j 10          # NDJSON, every ten seconds\n"
"  vfsstat --print-cgroup 5  # every five seconds, by cgroup\n";

static const struct tk_tool tool = {
	.name = "vfsstat",
	.doc = doc,
	.periodic = true,
};

/* JSON members, and bcc's columns: "%-8s  " then " %8s" each; rows "%-8s: ". */
static const char *const names[VFSSTAT_SLOTS] = {
	[VFSSTAT_READ] = "read",
	[VFSSTAT_WRITE] = "write",
	[VFSSTAT_FSYNC] = "fsync",
	[VFSSTAT_OPEN] = "open",
	[VFSSTAT_CREATE] = "create",
};
static const char *const columns[VFSSTAT_SLOTS] = {
	[VFSSTAT_READ] = "READ/s",
	[VFSSTAT_WRITE] = "WRITE/s",
	[VFSSTAT_FSYNC] = "FSYNC/s",
	[VFSSTAT_OPEN] = "OPEN/s",
	[VFSSTAT_CREATE] = "CREATE/s",
};

/* --print-cgroup adds CGROUP last: a path of any length leaves the
 * rates aligned. */
static void print_header(void)
{
	int i;

	printf("%-8s  ", "TIME");
	for (i = 0; i < VFSSTAT_SLOTS; i++)
		printf(" %8s", columns[i]);
	if (tk_opts.filter.cgroup_ids)
		printf(" %s", TK_CGROUP_HEADER);
	putchar('\n');
	fflush(stdout);
}

/* One row: counts (those of the cgroup with id cgroup, --print-cgroup)
 * over secs seconds, at hms (the TIME column). */
static void print_counts(const unsigned long long *delta, unsigned long long cgroup,
			 long seq, double secs, const char *hms)
{
	struct tk_json j;
	int i;

	if (tk_opts.json) {
		tk_json_begin(&j, stdout);
		tk_json_str(&j, "type", "vfsstat");
		tk_json_time(&j);
		tk_json_int(&j, "interval", seq);
		tk_json_double(&j, "seconds", (long long)(secs * 1e6 + 0.5) / 1e6);
		if (tk_opts.filter.cgroup_ids)
			tk_json_cgroup(&j, cgroup);
		for (i = 0; i < VFSSTAT_SLOTS; i++)
			tk_json_uint(&j, names[i], delta[i]);
		tk_json_end(&j);
		return;
	}
	printf("%-8s: ", hms);
	for (i = 0; i < VFSSTAT_SLOTS; i++)
		printf(" %8llu", secs > 0 ? (unsigned long long)(delta[i] / secs + 0.5)
					  : delta[i]);
	if (tk_opts.filter.cgroup_ids) {
		putchar(' ');
		tk_print_cgroup(stdout, cgroup, 0);
	}
	putchar('\n');
}

/* The one row of a run without --print-cgroup: counts since the last. */
static void print_row(struct vfsstat_bpf *skel, long seq, double secs)
{
	static unsigned long long prev[VFSSTAT_SLOTS];
	unsigned long long now[VFSSTAT_SLOTS], delta[VFSSTAT_SLOTS];
	char hms[16];
	int i, err;

	for (i = 0; i < VFSSTAT_SLOTS; i++) {
		err = tk_percpu_sum(skel->maps.counts, i, &now[i]);
		if (err)
			tk_fail("cannot read map counts: %s", strerror(-err));
		delta[i] = now[i] - prev[i];
		prev[i] = now[i];
	}
	print_counts(delta, 0, seq, secs, tk_time_str(hms, sizeof(hms)));
}

/* --print-cgroup: a cgroup's totals, summed over CPUs. */
struct cgroup_counts {
	unsigned long long id;
	unsigned long long n[VFSSTAT_SLOTS];
};

static struct cgroup_counts *cg_prev, *cg_cur;  /* at the last rows, now */
static size_t n_cg_prev, n_cg_cur;

static void add_cgroup(const void *key, const char *vals, int ncpu, size_t vsize,
		       void *ctx)
{
	struct cgroup_counts *c = &cg_cur[n_cg_cur++];
	int cpu, i;

	(void)ctx;
	memset(c, 0, sizeof(*c));
	c->id = *(const unsigned long long *)key;
	for (cpu = 0; cpu < ncpu; cpu++) {
		const struct vfsstat_counts *v = (const void *)(vals + cpu * vsize);

		for (i = 0; i < VFSSTAT_SLOTS; i++)
			c->n[i] += v->n[i];
	}
}

static int by_id(const void *a, const void *b)
{
	const struct cgroup_counts *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* A row for each cgroup with calls since the last rows, by id. A cgroup
 * with none is deleted from the map, so that the map holds live cgroups
 * only (a call made between this read and the delete is lost). */
static void print_cgroup_rows(struct vfsstat_bpf *skel, long seq, double secs)
{
	struct bpf_map *map = skel->maps.by_cgroup;
	struct cgroup_counts *rows;  /* n: the calls since the last rows */
	size_t i, j = 0, kept = 0, n = 0;
	char hms[16];
	int k, err;

	cg_cur = malloc(bpf_map__max_entries(map) * sizeof(*cg_cur));
	rows = malloc(bpf_map__max_entries(map) * sizeof(*rows));
	if (!cg_cur || !rows)
		tk_fail("out of memory");
	n_cg_cur = 0;
	err = tk_percpu_map_read(map, add_cgroup, NULL);
	if (err)
		tk_fail("cannot read map by_cgroup: %s", strerror(-err));
	qsort(cg_cur, n_cg_cur, sizeof(*cg_cur), by_id);
	for (i = 0; i < n_cg_cur; i++) {
		const struct cgroup_counts *c = &cg_cur[i];
		struct cgroup_counts *d = &rows[n];
		unsigned long long any = 0;

		while (j < n_cg_prev && cg_prev[j].id < c->id)
			j++;
		d->id = c->id;
		for (k = 0; k < VFSSTAT_SLOTS; k++) {
			d->n[k] = c->n[k];
			if (j < n_cg_prev && cg_prev[j].id == c->id)
				d->n[k] -= cg_prev[j].n[k];
			any |= d->n[k];
		}
		if (any) {
			n++;
			cg_cur[kept++] = *c;
		} else {
			bpf_map__delete_elem(map, &c->id, sizeof(c->id), 0);
		}
	}
	/* Paths first (a new cgroup walks the hierarchy): the rows of an
	 * interval are then written together, at one time. */
	for (i = 0; i < n; i++)
		tk_cgroup_path(rows[i].id);
	tk_time_str(hms, sizeof(hms));
	for (i = 0; i < n; i++)
		print_counts(rows[i].n, rows[i].id, seq, secs, hms);
	free(rows);
	free(cg_prev);
	cg_prev = cg_cur;
	n_cg_prev = kept;
	cg_cur = NULL;
}

/* Create only the map this run counts in. */
static int configure(void *s, void *ctx)
{
	struct vfsstat_bpf *skel = s;

	(void)ctx;
	bpf_map__set_autocreate(skel->maps.counts, !tk_opts.filter.cgroup_ids);
	bpf_map__set_autocreate(skel->maps.by_cgroup, tk_opts.filter.cgroup_ids);
	return 0;
}

TK_SKEL_OPS(vfsstat_bpf);

int main(int argc, char **argv)
{
	struct vfsstat_bpf *skel;
	double start, next, now;
	long seq = 0;
	bool last;

	tk_parse_args(&tool, argc, argv);
	if (!tk_opts.interval)
		tk_opts.interval = 1;
	tk_init();
	skel = tk_load(&vfsstat_bpf_ops, configure, NULL);
	if (!tk_opts.json)
		print_header();
	tk_ready();
	/* The first row's time runs from when tracing began (tk_elapsed's
	 * 0, set before the tool says it is ready), not from here: were the
	 * tool descheduled in between, the row would cover less time than
	 * its counts. */
	start = 0;
	next = tk_opts.interval;
	do {
		now = next - tk_elapsed();
		tk_sleep_ms(now > 0 ? (int)(now * 1000) + 1 : 0);
		last = tk_exiting();
		now = tk_elapsed();
		if (!last && now < next)
			continue;  /* woken early */
		if (tk_opts.filter.cgroup_ids)
			print_cgroup_rows(skel, ++seq, now - start);
		else
			print_row(skel, ++seq, now - start);
		fflush(stdout);
		start = now;
		next += tk_opts.interval;
		/* A stop that came during the print (after its read) brings
		 * one more row, as tk_print_intervals does. */
		last = last || (tk_opts.count && seq >= tk_opts.count);
	} while (!last);
	tk_losses_report(skel->obj);
	vfsstat_bpf__destroy(skel);
	return tk_exit_status();
}
