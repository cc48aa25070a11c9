// SPDX-License-Identifier: GPL-2.0
/* klockstat: how long tasks wait for kernel sleeping locks (mutexes,
 * rwsems, semaphores) and how long they hold mutexes, by the kernel stack
 * of the lock call (userspace picks the caller out of it).
 *
 * Two ways, chosen by the loader:
 *  - tracepoints lock:contention_begin / contention_end (Linux 5.19+):
 *    the wait of each contended acquisition of a sleeping lock (spin
 *    locks are left out: their flags say LCB_F_SPIN without
 *    LCB_F_MUTEX), with the stack taken at contention_begin;
 *  - kernel functions, bcc's klockstat's: the mutex and rwsem lock calls
 *    (mutex_lock, its _interruptible, _killable and trylock forms,
 *    down_read and down_write with theirs; entry and return) and their
 *    unlocks (mutex_unlock, up_read, up_write): hold times (an
 *    acquiring call's return to the unlock), and, where the kernel has
 *    no such tracepoints (kf_wait), the time of every acquiring lock
 *    call (not a trylock) as its wait, as bcc's klockstat times it. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "klockstat.h"
#include "tk_entry_stack.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_loss.bpf.h"

/* include/trace/events/lock.h */
#define LCB_F_SPIN  (1U << 0)
#define LCB_F_MUTEX (1U << 5)

const volatile bool per_thread = false;      /* -P: rows by thread, no stacks */
const volatile __u64 target_lock = 0;        /* -L: only this lock */
const volatile bool kf_wait = false;         /* waits from mutex_lock calls */

/* A thread's contended acquisition under way (tracepoints), by kernel tid. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, u32);
	__type(value, struct klock_start);
} wait_start SEC(".maps");

/* A thread's lock call under way (kernel functions), by kernel tid. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, u32);
	__type(value, struct klock_start);
} call_start SEC(".maps");

/* A mutex or rwsem held (kernel functions): since when, and the stack of
 * its lock call. A rwsem held by several readers has one per reader.
 * LRU: an entry whose unlock is never seen (Debian's 5.10.262 shows no
 * mutex_unlock for the f_pos_lock __fdget_pos takes, one per read of a
 * /proc file) is evicted in time, instead of filling the map and failing
 * every later insert; a hold is never that old and still timed. */
struct hold_key {
	u64 lock;
	u32 tid;
	u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 10240);
	__type(key, struct hold_key);
	__type(value, struct klock_start);
} hold_start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, struct klock_key);
	__type(value, struct klock_stat);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct klock_key);
} scratch SEC(".maps");

/* Zeroed initial values for tk_lookup_or_init. */
struct klock_start zero_start = {};
struct klock_stat zero_stat = {};

static __always_inline void record(u32 kind, const struct klock_start *st, u64 delta)
{
	struct klock_stat *s;
	struct klock_key *key;
	u64 pid_tgid;
	u32 zero = 0;

	key = bpf_map_lookup_elem(&scratch, &zero);
	if (!key)
		return;
	pid_tgid = tk_pid_tgid();
	if (per_thread) {
		__builtin_memset(key->frames, 0, sizeof(key->frames));
		key->tid = (u32)pid_tgid;
	} else {
		__builtin_memcpy(key->frames, st->frames, sizeof(key->frames));
		key->tid = 0;
	}
	key->kind = kind;
	s = tk_lookup_or_init(&stats, key, &zero_stat);
	if (!s)
		return;
	__sync_fetch_and_add(&s->count, 1);
	__sync_fetch_and_add(&s->total_ns, delta);
	if (delta > s->max_ns) {
		s->max_ns = delta;
		s->max_lock = st->lock;
		s->max_pid = pid_tgid >> 32;
		s->max_tid = (u32)pid_tgid;
		bpf_get_current_comm(s->max_comm, sizeof(s->max_comm));
	}
}

/* Where a call starts: the time, the lock and the stack (NULL: no room
 * in map). */
