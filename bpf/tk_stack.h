/* Stack counting shared by profile, offcputime and stackcount: the key
 * of the counts map and the error counters, seen by BPF and libtrace
 * (libtrace/stacks.h). Plain C types only. */
#ifndef TK_STACK_H
#define TK_STACK_H

#include "tk_shared.h"

/* Which stacks to take (rodata tk_stack_mode). */
#define TK_STACK_USER 1
#define TK_STACK_KERNEL 2

/* A stack id that was not asked for (-U, -K). Negative ids are otherwise
 * -errno from bpf_get_stackid: -EFAULT is "no stack of that kind" (a
 * kernel thread has no user stack), the others are counted losses. */
#define TK_STACK_NOT_TAKEN (-1000)

/* Set in the id of a stack kept in tk_stacks_spill, not tk_stacks (ids
 * stay positive; a map has at most 2^24 slots). */
#define TK_STACK_SPILL_ID (1 << 30)
/* Set too (with TK_STACK_SPILL_ID) in the id of a stack that neither map
 * could keep, whose frames went to userspace on tk_events instead
 * (struct tk_stack_ring_head): its low 29 bits are a hash of the frames,
 * as a spilled stack's are another hash's. */
#define TK_STACK_RING_ID (1 << 29)

/* The default depth: the kernel's kernel.perf_event_max_stack. */
#define TK_STACK_MAX_DEPTH 127

/* --unwind auto|cfi: bytes of the user stack copied from sp, at most. */
#define TK_STACK_SNAP_MAX 2048

/* The user registers a CFI unwind starts from: x86-64's ip, sp and bp;
 * arm64's pc, sp, x29 (the frame pointer) and x30 (the link register).
 * Userspace and BPF objects are built for one architecture each. */
#if defined(__aarch64__) || defined(__TARGET_ARCH_arm64)
#define TK_STACK_UREGS 4
#else
#define TK_STACK_UREGS 3
#endif

struct tk_stack_key {
	unsigned int tgid;       /* process; 0 with the idle task */
	unsigned int pid;        /* thread, when the tool keys by thread
				  * (offcputime); else 0 */
	int user_stack_id;       /* tk_stacks index (or tk_stacks_spill's,
				  * TK_STACK_SPILL_ID set), or <0 (above) */
	int kern_stack_id;
	unsigned long long cgroup_id;  /* --print-cgroup: the task's cgroup
					* v2 id, so that each cgroup's
					* stacks are counted apart; else 0 */
	char comm[TK_TASK_COMM_LEN];
	/* --unwind auto|cfi (libtrace/unwind.h): the user registers at the
	 * event (TK_STACK_UREGS; all 0 when not taken: a kernel thread, a
	 * kernel without bpf_task_pt_regs). The counts map's key size is
	 * cut to what the mode takes (tk_stacks_key_size): with --unwind fp
	 * keys end before uregs, as they did before unwinding. ip and sp
	 * key a stack beside its frame-pointer walk, so that a frameless
	 * leaf's callers are told apart by where sp was (and on arm64 by
	 * the link register, where such a leaf keeps its return address). */
	unsigned long long uregs[TK_STACK_UREGS];
};

/* The top of a user stack as copied at the first event of its key (map
 * tk_stack_snaps, by the same key): what the unwinder reads. Later events
 * of the key only count, with no copy: their stack above sp is taken
 * to hold the same return addresses and saved frame pointers (same
 * walk, same ip, sp and bp). The map's value size is cut to the mode's
 * copy (tk_stacks_snap_size). */
struct tk_stack_snap {
	unsigned int len;        /* bytes copied from sp */
	unsigned int pad_;
	unsigned char data[TK_STACK_SNAP_MAX];
};

/* Per-CPU counters of stacks that could not be recorded (map
 * tk_stack_errs); the counts map being full is TK_LOSS_MAP_FULL. */
enum tk_stack_err {
	TK_STACK_ERR_COLLISION = 0,  /* -EEXIST: the hash bucket holds
				      * another stack */
	TK_STACK_ERR_FULL,           /* -ENOMEM: no free stack slot */
	TK_STACK_ERR_OTHER,          /* any other -errno */
	TK_STACK_ERR_SNAP,           /* a stack copy not kept: the map of
				      * copies was full */
	TK_STACK_ERR_RING,           /* a stack neither map kept, whose
				      * frames the event buffer had no
				      * room for */
	TK_STACK_ERR_MAX,
};

/* An event on tk_events: a process seen for the first time, whose
 * mappings userspace snapshots at once (it may be gone by exit). */
/* A process's pid event is sent at most this often when nothing that
 * BPF can see of its address space changed (flags 0): userspace then
 * re-reads only its JIT map (perf-PID.map), which may name code written
 * since into mappings it had. Sending one per new stack woke the reader
 * thousands of times a second on a many-function workload; re-reading
 * /proc/PID/maps on each made most of profile's open and read calls
 * there (844 openat in 10 s; 79 now). */
#define TK_STACK_RENOTE_NS (50 * 1000 * 1000ULL)

/* flags: the process runs another image (it exec'ed) since it was last
 * noted. Its stacks from now on are in mappings userspace has not read,
 * and the rate limit above would hold the new notice back for up to
 * TK_STACK_RENOTE_NS: long enough for a short COMMAND to exec, run and
 * exit unread (seen under QEMU's TCG, where a spinner's samples all fall
 * on one address and so make one new key only). */
#define TK_STACK_PID_EXEC 1
/* flags: the process has more or fewer mappings, or more or less
 * read-only code (mm->exec_vm), than when it was last noted: a new stack
 * may run code mapped since (a process first noted in the dynamic loader,
 * whose main starts spinning before the rate limit lets a new notice
 * through, then makes no new key until it exits: seen under TCG, main's
 * caller in libc left unread). Sent at once, per new key only, as
 * exec's. A library unmapped and another of the same size mapped in its
 * place in as many mappings goes unseen until output, where a live
 * process's unknown addresses have its mappings read again. */
#define TK_STACK_PID_MAPS 2
/* flags: BPF has no record of the process (new, or its record evicted
 * from the LRU map): userspace reads its mappings whole. */
#define TK_STACK_PID_NEW 4

/* A stack's frames on tk_events (TK_STACK_RING_ID): this head, then
 * the stack map's value (tk_stack_depth frames, zeros after the last).
 * marker stands where a pid event's tgid does, and no tgid is ~0. */
#define TK_STACK_RING_MARKER 0xffffffffu
struct tk_stack_ring_head {
	unsigned int marker;
	int id;
};

struct tk_stack_pid_event {
	unsigned int tgid;
	unsigned int flags;
	/* The parent, when the process runs its parent's image (a fork
	 * that has not exec'd): its mappings stand for a child that is
	 * gone before userspace reads them. Else 0. */
	unsigned int ppid;
	unsigned int pad_;
};

#endif
