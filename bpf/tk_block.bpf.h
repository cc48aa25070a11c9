/* Block I/O requests for the bio* tools: who submitted a request, its
 * disk, operation and flags, and its state from issue to completion.
 *
 * The tracepoints' arguments moved between kernels: block_rq_issue and
 * block_rq_insert took (struct request_queue *, struct request *) before
 * Linux 5.11 and (struct request *) since; block_getrq took (queue, bio,
 * rw) and now (bio). libtrace (tk_block_configure) counts the arguments
 * in the kernel's BTF and sets tk_block_rq_arg / tk_block_bio_arg; the
 * verifier sees them as constants and drops the other branch, so no
 * program reads an argument its tracepoint does not have.
 *
 * The submitter: block_getrq runs in the task that made the request
 * (block_rq_issue often runs in a kworker or another task's plug flush).
 * It files the task under the bio; at issue the request's first bio
 * (rq->bio) finds it. A request that never passed block_getrq (a flush
 * made by the kernel, a passthrough command) has no submitter.
 *
 * A tool that shows or filters by submitter defines TK_BLOCK_WHO before
 * including this header: it gets the block_getrq programs; with
 * TK_BLOCK_STACKS too, each submitter's kernel stack (tk_block_stacks). */
#ifndef TK_BLOCK_BPF_H
#define TK_BLOCK_BPF_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "tk_block.h"
#include "tk_filter.bpf.h"
#include "tk_loss.bpf.h"

const volatile int tk_block_rq_arg = 0;   /* 1: (queue, rq) */
const volatile int tk_block_bio_arg = 0;  /* 1: (queue, bio, rw) */
const volatile __u32 tk_block_dev = 0;    /* -d: only this disk (TK_KDEV) */
/* Submitters wanted (shown, or a task filter): the block_getrq programs
 * run; else they are not loaded and issue skips the lookup. */
const volatile bool tk_block_who_on = true;
/* What each request's issue reads (TK_BLOCK_NEED_*). */
const volatile __u32 tk_block_need = TK_BLOCK_NEED_ALL;

#define TK_BLOCK_MAX_INFLIGHT 16384

/* The disk moved from rq->rq_disk to rq->q->disk in 5.17 (q->disk is
 * there since 5.14). */
struct request_queue___tkx {
	struct gendisk *disk;
} __attribute__((preserve_access_index));

struct request___tkx {
	struct request_queue___tkx *q;
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));

static __always_inline __u32 tk_rq_dev(struct request *rq)
{
	struct request___tkx *r = (void *)rq;
	struct gendisk *disk;

	if (bpf_core_field_exists(r->rq_disk))
		disk = BPF_CORE_READ(r, rq_disk);
	else
		disk = BPF_CORE_READ(r, q, disk);
	if (!disk)
		return 0;
	return TK_KDEV((__u32)BPF_CORE_READ(disk, major),
		       (__u32)BPF_CORE_READ(disk, first_minor));
}

#define TK_REQ_BIT(name, out)                                              \
	(bpf_core_enum_value_exists(enum req_flag_bits, name) &&           \
	 (cmd & (1u << bpf_core_enum_value(enum req_flag_bits, name))) ? (out) : 0)

/* The operation and flags of rq as TK_BIO_OP | TK_BIO_*. */
static __always_inline __u32 tk_rq_flags(struct request *rq)
{
	__u32 cmd = BPF_CORE_READ(rq, cmd_flags);

	return (cmd & 0xff) | TK_REQ_BIT(__REQ_SYNC, TK_BIO_SYNC) |
	       TK_REQ_BIT(__REQ_META, TK_BIO_META) |
	       TK_REQ_BIT(__REQ_FUA, TK_BIO_FUA) |
	       TK_REQ_BIT(__REQ_PREFLUSH, TK_BIO_PREFLUSH) |
	       TK_REQ_BIT(__REQ_RAHEAD, TK_BIO_RAHEAD);
}

/* The request argument of block_rq_issue / block_rq_insert. */
static __always_inline struct request *tk_block_rq(unsigned long long *ctx)
{
	if (tk_block_rq_arg)
		return (struct request *)ctx[1];
	return (struct request *)ctx[0];
}