static __always_inline struct klock_start *start(void *ctx, void *map, u64 lock)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct klock_start *st;

	st = tk_lookup_or_init(map, &tid, &zero_start);
	if (!st)
		return NULL;
	st->ts = bpf_ktime_get_ns();
	st->lock = lock;
	if (!per_thread &&
	    bpf_get_stack(ctx, st->frames, sizeof(st->frames), 0) < 0)
		st->frames[0] = 0;
	return st;
}

static __always_inline bool lock_wanted(u64 lock)
{
	if (target_lock && lock != target_lock)
		return false;
	return tk_task_wanted();
}

/* ---- tracepoints: the waits of contended acquisitions ---- */

static __always_inline int on_begin(void *ctx, u64 lock, unsigned int flags)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct klock_start *st;

	if ((flags & LCB_F_SPIN) && !(flags & LCB_F_MUTEX))
		return 0;  /* a spin lock */
	if (!lock_wanted(lock))
		return 0;
	/* A mutex says begin twice, as it starts spinning and again as
	 * it goes to sleep: the wait is from the first. */
	st = bpf_map_lookup_elem(&wait_start, &tid);
	if (st && st->lock == lock)
		return 0;
	start(ctx, &wait_start, lock);
	return 0;
}

static __always_inline int on_end(u64 lock)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct klock_start *st;
	u64 now = bpf_ktime_get_ns();

	st = bpf_map_lookup_elem(&wait_start, &tid);
	if (!st || st->lock != lock)
		return 0;  /* not a wait we timed (a spin lock's) */
	if (now > st->ts)
		record(KLOCK_WAIT, st, now - st->ts);
	bpf_map_delete_elem(&wait_start, &tid);
	return 0;
}

SEC("tp_btf/contention_begin")
int BPF_PROG(contention_begin_tp_btf, void *lock, unsigned int flags)
{
	return on_begin(ctx, (u64)lock, flags);
}

SEC("raw_tp/contention_begin")
int BPF_PROG(contention_begin_raw_tp, void *lock, unsigned int flags)
{
	return on_begin(ctx, (u64)lock, flags);
}

SEC("tp_btf/contention_end")
int BPF_PROG(contention_end_tp_btf, void *lock, int ret)
{
	return on_end((u64)lock);
}

SEC("raw_tp/contention_end")
int BPF_PROG(contention_end_raw_tp, void *lock, int ret)
{
	return on_end((u64)lock);
}

/* ---- kernel functions: hold times (and waits without tracepoints) ---- */

static __always_inline int on_lock_enter(void *ctx, u64 lock)
{
	if (lock_wanted(lock))
		start(ctx, &call_start, lock);
	return 0;
}

/* A kprobe's stack at the lock function's entry lacks its caller on
 * arm64 (tk_entry_stack.bpf.h): put it in. */
static __always_inline int on_lock_enter_kprobe(struct pt_regs *regs, u64 lock)
{
	struct klock_start *st;

	if (!lock_wanted(lock))
		return 0;
	st = start(regs, &call_start, lock);
	if (st && !per_thread)
		tk_entry_stack_fix(regs, st->frames, KLOCK_FRAMES);
	return 0;
}

/* A lock call returns: acquired says whether it took the lock (a killable
 * or interruptible call may give up, a trylock find it taken); a wait is
 * counted for an acquisition that could have waited (not a trylock).
 * regs: a kretprobe's, whose pc is the caller's return address (NULL
 * for fexit). */
static __always_inline int on_lock_exit(struct pt_regs *regs, bool acquired, bool could_wait)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct hold_key hk = {};
	struct klock_start *st;
	u64 now = bpf_ktime_get_ns();

	st = bpf_map_lookup_elem(&call_start, &tid);
	if (!st)
		return 0;
	if (regs && !per_thread)
		tk_entry_stack_fix_return(regs, st->frames);
	if (acquired) {
		if (kf_wait && could_wait && now > st->ts)
			record(KLOCK_WAIT, st, now - st->ts);
		st->ts = now;
		hk.lock = st->lock;
		hk.tid = tid;
		if (bpf_map_update_elem(&hold_start, &hk, st, BPF_ANY))
			tk_count_loss(TK_LOSS_MAP_FULL);
	}
	bpf_map_delete_elem(&call_start, &tid);
	return 0;
}

