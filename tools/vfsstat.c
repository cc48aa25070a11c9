/* vfsstat: VFS read, write, fsync, open and create calls per second. */
#include <stdio.h>
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
"\n"
"Examples:\n"
"  vfsstat                # every second, until Ctrl-C\n"
"  vfsstat 5 3            # every five seconds, three times\n"
"  vfsstat -p 181         # only process 181\n"
"  vfsstat -c /sys/fs/cgroup/system.slice  # only this cgroup\n"
"  vfsstat -j 10          # NDJSON, every ten seconds\n";

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

static void print_header(void)
{
	int i;

	printf("%-8s  ", "TIME");
	for (i = 0; i < VFSSTAT_SLOTS; i++)
		printf(" %8s", columns[i]);
	putchar('\n');
	fflush(stdout);
}

/* One row: the counts since the last row, over secs seconds. */
static void print_row(struct vfsstat_bpf *skel, unsigned long long *prev,
		      long seq, double secs)
{
	unsigned long long now[VFSSTAT_SLOTS], delta[VFSSTAT_SLOTS];
	struct tk_json j;
	char buf[16];
	int i, err;

	for (i = 0; i < VFSSTAT_SLOTS; i++) {
		err = tk_percpu_sum(skel->maps.counts, i, &now[i]);
		if (err)
			tk_fail("cannot read map counts: %s", strerror(-err));
		delta[i] = now[i] - prev[i];
		prev[i] = now[i];
	}
	if (tk_opts.json) {
		tk_json_begin(&j, stdout);
		tk_json_str(&j, "type", "vfsstat");
		tk_json_time(&j);
		tk_json_int(&j, "interval", seq);
		tk_json_double(&j, "seconds", (long long)(secs * 1e6 + 0.5) / 1e6);
		for (i = 0; i < VFSSTAT_SLOTS; i++)
			tk_json_uint(&j, names[i], delta[i]);
		tk_json_end(&j);
	} else {
		printf("%-8s: ", tk_time_str(buf, sizeof(buf)));
		for (i = 0; i < VFSSTAT_SLOTS; i++)
			printf(" %8llu", secs > 0 ? (unsigned long long)(delta[i] / secs + 0.5)
						  : delta[i]);
		putchar('\n');
	}
	fflush(stdout);
}

TK_SKEL_OPS(vfsstat_bpf);

int main(int argc, char **argv)
{
	unsigned long long prev[VFSSTAT_SLOTS] = { 0 };
	struct vfsstat_bpf *skel;
	double start, next, now;
	long seq = 0;
	bool last;

	tk_parse_args(&tool, argc, argv);
	if (!tk_opts.interval)
		tk_opts.interval = 1;
	tk_init();
	skel = tk_load(&vfsstat_bpf_ops, NULL, NULL);
	start = tk_elapsed();  /* counting began as the probes attached */
	next = start + tk_opts.interval;
	if (!tk_opts.json)
		print_header();
	tk_ready();
	do {
		now = next - tk_elapsed();
		tk_sleep_ms(now > 0 ? (int)(now * 1000) + 1 : 0);
		last = tk_exiting();
		now = tk_elapsed();
		if (!last && now < next)
			continue;  /* woken early */
		print_row(skel, prev, ++seq, now - start);
		start = now;
		next += tk_opts.interval;
		last = last || (tk_opts.count && seq >= tk_opts.count);
	} while (!last);
	tk_losses_report(skel->obj);
	vfsstat_bpf__destroy(skel);
	return tk_exit_status();
}
