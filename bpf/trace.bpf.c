// SPDX-License-Identifier: GPL-2.0
/* trace: the generic tracer. No code is generated at run time: each
 * probe's plan (trace.h, tk_plan.h), written by userspace from the
 * probe's text and BTF, says what to read (fetches: a base, then loads
 * at offsets), what to test (the filter's bytecode) and what to send.
 *
 * A probe is a slot: for slot N, programs trace_tN_tp (a tracepoint),
 * trace_kN_fentry / _kprobe, trace_krN_fexit / _kretprobe, trace_uN_uprobe
 * and trace_urN_uretprobe, each with N and its way of reading arguments
 * built in; userspace points the one it needs at its target and turns
 * off the rest. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#include "trace.h"
#include "tk_cgroup.bpf.h"
#include "tk_emit.bpf.h"
#include "tk_filter.bpf.h"

/* In .rodata: the verifier knows every field of a slot's plan, so it
 * drops the branches the plan never takes and each program is, after
 * verification, the straight code of its own probe. */
const volatile struct trace_probe_plan trace_plans[TRACE_SLOTS];

/* Per CPU: the fetched values, the bytecode's stack, the event. */
struct scratch {
	u64 vals[TK_PLAN_FETCHES];
	u64 stack[TK_PLAN_STACK];
	char strs[TK_PLAN_FETCHES][TK_PLAN_STR_LEN];
	struct trace_hit ev;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct scratch);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(key_size, sizeof(u32));
	__uint(value_size, 127 * sizeof(u64));
	__uint(max_entries, 4096);
} trace_stacks SEC(".maps");

/* pt_regs read through probe reads (the _CORE forms): the compiler
 * turns a switch over direct loads into one load at a computed offset
 * from ctx, which the verifier refuses. */
static __always_inline u64 regs_arg(struct pt_regs *regs, int n)
{
	switch (n) {
	case 1: return PT_REGS_PARM1_CORE(regs);
	case 2: return PT_REGS_PARM2_CORE(regs);
	case 3: return PT_REGS_PARM3_CORE(regs);
	case 4: return PT_REGS_PARM4_CORE(regs);
	case 5: return PT_REGS_PARM5_CORE(regs);
#ifdef PT_REGS_PARM6_CORE
	case 6: return PT_REGS_PARM6_CORE(regs);
#endif
	}
	return 0;
}

/* fentry/fexit: ctx[i] is argument i + 1; fexit's return value follows
 * the arguments. Constant offsets only (the verifier's rule for ctx). */
static __always_inline u64 args_at(u64 *ctx, int i)
{
	switch (i) {
	case 0: return ctx[0];
	case 1: return ctx[1];
	case 2: return ctx[2];
	case 3: return ctx[3];
	case 4: return ctx[4];
	case 5: return ctx[5];
	case 6: return ctx[6];
	}
	return 0;
}

static __always_inline u64 base_value(void *ctx, int mode, const volatile struct trace_probe_plan *p,
				      const volatile struct tk_fetch *f)
{
	u64 id;

	switch (f->base) {
	case TK_FB_CTX:
		return (u64)(long)ctx;
	case TK_FB_ARG:
		if (mode == TRACE_MODE_ARGS)
			return args_at(ctx, f->arg - 1);
		if (mode == TRACE_MODE_USDT) {
			long v = 0;

			bpf_usdt_arg(ctx, f->arg - 1, &v);
			return v;
		}
		return regs_arg(ctx, f->arg);
	case TK_FB_RETVAL:
		if (mode == TRACE_MODE_ARGS)
			return args_at(ctx, p->nargs);
		return PT_REGS_RC_CORE((struct pt_regs *)ctx);
	case TK_FB_PID:
		return tk_pid_tgid() >> 32;
	case TK_FB_TID:
		return (u32)tk_pid_tgid();
	case TK_FB_UID:
		id = bpf_get_current_uid_gid();
		return (u32)id;
	case TK_FB_CPU:
		return bpf_get_smp_processor_id();
	case TK_FB_TS:
		return bpf_ktime_get_ns();
	}
	return 0;
}

static __always_inline u64 extend(u64 v, int size, bool sgn)
{
	switch (size) {
	case 1: return sgn ? (u64)(s64)(s8)v : (u8)v;
	case 2: return sgn ? (u64)(s64)(s16)v : (u16)v;
	case 4: return sgn ? (u64)(s64)(s32)v : (u32)v;
	}
	return v;
}

/* Is addr the process's memory? Always for a user probe; for a kernel
 * one, a user pointer it was handed (a syscall's filename, a struct the
 * caller passed): on x86-64 and arm64 the user half of the address space
 * is the one with the top bit clear, and a kernel read of it fails. */
static __always_inline bool user_addr(const volatile struct tk_fetch *f, u64 addr)
{
	return f->user || (s64)addr >= 0;
}

/* Fetch f: an integer into *val, or a string into str. False when a
 * read faulted (a page the process has not touched, a bad pointer): BPF
 * cannot fault pages in, and the value is shown as "(fault)". */