static __always_inline int on_unlock(u64 lock)
{
	struct hold_key hk = { .lock = lock, .tid = (u32)bpf_get_current_pid_tgid() };
	struct klock_start *st;
	u64 now = bpf_ktime_get_ns();

	st = bpf_map_lookup_elem(&hold_start, &hk);
	if (!st)
		return 0;  /* locked before tracing, or by a call not traced */
	if (now > st->ts)
		record(KLOCK_HOLD, st, now - st->ts);
	bpf_map_delete_elem(&hold_start, &hk);
	return 0;
}

/* The programs of one lock function fn, named kf_<fn>_enter_<method> and
 * kf_<fn>_exit_<method> (the loader turns off those of a function this
 * kernel lacks, by their sections); ACQUIRED(ret) says from its return value whether it took
 * the lock. */
#define KF_LOCK(fn, could_wait, ACQUIRED)                                  \
SEC("fentry/" #fn)                                                        \
int BPF_PROG(kf_##fn##_enter_fentry, void *lock)                          \
{                                                                         \
	return on_lock_enter(ctx, (u64)lock);                              \
}                                                                         \
SEC("kprobe/" #fn)                                                        \
int BPF_KPROBE(kf_##fn##_enter_kprobe, void *lock)                        \
{                                                                         \
	return on_lock_enter_kprobe(ctx, (u64)lock);                       \
}                                                                         \
SEC("fexit/" #fn)                                                         \
int BPF_PROG(kf_##fn##_exit_fexit, void *lock, long ret)                  \
{                                                                         \
	return on_lock_exit(NULL, ACQUIRED((int)ret), could_wait);         \
}                                                                         \
SEC("kretprobe/" #fn)                                                     \
int BPF_KRETPROBE(kf_##fn##_exit_kretprobe, long ret)                     \
{                                                                         \
	return on_lock_exit(ctx, ACQUIRED((int)ret), could_wait);          \
}

#define KF_UNLOCK(fn)                                                      \
SEC("fentry/" #fn)                                                        \
int BPF_PROG(kf_##fn##_fentry, void *lock)                                \
{                                                                         \
	return on_unlock((u64)lock);                                       \
}                                                                         \
SEC("kprobe/" #fn)                                                        \
int BPF_KPROBE(kf_##fn##_kprobe, void *lock)                              \
{                                                                         \
	return on_unlock((u64)lock);                                       \
}

/* void functions always take the lock (the return value is not read: a
 * void function leaves whatever its last call left in the register);
 * killable and interruptible ones return 0 when they did; trylocks 1. */
#define ALWAYS(ret) true
#define ZERO_OK(ret) ((ret) == 0)
#define ONE_OK(ret) ((ret) == 1)

/* bcc's klockstat's functions. */
KF_LOCK(mutex_lock, true, ALWAYS)
KF_LOCK(mutex_lock_interruptible, true, ZERO_OK)
KF_LOCK(mutex_lock_killable, true, ZERO_OK)
KF_LOCK(mutex_trylock, false, ONE_OK)
KF_LOCK(down_read, true, ALWAYS)
KF_LOCK(down_read_interruptible, true, ZERO_OK)
KF_LOCK(down_read_killable, true, ZERO_OK)
KF_LOCK(down_read_trylock, false, ONE_OK)
KF_LOCK(down_write, true, ALWAYS)
KF_LOCK(down_write_killable, true, ZERO_OK)
KF_LOCK(down_write_trylock, false, ONE_OK)
KF_UNLOCK(mutex_unlock)
KF_UNLOCK(up_read)
KF_UNLOCK(up_write)

char LICENSE[] SEC("license") = "GPL";
