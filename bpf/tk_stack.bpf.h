/* Counting stacks in BPF: one stack trace map, one counts map keyed by
 * struct tk_stack_key, per-CPU error counters. libtrace/stacks.c sizes
 * the maps and sets tk_stack_mode before load, and reads them at exit.
 *
 *   struct tk_stack_key key = {};
 *   tk_stack_key_fill(ctx, &key, 0);
 *   tk_stack_add(ctx, &key, weight, task, true);
 *
 * With --unwind auto|cfi (tk_stack_snap > 0) the key holds the user
 * registers, and the first event of each key copies the top of the user
 * stack into tk_stack_snaps, for libtrace/unwind.c.
 */
#ifndef TK_STACK_BPF_H
#define TK_STACK_BPF_H

#include "tk_cgroup.bpf.h"
#include "tk_emit.bpf.h"
#include "tk_stack.h"

const volatile int tk_stack_mode = TK_STACK_USER | TK_STACK_KERNEL;
/* --unwind: bytes of user stack to copy (0: fp, none). */
const volatile unsigned int tk_stack_snap = 0;

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(u32));
	__uint(value_size, TK_STACK_MAX_DEPTH * sizeof(u64));
	__uint(max_entries, 16384);
} tk_stacks SEC(".maps");

/* Where a stack goes when tk_stacks cannot keep it: its bucket there
 * holds another stack (-EEXIST) or the map is full. The kernel hashes a
 * stack with a fixed seed into 2^k buckets without chaining, and never
 * replaces one (BPF_F_REUSE_STACKID would give the first stack's events
 * the second's frames): 22 stacks in 16384 buckets collide in 1.4% of
 * runs, a stack lost for no want of room. Here a stack's key is
 * TK_STACK_SPILL_ID | a 29-bit FNV-1a hash of its frames, computed
 * below, in a hash table that chains. A stack that collided in tk_stacks
 * collides each time it is seen, so it is always found here, under one
 * id. The value is laid out as tk_stacks' (frames, then zeros):
 * userspace reads both alike. libtrace sizes it (tk_stacks_configure)
 * and turns it off for a stack map of fewer than 8 slots
 * (tk_stack_spill_on). A stack this map cannot keep either (its hash is
 * another's, or the map is full) goes to userspace with its frames
 * (tk_stack_ring): none is lost while the event buffer has room. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(key_size, sizeof(u32));
	__uint(value_size, TK_STACK_MAX_DEPTH * sizeof(u64));
	__uint(max_entries, 2048);
} tk_stacks_spill SEC(".maps");

/* Where a spilled stack is taken and hashed: too big for the BPF stack.
 * Laid out as a ring event (struct tk_stack_ring_head, then the frames),
 * so that a stack sent to userspace goes from here as it is. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(u32));
	__uint(value_size, sizeof(struct tk_stack_ring_head) + TK_STACK_MAX_DEPTH * sizeof(u64));
} tk_stack_spill_buf SEC(".maps");

/* The stacks sent on tk_events lately, by ring id, with both hashes of
 * their frames: a stack seen again is not sent again while its entry
 * lasts (an evicted one is sent again, which userspace takes as a
 * repeat). Two stacks whose ids meet differ in the value, and both are
 * sent: userspace sees the conflict rather than merging them. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, u32);
	__type(value, u64);
	__uint(max_entries, 4096);
} tk_stack_ring_sent SEC(".maps");

const volatile bool tk_stack_spill_on = true;
/* Stacks that neither map keeps go to userspace on tk_events (off only
 * in tests of the loss counters, TRACEKIT_STACK_RING=0, and past
 * TK_STACK_MAX_DEPTH frames, which the hash loop must bound). */
const volatile bool tk_stack_ring_on = true;
/* Frames per stack: the stack maps' value size over 8 (libtrace sets
 * all three, --perf-max-stack-depth). */
const volatile unsigned int tk_stack_depth = TK_STACK_MAX_DEPTH;
/* The bits of the hashes a spilled or sent stack is keyed by (fewer only
 * in tests, to make two stacks' keys meet). */
const volatile unsigned int tk_stack_spill_mask = TK_STACK_RING_ID - 1;
/* Send a stack by its frames at every event that takes it, not once
 * while tk_stack_ring_sent remembers it: for a tool that prints each
 * event as it comes (trace) over per-CPU perf buffers, where the one
 * record sent may still wait, unread, in another CPU's buffer when an
 * event of this CPU that names it is printed. The record then always
 * comes just before its event, in the same CPU's buffer. */
const volatile bool tk_stack_ring_resend = false;