/* Does a task filter (-p, -u, -n, -c, ...) apply? Then only requests of
 * a known, wanted submitter count. */
static __always_inline bool tk_block_task_filter(void)
{
	return tk_filter.tgid || tk_filter.tid || tk_filter.uid >= 0 ||
	       tk_filter.use_cgroup || tk_filter.comm[0] || tk_filter.ppid ||
	       tk_filter.follow;
}

/* Submitters by bio, from block_getrq to block_rq_issue. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TK_BLOCK_MAX_INFLIGHT);
	__type(key, __u64);
	__type(value, struct tk_bio_who);
} tk_block_who SEC(".maps");

/* Requests in flight, from issue to completion, by request. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, TK_BLOCK_MAX_INFLIGHT);
	__type(key, __u64);
	__type(value, struct tk_bio_start);
} tk_block_start SEC(".maps");

/* Take rq's submitter out of tk_block_who into *w; false when unknown. */
static __always_inline bool tk_block_who_take(struct request *rq,
					      struct tk_bio_who *w)
{
	__u64 key = (__u64)BPF_CORE_READ(rq, bio);
	struct tk_bio_who *p = bpf_map_lookup_elem(&tk_block_who, &key);

	if (!p)
		return false;
	*w = *p;
	bpf_map_delete_elem(&tk_block_who, &key);
	return true;
}

/* Fill *s from rq at its issue: false when the disk or task filter
 * leaves it out (its submitter entry is taken either way). */
static __always_inline bool tk_block_issue_fill(struct request *rq,
						struct tk_bio_start *s)
{
	if (tk_block_who_on)
		s->known = tk_block_who_take(rq, &s->who);
	if (!s->known && tk_block_task_filter())
		return false;
	if (tk_block_dev || (tk_block_need & TK_BLOCK_NEED_DEV)) {
		s->dev = tk_rq_dev(rq);
		if (tk_block_dev && s->dev != tk_block_dev)
			return false;
	}
	s->issue_ns = bpf_ktime_get_ns();
	if (tk_block_need & TK_BLOCK_NEED_QUEUED)
		s->queued_ns = BPF_CORE_READ(rq, start_time_ns);
	if (tk_block_need & TK_BLOCK_NEED_SECTOR)
		s->sector = BPF_CORE_READ(rq, __sector);
	if (tk_block_need & TK_BLOCK_NEED_LEN)
		s->len = BPF_CORE_READ(rq, __data_len);
	if (tk_block_need & TK_BLOCK_NEED_FLAGS)
		s->flags = tk_rq_flags(rq);
	return true;
}

/* Keep a request's state from its issue to its completion. An entry
 * still there from the request's last issue is a completion the kernel
 * ran no program for: a requeued request's entry is taken at its
 * requeue (TK_BLOCK_REQUEUE_PROGS), so only a completion the kernel did
 * not deliver leaves one. The kernel does not count those runs (this
 * repository's Firecracker host runs no BPF program in the context of
 * its sandbox agent, even a block softirq that interrupted it; ftrace
 * sees the event): counted here, reported with the runs missed, and the
 * entry replaced. A request issued no more is not noticed. */
static __always_inline void tk_block_start_put(__u64 key, struct tk_bio_start *s)
{
	long err = bpf_map_update_elem(&tk_block_start, &key, s, BPF_NOEXIST);

	if (err == -17 /* EEXIST */) {
		tk_count_loss(TK_LOSS_RUN_UNSEEN);
		err = bpf_map_update_elem(&tk_block_start, &key, s, BPF_ANY);
	}
	if (err)
		tk_count_loss(TK_LOSS_MAP_FULL);
}

/* At issue: remember rq until it completes (tk_block_complete_take). */
static __always_inline int tk_block_issue(struct request *rq)
{
	struct tk_bio_start s = {};

	if (!tk_block_issue_fill(rq, &s))
		return 0;
	tk_block_start_put((__u64)rq, &s);
	return 0;
}

/* At completion: rq's state from its issue, taken out of the map; false
 * for a request not seen issued (or left out by a filter). */
static __always_inline bool tk_block_complete_take(struct request *rq,
						   struct tk_bio_start *s)
{
	__u64 key = (__u64)rq;
	struct tk_bio_start *p = bpf_map_lookup_elem(&tk_block_start, &key);

