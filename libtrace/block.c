/* Block devices: disk names, and the block tracepoints' argument layout. */
#include <bpf/btf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "block.h"
#include "filter.h"
#include "bpf.h"
#include "kbtf.h"
#include "opts.h"
#include "tk_features.h"
#include "tk_block.h"

unsigned int tk_disk_arg(const char *option, const char *name)
{
	unsigned int major, minor;
	char path[PATH_MAX];
	FILE *f;
	int n;

	if (!*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		tk_usage_error("invalid %s value '%s': expected a disk name such as sda or loop0 (see /sys/block)",
			       option, name);
	snprintf(path, sizeof(path), "/sys/class/block/%s/dev", name);
	f = fopen(path, "r");
	if (!f)
		tk_usage_error("invalid %s value '%s': no such disk (see /sys/block)",
			       option, name);
	n = fscanf(f, "%u:%u", &major, &minor);
	fclose(f);
	if (n != 2)
		tk_usage_error("invalid %s value '%s': cannot read its device number",
			       option, name);
	snprintf(path, sizeof(path), "/sys/class/block/%s/partition", name);
	if (access(path, F_OK) == 0)
		tk_usage_error("invalid %s value '%s': a partition; give its disk (I/O is counted per disk)",
			       option, name);
	return TK_KDEV(major, minor);
}

/* Names seen, kept for the run: a tool sees a handful of disks. */
static struct disk_name {
	unsigned int dev;
	char name[32];
} names[64];
static int nnames;

const char *tk_disk_name(unsigned int dev)
{
	char path[64], link[PATH_MAX];
	const char *base;
	ssize_t n;
	int i;

	for (i = 0; i < nnames; i++)
		if (names[i].dev == dev)
			return names[i].name;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", TK_KDEV_MAJOR(dev),
		 TK_KDEV_MINOR(dev));
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return "?";   /* not kept: the disk may appear later */
	link[n] = 0;
	base = strrchr(link, '/');
	base = base ? base + 1 : link;
	if (nnames == (int)(sizeof(names) / sizeof(names[0])))
		nnames--;     /* full: the last slot is reused */
	names[nnames].dev = dev;
	n = strnlen(base, sizeof(names[nnames].name) - 1);
	memcpy(names[nnames].name, base, n);
	names[nnames].name[n] = 0;
	return names[nnames++].name;
}

/* The bits of the kernel's own issue stamp (tk_block_kernel_stamps in
 * bpf/tk_block.bpf.h): the enumerators in its BTF on kernels that made
 * them enumerators, else the BPF's defaults (the #defines before). */
static int set_stats_bits(struct bpf_object *obj)
{
	long long v;
	__u32 bit, mask;
	int err = 0;

	if (!tk_kernel_enumerator("QUEUE_FLAG_STATS", &v) && v >= 0 && v < 64) {
		bit = v;
		err = tk_set_rodata(obj, "tk_block_qflag_stats", &bit, sizeof(bit));
	}
	if (!err && !tk_kernel_enumerator("__RQF_STATS", &v) && v >= 0 && v < 32) {
		mask = 1u << v;
		err = tk_set_rodata(obj, "tk_block_rqf_stats", &mask, sizeof(mask));
	}
	return err;
}

int tk_block_configure(struct bpf_object *obj, unsigned int dev, bool who)
{
	bool who_on = who || tk_filter_any();
	/* (queue, rq) before 5.11; (queue, bio, rw) before 5.11 too. */
	int rq_arg = tk_tp_nargs("block_rq_issue") == 2;
	int bio_arg = tk_tp_nargs("block_getrq") == 3;
	int err;

	err = tk_set_rodata(obj, "tk_block_rq_arg", &rq_arg, sizeof(rq_arg));
	if (!err || err == -ENOENT)
		err = tk_set_rodata(obj, "tk_block_bio_arg", &bio_arg, sizeof(bio_arg));
	if (!err || err == -ENOENT)
		err = tk_set_rodata(obj, "tk_block_dev", &dev, sizeof(dev));
	if (!err || err == -ENOENT)
		err = tk_set_rodata(obj, "tk_block_who_on", &who_on, sizeof(who_on));
	if (!who_on)
		tk_programs_off(obj, "block_getrq_");
	/* A tool with TK_BLOCK_STAMPS keeps only issue times, in slots
	 * claimed by compare-and-swap, where nothing else of a request's
	 * issue is needed (no submitter) and the kernel has the instruction;
	 * else the hash map of whole issue states. */
	if (bpf_object__find_program_by_name(obj, "stamp_rq_issue_raw_tp")) {
		if (!who_on && tk_bpf_has_atomics()) {
			if (!err || err == -ENOENT)
				err = set_stats_bits(obj);
			tk_programs_off(obj, "block_rq_issue_");
			tk_programs_off(obj, "block_rq_complete_");
			tk_programs_off(obj, "block_rq_requeue_");
		} else {
			tk_programs_off(obj, "stamp_rq_");
		}
	}
	return err == -ENOENT ? 0 : err;
}

const char *tk_bio_rwbs(unsigned int flags, char *buf, unsigned long size)
{
	char s[8];
	int i = 0;

	if (flags & TK_BIO_PREFLUSH)
		s[i++] = 'F';
	switch (TK_BIO_OP(flags)) {
	case 1: s[i++] = 'W'; break;
	case 3: s[i++] = 'D'; break;
	case 5: s[i++] = 'D'; s[i++] = 'E'; break;
	case 2: s[i++] = 'F'; break;
	case 0: s[i++] = 'R'; break;
	default: s[i++] = 'N'; break;
	}
	if (flags & TK_BIO_FUA)
		s[i++] = 'F';
	if (flags & TK_BIO_RAHEAD)
		s[i++] = 'A';
	if (flags & TK_BIO_SYNC)
		s[i++] = 'S';
	if (flags & TK_BIO_META)
		s[i++] = 'M';
	s[i] = 0;
	snprintf(buf, size, "%s", s);
	return buf;
}

char tk_bio_op_letter(unsigned int flags)
{
	switch (TK_BIO_OP(flags)) {
	case 0: return 'R';
	case 1: return 'W';
	case 2: return 'F';
	case 3: case 5: return 'D';
	default: return 'N';
	}
}

const char *tk_bio_flags_desc(unsigned int flags, char *buf, unsigned long size)
{
	static const char *const ops[] = {
		[0] = "Read", [1] = "Write", [2] = "Flush", [3] = "Discard",
		[5] = "SecureErase", [6] = "ZoneReset", [7] = "WriteSame",
		[9] = "WriteZeros",
	};
	unsigned int op = TK_BIO_OP(flags);
	const char *name = op < sizeof(ops) / sizeof(ops[0]) && ops[op] ? ops[op] : "Unknown";

	/* bcc's order: the last prefix added is the first printed. */
	snprintf(buf, size, "%s%s%s%s%s%s",
		 flags & TK_BIO_RAHEAD ? "ReadAhead-" : "",
		 flags & TK_BIO_PREFLUSH ? "Preflush-" : "",
		 flags & TK_BIO_FUA ? "ForcedUnitAccess-" : "",
		 flags & TK_BIO_META ? "Metadata-" : "",
		 flags & TK_BIO_SYNC ? "Sync-" : "", name);
	return buf;
}