/* The stack being spilled: this CPU's tk_stack_spill_buf's frames. */
static __always_inline u64 *tk_stack_spill_frames(void)
{
	u32 zero = 0;
	struct tk_stack_ring_head *head = bpf_map_lookup_elem(&tk_stack_spill_buf, &zero);

	return head ? (u64 *)(head + 1) : NULL;
}

/* The two loops over a spilled stack's frames are global functions: the
 * verifier checks a global function once, on its own, where an inlined
 * loop is walked again, all 127 rounds, at each call site and on each
 * path into it (both stack kinds, each spill reason). That was 16887
 * instructions for profile's program, most of its load time; so they
 * take no pointer (before 5.12 a global function takes only scalars
 * and the context) and find the frames themselves. */

/* The frames in this CPU's spill buffer, hashed with FNV-1a from two
 * offset bases, high and low halves of each frame in opposite orders:
 * h << 32 | r (0 when there is no buffer). */
__noinline u64 tk_stack_spill_hashes(void)
{
	u32 h = 2166136261u, r = 0x5bd1e995u;
	u64 *buf = tk_stack_spill_frames();

	if (!buf)
		return 0;
	for (u32 i = 0; i < TK_STACK_MAX_DEPTH; i++) {
		if (i >= tk_stack_depth || !buf[i])
			break;
		h = (h ^ (u32)buf[i]) * 16777619u;
		h = (h ^ (u32)(buf[i] >> 32)) * 16777619u;
		r = (r ^ (u32)(buf[i] >> 32)) * 16777619u;
		r = (r ^ (u32)buf[i]) * 16777619u;
	}
	return (u64)h << 32 | r;
}

/* Whether tk_stacks_spill's stack id is the one in this CPU's spill
 * buffer: 1, 0 when another, -1 when id holds none. */
__noinline int tk_stack_spill_holds(u32 id)
{
	u64 *kept = bpf_map_lookup_elem(&tk_stacks_spill, &id);
	u64 *buf = tk_stack_spill_frames();

	if (!kept || !buf)
		return -1;
	for (u32 i = 0; i < TK_STACK_MAX_DEPTH; i++) {
		if (i >= tk_stack_depth)
			break;
		if (kept[i] != buf[i])
			return 0;
	}
	return 1;
}

/* Send the stack in buf to userspace as ring id id, unless sent lately
 * (tk_stack_ring_sent, where both hashes stand for the frames; always
 * with tk_stack_ring_resend): id, or -ENOSPC when the event buffer had
 * no room (counted). */
static __always_inline long tk_stack_ring(void *ctx, struct tk_stack_ring_head *buf,
					  u32 id, u64 hashes)
{
	u64 *sent = bpf_map_lookup_elem(&tk_stack_ring_sent, &id);

	if (!tk_stack_ring_resend && sent && *sent == hashes)
		return id;
	buf->marker = TK_STACK_RING_MARKER;
	buf->id = (int)id;
	if (tk_emit(ctx, buf, sizeof(*buf) + tk_stack_depth * sizeof(u64)))
		return -28;
	bpf_map_update_elem(&tk_stack_ring_sent, &id, &hashes, BPF_ANY);
	return id;
}

/* The current stack (flags as bpf_get_stackid's), which tk_stacks could
 * not keep, into tk_stacks_spill: its id there; else, when its hash is
 * another stack's there (-EEXIST) or the map is full (-ENOMEM), sent to
 * userspace (tk_stack_ring): its ring id. Else the error, or
 * bpf_get_stack's. */
static __always_inline long tk_stack_spill(void *ctx, u64 flags)
{
	/* id: as a long, positive. */
	u32 zero = 0, id, h, r;
	struct tk_stack_ring_head *head = bpf_map_lookup_elem(&tk_stack_spill_buf, &zero);
	u64 *buf, hashes;
	long len, err = -12;
	int held;

	if (!head)
		return -12;
	buf = (u64 *)(head + 1);
	/* bpf_get_stack zeroes the buffer past the frames it writes. */
	len = bpf_get_stack(ctx, buf, tk_stack_depth * sizeof(u64),
			    flags & (BPF_F_SKIP_FIELD_MASK | BPF_F_USER_STACK));
	if (len <= 0)
		return len < 0 ? len : -14 /* EFAULT: no stack */;
	hashes = tk_stack_spill_hashes();
	h = hashes >> 32;
	r = (u32)hashes;
	if (tk_stack_spill_on) {
		id = TK_STACK_SPILL_ID | (h & tk_stack_spill_mask);
		held = tk_stack_spill_holds(id);
		if (held < 0) {
			err = bpf_map_update_elem(&tk_stacks_spill, &id, buf, BPF_NOEXIST);
			if (!err)
				return id;
			/* EEXIST: another CPU kept one meanwhile. */
			held = err == -17 ? tk_stack_spill_holds(id) : -1;
			err = -12;
		}
		if (held > 0)
			return id;
		if (!held)
			err = -17;
	}
	if (!tk_stack_ring_on)
		return err;
	id = TK_STACK_SPILL_ID | TK_STACK_RING_ID | (r & tk_stack_spill_mask);
	return tk_stack_ring(ctx, head, id, hashes);
}