static __always_inline bool fetch(void *ctx, int mode, const volatile struct trace_probe_plan *p,
				  const volatile struct tk_fetch *f, u64 *val, char *str)
{
	u64 v = base_value(ctx, mode, p, f);
	long err = 0;
	int i;

	str[0] = 0;
	for (i = 0; i < TK_PLAN_STEPS; i++) {
		const volatile struct tk_fetch_step *s = &f->step[i];
		u32 size = s->size;
		u64 t = 0;

		if (i >= f->nsteps)
			break;
		v += (s64)s->off;
		if (!size)
			continue;
		if (size > 8)
			size = 8;
		if (user_addr(f, v))
			err = bpf_probe_read_user(&t, size, (void *)v);
		else
			err = bpf_probe_read_kernel(&t, size, (void *)v);
		if (err < 0) {
			*val = 0;
			return false;
		}
		v = extend(t, size, s->is_signed);
	}
	*val = v;
	if (f->base == TK_FB_COMM) {
		bpf_get_current_comm(str, TK_TASK_COMM_LEN);
	} else if (f->final == TK_FF_STR) {
		if (user_addr(f, v))
			err = bpf_probe_read_user_str(str, TK_PLAN_STR_LEN, (void *)v);
		else
			err = bpf_probe_read_kernel_str(str, TK_PLAN_STR_LEN, (void *)v);
	} else if (f->final == TK_FF_DATA_LOC) {
		err = bpf_probe_read_kernel_str(str, TK_PLAN_STR_LEN, (char *)ctx + (v & 0xffff));
	}
	if (err < 0)
		str[0] = 0;
	return err >= 0;
}

static __always_inline bool streq(const char *s, const volatile char *c, bool prefix)
{
	for (int i = 0; i < TK_PLAN_STR_LEN; i++) {
		if (!c[i])
			return prefix || !s[i];
		if (s[i] != c[i])
			return false;
	}
	return true;
}

static __always_inline u64 sdiv(u64 a, u64 b, bool mod)
{
	bool na = (s64)a < 0, nb = (s64)b < 0;
	u64 ua = na ? -a : a, ub = nb ? -b : b, q;

	if (!ub)
		return 0;
	if (mod) {
		q = ua % ub;
		return na ? -q : q;
	}
	q = ua / ub;
	return na != nb ? -q : q;
}

static __always_inline u64 binop(int op, u64 a, u64 b, bool sgn)
{
	switch (op) {
	case TK_I_ADD: return a + b;
	case TK_I_SUB: return a - b;
	case TK_I_MUL: return a * b;
	case TK_I_DIV: return sgn ? sdiv(a, b, false) : b ? a / b : 0;
	case TK_I_MOD: return sgn ? sdiv(a, b, true) : b ? a % b : 0;
	case TK_I_SHL: return a << (b & 63);
	case TK_I_SHR: return sgn ? (u64)((s64)a >> (b & 63)) : a >> (b & 63);
	case TK_I_BAND: return a & b;
	case TK_I_BOR: return a | b;
	case TK_I_BXOR: return a ^ b;
	case TK_I_EQ: return a == b;
	case TK_I_NE: return a != b;
	case TK_I_LT: return sgn ? (s64)a < (s64)b : a < b;
	case TK_I_LE: return sgn ? (s64)a <= (s64)b : a <= b;
	case TK_I_GT: return sgn ? (s64)a > (s64)b : a > b;
	case TK_I_GE: return sgn ? (s64)a >= (s64)b : a >= b;
	case TK_I_LAND: return a && b;
	case TK_I_LOR: return a || b;
	}
	return 0;
}

/* The program at start: its value. */
static __always_inline u64 run(const volatile struct trace_probe_plan *p, struct scratch *sc, int start)
{
	u32 sp = 0;
	int i;

	for (i = 0; i < TK_PLAN_INSNS; i++) {
		u32 pc = start + i;
		const volatile struct tk_insn *in;
		u64 a, b;

		if (pc >= TK_PLAN_INSNS)
			break;
		in = &p->insn[pc];
		switch (in->op) {
		case TK_I_END:
			return sp ? sc->stack[(sp - 1) & (TK_PLAN_STACK - 1)] : 0;
		case TK_I_FETCH:
		case TK_I_CONST:
		case TK_I_STREQ:
			if (sp >= TK_PLAN_STACK)
				return 0;
			a = in->op == TK_I_CONST ? (u64)in->imm :
			    in->op == TK_I_FETCH ? sc->vals[in->a & (TK_PLAN_FETCHES - 1)] :
			    streq(sc->strs[in->a & (TK_PLAN_FETCHES - 1)],
				  p->str[in->b & (TK_PLAN_STRS - 1)], in->flags & TK_IF_PREFIX);
			sc->stack[sp & (TK_PLAN_STACK - 1)] = a;
			sp++;
			break;
		case TK_I_NEG:
		case TK_I_NOT:
		case TK_I_BNOT:
		case TK_I_CAST:
			if (!sp)
				return 0;
			a = sc->stack[(sp - 1) & (TK_PLAN_STACK - 1)];
			a = in->op == TK_I_NEG ? -a : in->op == TK_I_NOT ? !a :
			    in->op == TK_I_BNOT ? ~a : extend(a, in->a, in->flags & TK_IF_SIGNED);
			sc->stack[(sp - 1) & (TK_PLAN_STACK - 1)] = a;
			break;
		default:
			if (sp < 2)
				return 0;
			b = sc->stack[(sp - 1) & (TK_PLAN_STACK - 1)];
			a = sc->stack[(sp - 2) & (TK_PLAN_STACK - 1)];
			sp--;
			sc->stack[(sp - 1) & (TK_PLAN_STACK - 1)] =
				binop(in->op, a, b, in->flags & TK_IF_SIGNED);
			break;
		}
	}
	return 0;
}

