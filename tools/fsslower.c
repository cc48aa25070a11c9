/* fsslower: file system operations slower than a threshold, one line
 * each. Run as ext4slower, xfsslower, btrfsslower or nfsslower, the
 * file system is the name's. */
#include <stdio.h>
#include <string.h>

#include "fstypes.h"
#include "fsslower.skel.h"
#include "tracekit.h"

static struct {
	const struct tk_fs *fs;
	long min_ms;
	bool min_set;
} env = { .min_ms = 10 };

static const char doc[] =
"Trace ext4, xfs, btrfs or nfs reads, writes, opens, fsyncs and getattrs\n"
"slower than a threshold (default 10 ms; 0: every one).\n"
"\v"
"bcc's columns: TIME, COMM, PID, T (R read, W write, O open, S fsync,\n"
"G getattr), BYTES (read and write: the result; else 0), OFF_KB (the\n"
"file position at the start, KiB), LAT(ms) and FILENAME (the last\n"
"component; a name longer than 31 bytes ends in \"...\"). JSON: a record\n"
"per operation with \"op\", \"bytes\", \"offset\" in bytes and \"lat_ns\".\n"
"\n"
"The file system's own functions are traced where the kernel allows it\n"
"(fentry, else kprobes), as bcc: ext4_file_read_iter, ..._write_iter,\n"
"..._open, ext4_sync_file and ext4_file_getattr, and xfs's, btrfs's and\n"
"nfs's like them (nfs: nfs_file_read, ..., and NFSv4's opens too,\n"
"nfs4_file_open and nfs_atomic_open, where a create opens the file);\n"
"their latency is the file system's alone. On a kernel with neither\n"
"(-v says), the syscall tracepoints of read, write, pread64, pwrite64,\n"
"readv, writev, preadv(2), pwritev(2), open, openat, openat2,\n"
"fsync, fdatasync and fstat (newfstat, or newfstatat/statx with\n"
"AT_EMPTY_PATH) are used for files whose file system is TYPE: they time\n"
"the whole system call, and do not see mmap'd I/O, io_uring, aio, the\n"
"kernel's own I/O or stat by path. TRACEKIT_ATTACH=tp chooses them on\n"
"any kernel.\n"
"\n"
"Examples:\n"
"  ext4slower             # ext4 operations slower than 10 ms\n"
"  fsslower -t xfs 1      # xfs operations slower than 1 ms\n"
"  btrfsslower 0          # every btrfs operation\n"
"  ext4slower -p 181 -j   # only PID 181, NDJSON\n";

static const struct argp_option options[] = {
	{ "min", 'm', "MS", 0, "Threshold in ms, as the argument min_ms (libbpf-tools' -m)", 0 },
	{ 0 },
};

static error_t parse(int key, char *arg, struct argp_state *state)
{
	(void)state;
	switch (key) {
	case 'm':
		env.min_ms = tk_arg_long("--min", arg, 0, 1000000000);
		env.min_set = true;
		break;
	case ARGP_KEY_ARG:
		if (env.min_set)
			tk_usage_error("unexpected argument '%s' after the threshold", arg);
		env.min_ms = tk_arg_long("threshold (ms)", arg, 0, 1000000000);
		env.min_set = true;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static struct tk_tool tool = {
	.name = "fsslower",
	.doc = doc,
	.options = options,
	.parser = parse,
	.args_doc = "[min_ms]",
};

static void print_json(const struct fsslower_event *e, size_t len, bool cut)
{
	struct tk_json j;

	tk_json_begin(&j, stdout);
	tk_json_str(&j, "type", "fsslower");
	tk_json_time(&j);
	tk_json_str(&j, "fs", env.fs->type);
	tk_json_int(&j, "pid", e->pid);
	tk_json_int(&j, "tid", e->tid);
	tk_json_strn(&j, "comm", e->comm, strnlen(e->comm, sizeof(e->comm)));
	tk_json_str(&j, "op", tk_fsop_name(e->op));
	tk_json_int(&j, "bytes", e->bytes);
	tk_json_uint(&j, "offset", e->offset);
	tk_json_uint(&j, "lat_ns", e->lat_ns);
	tk_json_strn(&j, "file", e->name, len);
	tk_json_bool(&j, "file_truncated", cut);
	tk_json_end(&j);
}

static int handle_event(void *ctx, const void *data, size_t size)
{
	const struct fsslower_event *e = data;
	size_t len;
	bool cut;
	char hms[16];

	(void)ctx;
	if (size < sizeof(*e) || e->op >= FSOP_MAX)
		return 0;  /* malformed */
	len = strnlen(e->name, sizeof(e->name));
	cut = e->name_len > len;
	if (tk_opts.json) {
		print_json(e, len, cut);
		return 0;
	}
	printf("%-8s ", tk_time_str(hms, sizeof(hms)));
	/* bcc: the comm cut at 14 bytes */
	tk_print_safe_padded(stdout, e->comm, strnlen(e->comm, 14), 14);
	printf(" %-6d %c %-7lld %-8llu %7.2f ", e->pid, tk_fsop_letter(e->op), e->bytes,
	       e->offset / 1024, e->lat_ns / 1e6);
	/* as filetop: a cut name's last 3 bytes become "..." */
	tk_print_safe(stdout, e->name, cut && len > 3 ? len - 3 : len);
	if (cut)
		fputs("...", stdout);
	putchar('\n');
	return 0;
}

static int configure(void *s, void *ctx)
{
	struct fsslower_bpf *skel = s;
	const enum tk_way *way = ctx;

	skel->rodata->min_lat_ns = (unsigned long long)env.min_ms * 1000000;
	tk_fs_configure(skel->obj, env.fs, *way);
	return 0;
}

TK_SKEL_OPS(fsslower_bpf);

int main(int argc, char **argv)
{
	static enum tk_way way;
	struct fsslower_bpf *skel;

	skel = tk_fs_start(&tool, &env.fs, "slower", argc, argv, &fsslower_bpf_ops, configure,
			   &way);
	tk_events_open(skel->obj, handle_event, NULL);
	if (!tk_opts.json) {
		if (env.min_ms)
			printf("Tracing %s operations slower than %ld ms", env.fs->type, env.min_ms);
		else
			printf("Tracing %s operations", env.fs->type);
		printf("... Hit Ctrl-C to end.\n");
		printf("%-8s %-14s %-6s %1s %-7s %-8s %7s %s\n", "TIME", "COMM", "PID", "T",
		       "BYTES", "OFF_KB", "LAT(ms)", "FILENAME");
	}
	tk_ready();
	tk_events_loop();
	tk_losses_report(skel->obj);
	fsslower_bpf__destroy(skel);
	return tk_exit_status();
}