/* The counts by key. Its key and value, and tk_stack_snaps', are given by
 * size, not by BTF type: libtrace cuts the keys and copies to the
 * --unwind mode's (tk_stacks_key_size, tk_stacks_snap_size), and the
 * kernel refuses a map whose sizes differ from its BTF types' (libbpf
 * then makes it again without BTF, and says so under -v). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(key_size, sizeof(struct tk_stack_key));
	__uint(value_size, sizeof(u64));
	__uint(max_entries, 16384);
} tk_stack_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TK_STACK_ERR_MAX);
	__type(key, u32);
	__type(value, u64);
} tk_stack_errs SEC(".maps");

/* The stack copy of each key in tk_stack_counts (sized by libtrace:
 * the counts map's entries, its key size, and the mode's copy). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(key_size, sizeof(struct tk_stack_key));
	__uint(value_size, sizeof(struct tk_stack_snap));
	__uint(max_entries, 1);
} tk_stack_snaps SEC(".maps");

/* Where a copy is made: too big for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct tk_stack_snap);
} tk_stack_snap_buf SEC(".maps");

/* When each process's pid event was last sent (TK_STACK_RENOTE_NS), and
 * the address space it had then: exec gives a process a new mm (the new
 * one is allocated while the old lives, so the two never share an
 * address), which is how a new image is told from new code in the old;
 * and how many mappings and pages of code it had (TK_STACK_PID_MAPS). */
struct tk_stack_noted_val {
	u64 when;
	u64 mm;
	s64 map_count;
	u64 exec_vm;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, u32);
	__type(value, struct tk_stack_noted_val);
	__uint(max_entries, 4096);
} tk_stack_noted SEC(".maps");

static __always_inline void tk_stack_count_err(long id)
{
	u32 key = id == -1000 ? TK_STACK_ERR_SNAP :
		  id == -28 /* ENOSPC */ ? TK_STACK_ERR_RING :
		  id == -17 /* EEXIST */ ? TK_STACK_ERR_COLLISION :
		  id == -12 /* ENOMEM */ ? TK_STACK_ERR_FULL :
		  TK_STACK_ERR_OTHER;
	u64 *n = bpf_map_lookup_elem(&tk_stack_errs, &key);

	if (n)
		(*n)++;
}

static __always_inline int tk_stack_id(void *ctx, u64 flags)
{
	long id = bpf_get_stackid(ctx, &tk_stacks, flags);
	long spilled;

	if ((id == -17 /* EEXIST */ || id == -12 /* ENOMEM */) &&
	    (tk_stack_spill_on || tk_stack_ring_on)) {
		spilled = tk_stack_spill(ctx, flags);
		/* Lost: counted as the spill map's reason (its hash taken,
		 * or full), or the event buffer's (full). */
		id = spilled == -14 ? id : spilled;
	}
	/* -EFAULT: no stack of that kind here (a kernel thread's user
	 * stack), not a loss. */
	if (id < 0 && id != -14 /* EFAULT */)
		tk_stack_count_err(id);
	return id;
}

#if defined(__TARGET_ARCH_x86)
/* x86-64's selectors of 64-bit user mode (asm/segment.h: __USER_CS,
 * __USER_DS): a compat task's (0x23) or a kernel thread's are refused. */
#define TK_USER_CS 0x33
#define TK_USER_SS 0x2b

/* The current task's saved user registers without bpf_task_pt_regs
 * (before 5.15; bpf_get_current_task_btf, 5.11, is not called either):
 * task_pt_regs() as the kernel computes it, the last pt_regs below the
 * top of the task's kernel stack, (struct pt_regs *)(task->stack +
 * THREAD_SIZE) - 1 (x86-64's TOP_OF_KERNEL_STACK_PADDING is 0 before
 * FRED, 6.9, which has the helper). Every entry from user mode saves
 * them there, the NMI of a perf event and a uprobe's int3 included.
 * THREAD_SIZE is in no BTF: with vmap'd stacks (x86-64's default, and
 * Debian's) it is the stack's vmalloc area less its guard page; else
 * 16 KiB, x86-64's PAGE_SIZE << THREAD_SIZE_ORDER without KASAN (which
 * doubles it: found through the vmalloc area only). Either way the
 * place is taken only if it holds a 64-bit user context (cs and ss), and
 * a wrong guess is a probe read that fails or finds no such context. */