	if (!p)
		return false;
	*s = *p;
	bpf_map_delete_elem(&tk_block_start, &key);
	return true;
}

#ifdef TK_BLOCK_STACKS
/* The submitters' kernel stacks (biostacks). */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, TK_BLOCK_STACK_DEPTH * sizeof(__u64));
	__uint(max_entries, 4096);
} tk_block_stacks SEC(".maps");
#endif

static __always_inline int tk_block_getrq(void *ctx, struct bio *bio)
{
	struct tk_bio_who w = {};
	__u64 key = (__u64)bio, id;

	if (!tk_task_wanted())
		return 0;
	id = tk_pid_tgid();
	w.pid = id >> 32;
	w.tid = (__u32)id;
	bpf_get_current_comm(w.comm, sizeof(w.comm));
#ifdef TK_BLOCK_STACKS
	w.kstack = bpf_get_stackid(ctx, &tk_block_stacks, 0);
#endif
	if (bpf_map_update_elem(&tk_block_who, &key, &w, BPF_ANY))
		tk_count_loss(TK_LOSS_MAP_FULL);
	return 0;
}

/* A tool's block_rq_issue programs, tp_btf and raw_tp, calling
 * fn(ctx, struct request *). */
#define TK_BLOCK_ISSUE_PROGS(fn)                                            \
	SEC("tp_btf/block_rq_issue")                                        \
	int BPF_PROG(block_rq_issue_tp_btf)                                 \
	{                                                                   \
		return fn(ctx, tk_block_rq(ctx));                           \
	}                                                                   \
	SEC("raw_tp/block_rq_issue")                                        \
	int BPF_PROG(block_rq_issue_raw_tp)                                 \
	{                                                                   \
		return fn(ctx, tk_block_rq(ctx));                           \
	}

/* A tool's block_rq_complete programs (request, error: the same on
 * every kernel), calling fn(ctx, struct request *, int error). */
#define TK_BLOCK_COMPLETE_PROGS(fn)                                         \
	SEC("tp_btf/block_rq_complete")                                     \
	int BPF_PROG(block_rq_complete_tp_btf, struct request *rq, int error) \
	{                                                                   \
		return fn(ctx, rq, error);                                  \
	}                                                                   \
	SEC("raw_tp/block_rq_complete")                                     \
	int BPF_PROG(block_rq_complete_raw_tp, struct request *rq, int error) \
	{                                                                   \
		return fn(ctx, rq, error);                                  \
	}

/* A requeued request is issued again: its entry goes, so that its next
 * issue is not taken for a completion never seen (tk_block_start_put).
 * For a tool that keeps requests in flight: with TK_BLOCK_ISSUE_PROGS
 * and TK_BLOCK_COMPLETE_PROGS. */
#define TK_BLOCK_REQUEUE_PROGS                                              \
	SEC("tp_btf/block_rq_requeue")                                      \
	int BPF_PROG(block_rq_requeue_tp_btf)                               \
	{                                                                   \
		__u64 key = (__u64)tk_block_rq(ctx);                        \
		bpf_map_delete_elem(&tk_block_start, &key);                 \
		return 0;                                                   \
	}                                                                   \
	SEC("raw_tp/block_rq_requeue")                                      \
	int BPF_PROG(block_rq_requeue_raw_tp)                               \
	{                                                                   \
		__u64 key = (__u64)tk_block_rq(ctx);                        \
		bpf_map_delete_elem(&tk_block_start, &key);                 \
		return 0;                                                   \
	}

/* At issue: remember rq until it completes (tk_block_complete_take); as
 * a TK_BLOCK_ISSUE_PROGS function. */
static __always_inline int tk_block_issue_keep(void *ctx, struct request *rq)
{
	return tk_block_issue(rq);
}

