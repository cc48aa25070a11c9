// SPDX-License-Identifier: GPL-2.0
/* capable: security capability checks, as the commoncap LSM makes them in
 * cap_capable(cred, target_ns, cap, opts), with their result. Two ways
 * (libtrace/kfunc_or_tp.h picks one):
 *
 * kf_*: the function itself, as bcc. The entry (fentry, else kprobe)
 * keeps the capability, the options (CAP_OPT_NOAUDIT: without -v such
 * checks are not reported, as bcc's; CAP_OPT_INSETID: a set*id call's
 * check) and the stacks by thread (tk_pending.bpf.h); the return (fexit,
 * else kretprobe) sends them with the result.
 *
 * tp_*: the capability:cap_capable tracepoint (6.14), which cap_capable
 * fires with its result. It has no opts: audit and insetid are unknown
 * there (CAP_OPT_UNKNOWN) and every check is reported, -v or not. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "capable.h"
#include "tk_cgroup.bpf.h"
#include "tk_emit.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_stack.bpf.h"

/* include/linux/security.h, since 5.1 */
#define CAP_OPT_NOAUDIT 2
#define CAP_OPT_INSETID 4

const volatile bool non_audit = false;   /* -v: checks made not to be audited too */
const volatile bool kstack = false;      /* -K */
const volatile bool ustack = false;      /* -U */
const volatile bool unique = false;      /* --unique */
const volatile int self_tgid = 0;        /* the tool: its own checks (reading
					  * its maps) would feed themselves */

/* --unique: what was reported already. */
struct seen_key {
	int cap;
	int tgid;
	int kstack;
	int ustack;
	int allowed;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CAPABLE_SEEN);
	__type(key, struct seen_key);
	__type(value, u8);
} seen SEC(".maps");

struct pending {
	int cap;
	unsigned int opts;
	int kstack;
	int ustack;
};

#define TK_PENDING_VALUE struct pending
#include "tk_pending.bpf.h"

static __always_inline bool wanted(void)
{
	return (int)(tk_pid_tgid() >> 32) != self_tgid && tk_task_wanted();
}

/* tk_stacks, else the spill map, else the frames sent on tk_events
 * before the event; a loss is counted (tk_stack.bpf.h). The kf_ way
 * takes them at the entry and sends the event at the return: over perf
 * buffers a task moved to another CPU in between has its event in
 * another CPU's buffer than frames sent at the entry, which may be read
 * after it (printed unavailable, counted as a stack not read). */
static __always_inline int stack_id(void *ctx, bool take, u64 flags)
{
	return take ? tk_stack_id(ctx, flags) : TK_STACK_NOT_TAKEN;
}

static __always_inline void send(void *ctx, int cap, int ret, int audit, int insetid,
				 int kid, int uid)
{
	struct cap_event e = {};

	if (unique) {
		struct seen_key k = {
			.cap = cap, .tgid = tk_pid_tgid() >> 32,
			.kstack = kid, .ustack = uid, .allowed = !ret,
		};
		u8 one = 1;
		long err;

		if (bpf_map_lookup_elem(&seen, &k))
			return;
		err = bpf_map_update_elem(&seen, &k, &one, BPF_NOEXIST);
		if (err == -17 /* EEXIST: another CPU sent it */)
			return;
		if (err)
			tk_count_loss(TK_LOSS_MAP_FULL);   /* sent all the same */
	}
	TK_EVENT_SET_CURRENT(&e);
	e.cap = cap;
	e.ret = ret;
	e.audit = audit;
	e.insetid = insetid;
	e.kstack = kid;
	e.ustack = uid;
	tk_emit(ctx, &e, sizeof(e));
}

/* ---- kf_: cap_capable() ---- */

static __always_inline int kf_enter(void *ctx, int cap, unsigned int opts)
{
	struct pending p = { .cap = cap, .opts = opts };

	if (!non_audit && (opts & CAP_OPT_NOAUDIT))
		return 0;
	if (!wanted())
		return 0;
	/* at the entry: cap_capable on top, whatever the return probe */
	p.kstack = stack_id(ctx, kstack, 0);
	p.ustack = stack_id(ctx, ustack, BPF_F_USER_STACK);
	tk_pending_put((u32)bpf_get_current_pid_tgid(), &p);
	return 0;
}

static __always_inline int kf_leave(void *ctx, int ret)
{
	struct pending p;

	if (!tk_pending_take((u32)bpf_get_current_pid_tgid(), &p))
		return 0;
	send(ctx, p.cap, ret, !(p.opts & CAP_OPT_NOAUDIT), !!(p.opts & CAP_OPT_INSETID),
	     p.kstack, p.ustack);
	return 0;
}

SEC("fentry/cap_capable")
int BPF_PROG(kf_cap_entry_fentry, const struct cred *cred, struct user_namespace *ns,
	     int cap, unsigned int opts)
{
	return kf_enter(ctx, cap, opts);
}

SEC("kprobe/cap_capable")
int BPF_KPROBE(kf_cap_entry_kprobe, const struct cred *cred, struct user_namespace *ns,
	       int cap, unsigned int opts)
{
	return kf_enter(ctx, cap, opts);
}

SEC("fexit/cap_capable")
int BPF_PROG(kf_cap_exit_fexit, const struct cred *cred, struct user_namespace *ns,
	     int cap, unsigned int opts, int ret)
{
	return kf_leave(ctx, ret);
}

SEC("kretprobe/cap_capable")
int BPF_KRETPROBE(kf_cap_exit_kretprobe, long ret)
{
	return kf_leave(ctx, (int)ret);
}

/* ---- tp_: capability:cap_capable(cred, target_ns, capable_ns, cap, ret) ---- */

static __always_inline int tp_check(void *ctx, int cap, int ret)
{
	if (!wanted())
		return 0;
	send(ctx, cap, ret, CAP_OPT_UNKNOWN, CAP_OPT_UNKNOWN,
	     stack_id(ctx, kstack, 0), stack_id(ctx, ustack, BPF_F_USER_STACK));
	return 0;
}

SEC("tp_btf/cap_capable")
int BPF_PROG(tp_cap_tp_btf, const struct cred *cred, struct user_namespace *target_ns,
	     const struct user_namespace *capable_ns, int cap, int ret)
{
	return tp_check(ctx, cap, ret);
}

SEC("raw_tp/cap_capable")
int BPF_PROG(tp_cap_raw_tp, const struct cred *cred, struct user_namespace *target_ns,
	     const struct user_namespace *capable_ns, int cap, int ret)
{
	return tp_check(ctx, cap, ret);
}

/* The tracepoint's record (capability/cap_capable, since 6.13): declared
 * here, so the program builds against an older vmlinux.h. */
struct trace_event_raw_cap_capable___tk {
	struct trace_entry ent;
	const struct cred *cred;
	struct user_namespace *target_ns;
	const struct user_namespace *capable_ns;
	int cap;
	int ret;
} __attribute__((preserve_access_index));

SEC("tracepoint/capability/cap_capable")
int tp_cap_tp(struct trace_event_raw_cap_capable___tk *ctx)
{
	return tp_check(ctx, ctx->cap, ctx->ret);
}

char LICENSE[] SEC("license") = "GPL";