static __always_inline struct pt_regs *tk_stack_top_regs(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	unsigned long stack = (unsigned long)BPF_CORE_READ(task, stack);
	unsigned long size = 16384, area = 0;
	struct pt_regs *regs;

	if (!stack)
		return NULL;
	if (bpf_core_field_exists(task->stack_vm_area))
		area = BPF_CORE_READ(task, stack_vm_area, size);
	if (area > 4096 && area <= 65536 + 4096)
		size = area - 4096;
	regs = (struct pt_regs *)(stack + size - bpf_core_type_size(struct pt_regs));
	if (BPF_CORE_READ(regs, cs) != TK_USER_CS || BPF_CORE_READ(regs, ss) != TK_USER_SS)
		return NULL;
	return regs;
}
#endif

/* With --unwind auto|cfi: the current task's user registers into
 * key->uregs (its pt_regs from its last entry into the kernel: the
 * interrupted user state under a perf event or a uprobe, the system
 * call's under sched_switch); zeroes when not taken. x86-64: ip, sp,
 * bp; arm64: pc, sp, x29, x30 (bpf_task_pt_regs, which arm64's
 * kernels that tracekit supports all have). Other architectures take
 * none (libtrace sets no tk_stack_snap there). */
static __always_inline void tk_stack_user_regs(struct tk_stack_key *key)
{
	struct pt_regs *regs;

	__builtin_memset(key->uregs, 0, sizeof(key->uregs));
	if (!tk_stack_snap || key->user_stack_id < 0)
		return;
#if defined(__TARGET_ARCH_x86)
	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs))
		regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	else
		regs = tk_stack_top_regs();
	if (!regs)
		return;
	key->uregs[0] = BPF_CORE_READ(regs, ip);
	key->uregs[1] = BPF_CORE_READ(regs, sp);
	key->uregs[2] = BPF_CORE_READ(regs, bp);
#elif defined(__TARGET_ARCH_arm64)
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	if (!regs)
		return;
	key->uregs[0] = BPF_CORE_READ(regs, pc);
	key->uregs[1] = BPF_CORE_READ(regs, sp);
	key->uregs[2] = BPF_CORE_READ(regs, regs[29]);
	key->uregs[3] = BPF_CORE_READ(regs, regs[30]);
#endif
}

/* Copy tk_stack_snap bytes of the current task's user stack from sp into
 * snap (len 0 when it cannot be read). The copy must not cross the
 * stack's end: whole, else up to the end of sp's page (a stack mapping
 * ends on a page boundary). */
static __always_inline void tk_stack_copy_user(struct tk_stack_snap *snap, u64 sp)
{
	u32 len = tk_stack_snap, page;

	if (len > TK_STACK_SNAP_MAX)
		len = TK_STACK_SNAP_MAX;
	if (len && bpf_probe_read_user(snap->data, len, (void *)sp)) {
		page = 4096 - (sp & 4095);
		if (page < len) {
			len = page;
			if (bpf_probe_read_user(snap->data, len, (void *)sp))
				len = 0;
		} else {
			len = 0;
		}
	}
	snap->len = len;
	snap->pad_ = 0;
}

/* The current task's stack copy for key, into this CPU's buffer; NULL
 * when there are no registers to copy from. */
static __always_inline struct tk_stack_snap *tk_stack_snap_now(const struct tk_stack_key *key)
{
	struct tk_stack_snap *snap;
	u32 zero = 0;

	if (!tk_stack_snap || !key->uregs[1])
		return NULL;
	snap = bpf_map_lookup_elem(&tk_stack_snap_buf, &zero);
	if (snap)
		tk_stack_copy_user(snap, key->uregs[1]);
	return snap;
}

/* The current task's stacks, as tk_stack_mode asks, into key (tgid,
 * comm and, with --print-cgroup, its cgroup id too). flags: 0, or
 * BPF_F_FAST_STACK_CMP and the like. */
