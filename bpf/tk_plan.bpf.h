/* The generic tracer's plans run in BPF (trace, argdist): the fetches
 * of a probe (a base, then loads at offsets), and the bytecode of its
 * filter and values, on a small stack machine in a bounded loop. The plan
 * is in .rodata: the verifier knows every field of it, so it drops the
 * branches the plan never takes and each program is, after verification,
 * the straight code of its own probe. */
#ifndef TK_PLAN_BPF_H
#define TK_PLAN_BPF_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

#include "tk_plan.h"
#include "tk_filter.bpf.h"

/* Per CPU, in a tool's scratch map: the fetched values, the bytecode's
 * stack. */
struct tk_plan_scratch {
	u64 vals[TK_PLAN_FETCHES];
	u64 stack[TK_PLAN_STACK];
	char strs[TK_PLAN_FETCHES][TK_PLAN_STR_LEN];
};

/* pt_regs read through probe reads (the _CORE forms): the compiler
 * turns a switch over direct loads into one load at a computed offset
 * from ctx, which the verifier refuses. */
static __always_inline u64 tk_plan_regs_arg(struct pt_regs *regs, int n)
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
static __always_inline u64 tk_plan_args_at(u64 *ctx, int i)
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

static __always_inline u64 tk_plan_base_value(void *ctx, int mode, const volatile struct tk_plan_code *p,
				      const volatile struct tk_fetch *f)
{
	u64 id;

	switch (f->base) {
	case TK_FB_CTX:
		return (u64)(long)ctx;
	case TK_FB_ARG:
		if (mode == TK_MODE_ARGS)
			return tk_plan_args_at(ctx, f->arg - 1);
		if (mode == TK_MODE_USDT) {
			long v = 0;

			bpf_usdt_arg(ctx, f->arg - 1, &v);
			return v;
		}
		return tk_plan_regs_arg(ctx, f->arg);
	case TK_FB_RETVAL:
		if (mode == TK_MODE_ARGS)
			return tk_plan_args_at(ctx, p->nargs);
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

static __always_inline u64 tk_plan_extend(u64 v, int size, bool sgn)
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
static __always_inline bool tk_plan_user_addr(const volatile struct tk_fetch *f, u64 addr)
{
	return f->user || (s64)addr >= 0;
}

/* Fetch f: an integer into *val, or a string into str. False when a
 * read faulted (a page the process has not touched, a bad pointer): BPF
 * cannot fault pages in, and the value is shown as "(fault)". */
/* A fetch's integer: its base, then its reads; false when a read faults
 * (*val is 0 then). */
static __always_inline bool tk_plan_fetch_int(void *ctx, int mode, const volatile struct tk_plan_code *p,
					      const volatile struct tk_fetch *f, u64 *val)
{
	u64 v = tk_plan_base_value(ctx, mode, p, f);
	long err;
	int i;

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
		if (tk_plan_user_addr(f, v))
			err = bpf_probe_read_user(&t, size, (void *)v);
		else
			err = bpf_probe_read_kernel(&t, size, (void *)v);
		if (err < 0) {
			*val = 0;
			return false;
		}
		v = tk_plan_extend(t, size, s->is_signed);
	}
	*val = v;
	return true;
}

static __always_inline bool tk_plan_fetch(void *ctx, int mode, const volatile struct tk_plan_code *p,
				  const volatile struct tk_fetch *f, u64 *val, char *str)
{
	long err = 0;
	u64 v;

	/* A string whole, its tail zeroed too: argdist keys by it. */
	if (f->base == TK_FB_COMM || f->final != TK_FF_INT)
		__builtin_memset(str, 0, TK_PLAN_STR_LEN);
	if (!tk_plan_fetch_int(ctx, mode, p, f, val))
		return false;
	v = *val;
	if (f->base == TK_FB_COMM) {
		bpf_get_current_comm(str, TK_TASK_COMM_LEN);
	} else if (f->final == TK_FF_STR) {
		if (tk_plan_user_addr(f, v))
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

static __always_inline bool tk_plan_streq(const char *s, const volatile char *c, bool prefix)
{
	for (int i = 0; i < TK_PLAN_STR_LEN; i++) {
		if (!c[i])
			return prefix || !s[i];
		if (s[i] != c[i])
			return false;
	}
	return true;
}

static __always_inline u64 tk_plan_sdiv(u64 a, u64 b, bool mod)
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

static __always_inline u64 tk_plan_binop(int op, u64 a, u64 b, bool sgn)
{
	switch (op) {
	case TK_I_ADD: return a + b;
	case TK_I_SUB: return a - b;
	case TK_I_MUL: return a * b;
	case TK_I_DIV: return sgn ? tk_plan_sdiv(a, b, false) : b ? a / b : 0;
	case TK_I_MOD: return sgn ? tk_plan_sdiv(a, b, true) : b ? a % b : 0;
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
static __always_inline u64 tk_plan_run(const volatile struct tk_plan_code *p, struct tk_plan_scratch *sc, int start)
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
			    tk_plan_streq(sc->strs[in->a & (TK_PLAN_FETCHES - 1)],
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
			    in->op == TK_I_BNOT ? ~a : tk_plan_extend(a, in->a, in->flags & TK_IF_SIGNED);
			sc->stack[(sp - 1) & (TK_PLAN_STACK - 1)] = a;
			break;
		default:
			if (sp < 2)
				return 0;
			b = sc->stack[(sp - 1) & (TK_PLAN_STACK - 1)];
			a = sc->stack[(sp - 2) & (TK_PLAN_STACK - 1)];
			sp--;
			sc->stack[(sp - 1) & (TK_PLAN_STACK - 1)] =
				tk_plan_binop(in->op, a, b, in->flags & TK_IF_SIGNED);
			break;
		}
	}
	return 0;
}

/* Every fetch of p into sc (*faults: bit i, fetch i could not be
 * read), then its filter: whether the hit counts. */
static __always_inline void tk_plan_fetch_range(void *ctx, int mode,
						 const volatile struct tk_plan_code *p,
						 struct tk_plan_scratch *sc, u32 *faults,
						 int from, int to)
{
	int i;

	for (i = 0; i < TK_PLAN_FETCHES; i++) {
		if (i >= to)
			break;
		if (i < from)
			continue;
		if (!tk_plan_fetch(ctx, mode, p, &p->fetch[i], &sc->vals[i], sc->strs[i]))
			*faults |= 1u << i;
	}
}

/* Does the event pass a filter of one comparison (tk_plan_to_code's
 * quick filter; true when there is none)? Decided first, from its one
 * integer read, before the scratch map is looked up: bench-trace's
 * dropped events cost 30 ns more than bpftrace's compiled filter with it
 * after. A read that faults compares 0, as the bytecode would. */
static __always_inline bool tk_plan_quick_pass(void *ctx, int mode, const volatile struct tk_plan_code *p)
{
	u64 a;

	if (!p->quick.op)
		return true;
	tk_plan_fetch_int(ctx, mode, p, &p->fetch[p->quick.fetch & (TK_PLAN_FETCHES - 1)], &a);
	if (p->quick.cast)
		a = tk_plan_extend(a, p->quick.cast, p->quick.flags & (TK_IF_SIGNED << 4));
	return tk_plan_binop(p->quick.op, a, (u64)p->quick.imm, p->quick.flags & TK_IF_SIGNED);
}

/* The filter's fetches, the filter, then (for an event that passes) the
 * rest: an event the filter drops costs only what the filter reads
 * (bench-trace: a filter on pid with a "%s" of a path cost 390 ns per
 * dropped event when the string was read first). */
static __always_inline bool tk_plan_eval(void *ctx, int mode, const volatile struct tk_plan_code *p,
					 struct tk_plan_scratch *sc, u32 *faults)
{
	*faults = 0;
	tk_plan_fetch_range(ctx, mode, p, sc, faults, 0, p->nfilter_fetch);
	/* A quick filter was tk_plan_quick_pass's, before the scratch map. */
	if (!p->quick.op && p->filter >= 0 && !tk_plan_run(p, sc, p->filter))
		return false;
	tk_plan_fetch_range(ctx, mode, p, sc, faults, p->nfilter_fetch, p->nfetch);
	return true;
}

/* A value of the plan: src >= 0 is a fetch, else the program that
 * starts at -(src + 1). */
static __always_inline u64 tk_plan_value(const volatile struct tk_plan_code *p,
					 struct tk_plan_scratch *sc, int src)
{
	return src >= 0 ? sc->vals[src & (TK_PLAN_FETCHES - 1)] : tk_plan_run(p, sc, -(src + 1));
}

/* Slot N's programs, one per attach kind, each with N and its way of
 * reading arguments built in: PFX_tN_tp, PFX_kN_fentry / _kprobe,
 * PFX_krN_fexit / _kretprobe, PFX_uN_uprobe, PFX_urN_uretprobe and
 * PFX_UN_usdt, each calling HANDLE(ctx, N, mode). Userspace points the
 * one a probe needs at its target and turns off the rest. */
#define TK_PLAN_SLOT(PFX, N, HANDLE)                                           \
SEC("tp")                                                                      \
int PFX##_t##N##_tp(void *ctx) { return HANDLE(ctx, N, TK_MODE_TP); }          \
SEC("fentry")                                                                  \
int PFX##_k##N##_fentry(u64 *ctx) { return HANDLE(ctx, N, TK_MODE_ARGS); }     \
SEC("kprobe")                                                                  \
int PFX##_k##N##_kprobe(struct pt_regs *ctx) { return HANDLE(ctx, N, TK_MODE_REGS); } \
SEC("fexit")                                                                   \
int PFX##_kr##N##_fexit(u64 *ctx) { return HANDLE(ctx, N, TK_MODE_ARGS); }     \
SEC("kretprobe")                                                               \
int PFX##_kr##N##_kretprobe(struct pt_regs *ctx) { return HANDLE(ctx, N, TK_MODE_REGS); } \
SEC("uprobe")                                                                  \
int PFX##_u##N##_uprobe(struct pt_regs *ctx) { return HANDLE(ctx, N, TK_MODE_REGS); } \
SEC("uretprobe")                                                               \
int PFX##_ur##N##_uretprobe(struct pt_regs *ctx) { return HANDLE(ctx, N, TK_MODE_REGS); } \
SEC("usdt")                                                                    \
int PFX##_U##N##_usdt(struct pt_regs *ctx) { return HANDLE(ctx, N, TK_MODE_USDT); }

#endif
