/* Block devices for the bio* tools: disk names both ways, and the
 * layout of the block tracepoints' arguments on the running kernel. */
#ifndef TK_BLOCK_USER_H
#define TK_BLOCK_USER_H

#include <bpf/libbpf.h>
#include <stdbool.h>

/* The disk named name (as in /sys/class/block: "sda", "loop3",
 * "nvme0n1") as TK_KDEV; a usage error (exit 2) naming option when
 * there is no such block device or it is a partition. */
unsigned int tk_disk_arg(const char *option, const char *name);

/* The name of disk dev (TK_KDEV), looked up once in /sys/dev/block and
 * kept; "?" when the kernel has no such device (any longer). */
const char *tk_disk_name(unsigned int dev);

/* Before load, for an object that includes bpf/tk_block.bpf.h: where
 * the request and bio are among the tracepoints' arguments (from the
 * kernel's BTF), and the -d disk (0: every disk). who: the tool shows
 * submitters; without it and without a task filter, the block_getrq
 * programs are not loaded. 0 or -errno. */
int tk_block_configure(struct bpf_object *obj, unsigned int dev, bool who);

/* bcc biolatency -F's name of a request's operation and flags:
 * "Read", "Sync-Write", "ReadAhead-Read", ... */
const char *tk_bio_flags_desc(unsigned int flags, char *buf, unsigned long size);

/* The request's operation and flags (TK_BIO_*) as the kernel's
 * blk_fill_rwbs writes them: "R", "W", "WS", "FWFS", "D", "N", ... */
const char *tk_bio_rwbs(unsigned int flags, char *buf, unsigned long size);

/* The one-letter operation of bcc's biosnoop T column: the rwbs op. */
char tk_bio_op_letter(unsigned int flags);

#endif