static __always_inline int handle(void *ctx, u32 slot, int mode)
{
	const volatile struct trace_probe_plan *p = &trace_plans[slot];
	u32 zero = 0;
	struct scratch *sc = bpf_map_lookup_elem(&scratch, &zero);
	struct trace_hit *ev;
	u64 id, size;
	u32 faults;
	int i;

	if (!sc || !tk_task_wanted())
		return 0;
	faults = 0;
	for (i = 0; i < TK_PLAN_FETCHES; i++) {
		if (i >= p->nfetch)
			break;
		if (!fetch(ctx, mode, p, &p->fetch[i], &sc->vals[i], sc->strs[i]))
			faults |= 1u << i;
	}
	if (p->filter >= 0 && !run(p, sc, p->filter))
		return 0;
	ev = &sc->ev;
	ev->probe = slot;
	id = tk_pid_tgid();
	ev->pid = id >> 32;
	ev->tid = (u32)id;
	ev->cpu = bpf_get_smp_processor_id();
	ev->ts = bpf_ktime_get_ns();
	ev->cgroup_id = tk_cgroup_id();
	bpf_get_current_comm(ev->comm, sizeof(ev->comm));
	ev->kstack = p->kstack ? bpf_get_stackid(ctx, &trace_stacks, 0) : -1;
	ev->ustack = p->ustack ? bpf_get_stackid(ctx, &trace_stacks, BPF_F_USER_STACK) : -1;
	ev->faults = 0;
	for (i = 0; i < TRACE_VALUES; i++) {
		int src = p->value_src[i];
		u32 off = p->value_off[i];
		u64 v;

		if (i >= p->nvalues)
			break;
		if (off > TRACE_DATA_MAX - TK_PLAN_STR_LEN)
			break;
		if (src >= 0 && src < TK_PLAN_FETCHES && (faults >> src) & 1)
			ev->faults |= 1u << i;
		if (p->value_str[i]) {
			if (src >= 0 && src < TK_PLAN_FETCHES)
				__builtin_memcpy(ev->data + off, sc->strs[src], TK_PLAN_STR_LEN);
			continue;
		}
		v = src >= 0 ? sc->vals[src & (TK_PLAN_FETCHES - 1)] : run(p, sc, -(src + 1));
		__builtin_memcpy(ev->data + off, &v, sizeof(v));
	}
	size = offsetof(struct trace_hit, data) + p->data_size;
	if (size > sizeof(*ev))
		size = sizeof(*ev);
	tk_emit(ctx, ev, size);
	return 0;
}

#define TRACE_SLOT(N)                                                          \
SEC("tp")                                                                      \
int trace_t##N##_tp(void *ctx) { return handle(ctx, N, TRACE_MODE_TP); }       \
SEC("fentry")                                                                  \
int trace_k##N##_fentry(u64 *ctx) { return handle(ctx, N, TRACE_MODE_ARGS); }  \
SEC("kprobe")                                                                  \
int trace_k##N##_kprobe(struct pt_regs *ctx) { return handle(ctx, N, TRACE_MODE_REGS); } \
SEC("fexit")                                                                   \
int trace_kr##N##_fexit(u64 *ctx) { return handle(ctx, N, TRACE_MODE_ARGS); }  \
SEC("kretprobe")                                                               \
int trace_kr##N##_kretprobe(struct pt_regs *ctx) { return handle(ctx, N, TRACE_MODE_REGS); } \
SEC("uprobe")                                                                  \
int trace_u##N##_uprobe(struct pt_regs *ctx) { return handle(ctx, N, TRACE_MODE_REGS); } \
SEC("uretprobe")                                                               \
int trace_ur##N##_uretprobe(struct pt_regs *ctx) { return handle(ctx, N, TRACE_MODE_REGS); } \
SEC("usdt")                                                                    \
int trace_U##N##_usdt(struct pt_regs *ctx) { return handle(ctx, N, TRACE_MODE_USDT); }

TRACE_SLOT(0)
TRACE_SLOT(1)
TRACE_SLOT(2)
TRACE_SLOT(3)
TRACE_SLOT(4)
TRACE_SLOT(5)
TRACE_SLOT(6)
TRACE_SLOT(7)

char LICENSE[] SEC("license") = "GPL";