#ifdef TK_BLOCK_STAMPS
/* The issue times of requests in flight, for a tool that needs nothing
 * else of a request's issue (biolatency without a task filter): it
 * reads the rest at completion. A slot per request in an array, found
 * from the request's address, instead of the hash map: a hash map's
 * update and delete each take a bucket lock and copy a value, and were
 * most of biolatency's cost per request (bench/RESULTS.md, block).
 *
 * A request's home slot is a hash of its address; issue claims the
 * first of TK_BLOCK_STAMP_PROBES slots from there that is free or
 * already its own (a requeued request issued again) with a
 * compare-and-swap, and writes the time; completion takes the first
 * slot holding the request, reads the time and frees the slot. Issue
 * returns before the driver has the request, so its completion never
 * sees a slot half written. A request that finds all its slots taken
 * goes to tk_block_start, the hash map, instead: none is lost to a
 * collision. A slot still the request's own at its issue is a
 * completion never seen (tk_block_start_put), counted; a requeue frees
 * it. Compare-and-swap is a BPF instruction since Linux 5.12;
 * tk_block_configure loads these programs only where the kernel takes
 * it (tk_bpf_has_atomics), the hash map path elsewhere.
 *
 * Where the kernel stamps the request itself, neither program touches a
 * slot (tk_block_kernel_stamps, below).
 *
 * raw_tp only: a tp_btf program's request is a typed pointer, and the
 * verifier refuses the arithmetic of the hash on it. */
#define TK_BLOCK_STAMP_SLOTS 8192   /* a power of 2 */
#define TK_BLOCK_STAMP_PROBES 4

struct tk_block_stamp {
	__u64 rq;      /* the request's address; 0: free */
	__u64 issue_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TK_BLOCK_STAMP_SLOTS);
	__type(key, __u32);
	__type(value, struct tk_block_stamp);
} tk_block_stamps SEC(".maps");

/* Fibonacci hashing: the top bits of the address times 2^64/phi. */
static __always_inline __u32 tk_block_stamp_home(__u64 rq)
{
	return (rq * 0x9E3779B97F4A7C15ULL) >> (64 - 13);
}

static __always_inline void tk_block_stamp_issue(__u64 rq)
{
	__u32 home = tk_block_stamp_home(rq), i, k;
	struct tk_block_stamp *p;
	struct tk_bio_start s = {};

	for (i = 0; i < TK_BLOCK_STAMP_PROBES; i++) {
		k = (home + i) & (TK_BLOCK_STAMP_SLOTS - 1);
		p = bpf_map_lookup_elem(&tk_block_stamps, &k);
		if (!p)
			return;
		if (p->rq == rq) {
			/* still its own: a completion never seen
			 * (tk_block_start_put) */
			tk_count_loss(TK_LOSS_RUN_UNSEEN);
			p->issue_ns = bpf_ktime_get_ns();
			return;
		}
		if (__sync_val_compare_and_swap(&p->rq, 0, rq) == 0) {
			p->issue_ns = bpf_ktime_get_ns();
			return;
		}
	}
	s.issue_ns = bpf_ktime_get_ns();
	tk_block_start_put(rq, &s);
}

/* rq's issue time into *issue_ns, its slot (or hash map entry) freed;
 * false for a request not seen issued. */
static __always_inline bool tk_block_stamp_take(__u64 rq, __u64 *issue_ns)
{
	__u32 home = tk_block_stamp_home(rq), i, k;
	struct tk_block_stamp *p;
	struct tk_bio_start *s;

	for (i = 0; i < TK_BLOCK_STAMP_PROBES; i++) {
		k = (home + i) & (TK_BLOCK_STAMP_SLOTS - 1);
		p = bpf_map_lookup_elem(&tk_block_stamps, &k);
		if (!p)
			return false;
		if (p->rq == rq) {
			*issue_ns = p->issue_ns;
			/* after the read: an issue elsewhere may claim it now */
			__sync_val_compare_and_swap(&p->rq, rq, 0);
			return true;
		}
	}
	s = bpf_map_lookup_elem(&tk_block_start, &rq);
	if (!s)
		return false;
	*issue_ns = s->issue_ns;
	bpf_map_delete_elem(&tk_block_start, &rq);
	return true;
}