static __always_inline void tk_stack_key_fill(void *ctx,
					      struct tk_stack_key *key,
					      u64 flags)
{
	/* The tool's namespace's: userspace reads /proc/TGID/maps. */
	key->tgid = tk_pid_tgid() >> 32;
	bpf_get_current_comm(key->comm, sizeof(key->comm));
	key->cgroup_id = tk_cgroup_id();
	key->user_stack_id = tk_stack_mode & TK_STACK_USER ?
		tk_stack_id(ctx, flags | BPF_F_USER_STACK) : TK_STACK_NOT_TAKEN;
	key->kern_stack_id = tk_stack_mode & TK_STACK_KERNEL ?
		tk_stack_id(ctx, flags) : TK_STACK_NOT_TAKEN;
	tk_stack_user_regs(key);
}

/* Tell userspace about tgid, whose task is task, unless told within
 * TK_STACK_RENOTE_NS while it ran the same image with as many mappings.
 * Two CPUs may both send: the reader copes with a duplicate. */
static __always_inline void tk_stack_note(void *ctx, u32 tgid,
					  struct task_struct *task)
{
	struct tk_stack_pid_event ev = { .tgid = tgid };
	struct mm_struct *mm = BPF_CORE_READ(task, mm);
	struct task_struct *parent = BPF_CORE_READ(task, real_parent);
	struct tk_stack_noted_val now = {
		.when = bpf_ktime_get_ns(),
		.mm = (u64)mm,
		.map_count = mm ? BPF_CORE_READ(mm, map_count) : 0,
		.exec_vm = mm ? BPF_CORE_READ(mm, exec_vm) : 0,
	}, *last;

	last = bpf_map_lookup_elem(&tk_stack_noted, &tgid);
	if (!last)
		ev.flags = TK_STACK_PID_NEW;
	else if (last->mm != now.mm)
		ev.flags = TK_STACK_PID_EXEC;
	else if (last->map_count != now.map_count || last->exec_vm != now.exec_vm)
		ev.flags = TK_STACK_PID_MAPS;
	else if (now.when - last->when < TK_STACK_RENOTE_NS)
		return;
	bpf_map_update_elem(&tk_stack_noted, &tgid, &now, BPF_ANY);
	if (mm && BPF_CORE_READ(mm, exe_file) == BPF_CORE_READ(parent, mm, exe_file))
		ev.ppid = tk_task_tgid(parent);
	tk_emit(ctx, &ev, sizeof(ev));
}

/* With --unwind auto|cfi: keep the current task's stack copy for key in
 * tk_stack_snaps, unless one is kept already (the key holds ip, sp and
 * bp: the same stack above sp). A full map of copies is counted
 * (TK_STACK_ERR_SNAP); that key's stack keeps the frame-pointer walk.
 * True when this call kept a copy. */
static __always_inline bool tk_stack_snap_keep(const struct tk_stack_key *key)
{
	struct tk_stack_snap *snap;
	long err;

	if (!tk_stack_snap || !key->uregs[1] || bpf_map_lookup_elem(&tk_stack_snaps, key))
		return false;
	snap = tk_stack_snap_now(key);
	if (!snap)
		return false;
	err = bpf_map_update_elem(&tk_stack_snaps, key, snap, BPF_NOEXIST);
	if (err == -7 /* E2BIG: full */)
		tk_stack_count_err(-1000);
	return !err;
}

/* Add weight to key's count; task is the key's (the current task, or
 * sched_switch's next in offcputime). The first count of a key tells
 * userspace about its process (tk_stack_pid_event), so that its mappings
 * are read while it still runs, and, with copy, keeps the current task's
 * stack copy (tk_stack_snap_keep; offcputime keeps its own at the block,
 * while the blocking task is current, and passes false). A full counts
 * map is a counted loss. */
static __always_inline void tk_stack_add(void *ctx,
					 const struct tk_stack_key *key,
					 u64 weight, struct task_struct *task,
					 bool copy)
{
	u64 *n = bpf_map_lookup_elem(&tk_stack_counts, key);
	long err;

	if (n) {
		__sync_fetch_and_add(n, weight);
		return;
	}
	err = bpf_map_update_elem(&tk_stack_counts, key, &weight, BPF_NOEXIST);
	if (err == -17 /* EEXIST: another CPU inserted it */) {
		n = bpf_map_lookup_elem(&tk_stack_counts, key);
		if (n)
			__sync_fetch_and_add(n, weight);
		return;
	}
	if (err) {
		tk_count_loss(TK_LOSS_MAP_FULL);
		return;
	}
	if (copy)
		tk_stack_snap_keep(key);
	if (key->tgid && key->user_stack_id >= 0)
		tk_stack_note(ctx, key->tgid, task);
}

#endif