/* The kernel's own stamp. A queue that keeps I/O statistics
 * (QUEUE_FLAG_STATS: writeback throttling, which Debian's kernels turn
 * on for most disks, or I/O latency control) stamps each request it
 * starts, but a passthrough command, in rq->io_start_time_ns and marks
 * it RQF_STATS, right after block_rq_issue. There the issue program
 * writes nothing and completion reads the kernel's stamp from the
 * request, which the completion path has just read anyway: the slot,
 * written on the issuing CPU and read on the completing one, was most of
 * a request's cost (a cache line from CPU to CPU, both ways). Since
 * 6.9 the stamp may be the time the task's plug first took
 * (blk_time_get_ns), by at most the CPU time it ran since without
 * sleeping. The bits were #defines (these values, from 5.0) before they
 * became enumerators in the kernel's BTF; tk_block_configure sets them
 * from there. A queue that starts or stops keeping statistics between a
 * request's issue and the kernel's test right after it is not seen: a
 * request left uncounted, or a slot left to its next issue, counted as a
 * completion never seen. */
const volatile __u32 tk_block_qflag_stats = 20;       /* QUEUE_FLAG_STATS */
const volatile __u32 tk_block_rqf_stats = 1u << 17;   /* RQF_STATS */

/* A passthrough command (REQ_OP_DRV_IN/OUT, and SCSI_IN/OUT on older
 * kernels): the kernel does not stamp it, or on older kernels stamps it
 * too; either way its issue time is kept in a slot. */
static __always_inline bool tk_block_passthrough(struct request *rq)
{
	__u32 op = BPF_CORE_READ(rq, cmd_flags) & 0xff;

	return op >= 32 && op <= 35;
}

/* At issue: will the kernel stamp rq (its queue's flag, read before the
 * kernel reads it)? */
static __always_inline bool tk_block_kernel_stamps(struct request *rq)
{
	__u64 qflags = BPF_CORE_READ(rq, q, queue_flags);

	return (qflags >> (tk_block_qflag_stats & 63)) & 1 &&
	       !tk_block_passthrough(rq);
}

/* At completion: rq's issue time from the kernel's stamp into
 * *issue_ns; false when the kernel did not stamp it. */
static __always_inline bool tk_block_kernel_stamped(struct request *rq,
						    __u64 *issue_ns)
{
	__u32 rq_flags = BPF_CORE_READ(rq, rq_flags);

	if (!(rq_flags & tk_block_rqf_stats) || tk_block_passthrough(rq))
		return false;
	*issue_ns = BPF_CORE_READ(rq, io_start_time_ns);
	return *issue_ns != 0;
}

/* The tool's programs for this path: raw_tp only (above). */
#define TK_BLOCK_STAMP_PROGS(complete_fn)                                   \
	SEC("raw_tp/block_rq_issue")                                        \
	int BPF_PROG(stamp_rq_issue_raw_tp)                                 \
	{                                                                   \
		struct request *rq = tk_block_rq(ctx);                      \
									    \
		if (!tk_block_kernel_stamps(rq))                            \
			tk_block_stamp_issue((__u64)rq);                    \
		return 0;                                                   \
	}                                                                   \
	SEC("raw_tp/block_rq_complete")                                     \
	int BPF_PROG(stamp_rq_complete_raw_tp, struct request *rq, int error, \
		     unsigned int nr_bytes)                                 \
	{                                                                   \
		return complete_fn(ctx, rq, nr_bytes);                      \
	}                                                                   \
	SEC("raw_tp/block_rq_requeue")                                      \
	int BPF_PROG(stamp_rq_requeue_raw_tp)                               \
	{                                                                   \
		__u64 issue_ns;                                             \
		tk_block_stamp_take((__u64)tk_block_rq(ctx), &issue_ns);    \
		return 0;                                                   \
	}
#endif

#ifdef TK_BLOCK_WHO
SEC("tp_btf/block_getrq")
int BPF_PROG(block_getrq_tp_btf)
{
	if (tk_block_bio_arg)
		return tk_block_getrq(ctx, (struct bio *)ctx[1]);
	return tk_block_getrq(ctx, (struct bio *)ctx[0]);
}

SEC("raw_tp/block_getrq")
int BPF_PROG(block_getrq_raw_tp)
{
	if (tk_block_bio_arg)
		return tk_block_getrq(ctx, (struct bio *)ctx[1]);
	return tk_block_getrq(ctx, (struct bio *)ctx[0]);
}
#endif

#endif
