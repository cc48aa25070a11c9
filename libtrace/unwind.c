/* User stacks unwound by CFI (see unwind.h).
 *
 * libdw's CFI API gives, for a code address, the rule of the frame's
 * CFA and of each register as a DWARF expression (dwarf_frame_cfa,
 * dwarf_frame_register); they are evaluated here over the three
 * registers BPF captured and the snapshot of the stack. Each file's CFI
 * comes from the symbolizer's cache of that file (tk_syms_user_cfi), so
 * it is read once for every process that maps it, and still there after
 * the process exited. libdwfl's own unwinder (dwfl_thread_getframes)
 * would need a Dwfl of each process's whole address space, built anew
 * for every process; the few rules that x86-64 and arm64 code use are
 * simple. */
#include "unwind.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize.h"

const char *tk_unwind_marker(enum tk_unwind_stop stop)
{
	switch (stop) {
	case TK_UNWIND_SNAPSHOT: return "[unwind: snapshot too small]";
	case TK_UNWIND_NO_CFI: return "[unwind: no CFI]";
	case TK_UNWIND_REGISTER: return "[unwind: register not captured]";
	case TK_UNWIND_BAD_CFI: return "[unwind: bad CFI]";
	default: return NULL;
	}
}

static const char *const mode_names[] = { "fp", "auto", "cfi" };

const char *tk_unwind_mode_name(enum tk_unwind_mode mode)
{
	return mode_names[mode];
}

int tk_unwind_mode_parse(const char *name)
{
	for (int i = 0; i < 3; i++)
		if (!strcmp(name, mode_names[i]))
			return i;
	return -1;
}

#if defined(__x86_64__) || defined(__aarch64__)

#if defined(__x86_64__)
/* DWARF register numbers of x86-64: rbp, rsp, and the return address
 * column (the caller's rip, no register of its own). */
#define REG_BP 6
#define REG_SP 7
#define REG_RA 16
#define REG_LR (-1)
#else
/* DWARF register numbers of arm64: x29 (the frame pointer), x30 (the
 * link register, also the return address column) and sp. */
#define REG_BP 29
#define REG_LR 30
#define REG_SP 31
#define REG_RA 30
#endif

/* A return address read from the stack or x30 without the pointer
 * authentication code that arm64's -mbranch-protection puts in its
 * high bits (bits 48 and up: Debian's arm64 kernels give user space 48
 * bits of address, as the kernel's own walk strips them). */
static uint64_t code_address(uint64_t a)
{
#if defined(__aarch64__)
	return a & ((1ULL << 48) - 1);
#else
	return a;
#endif
}

/* One frame's registers: ip always, sp always, bp (the frame pointer)
 * and lr (arm64's link register) when known. */
struct frame {
	uint64_t ip, sp, bp, lr;
	bool bp_known, lr_known;
};

struct mem {
	uint64_t base;
	const uint8_t *snap;
	size_t len;
};

static bool mem_read(const struct mem *m, uint64_t addr, uint64_t *val)
{
	if (addr < m->base || addr - m->base > m->len || m->len - (addr - m->base) < 8)
		return false;
	memcpy(val, m->snap + (addr - m->base), 8);
	return true;
}

/* Evaluate ops (a DWARF expression of CFI) for frame f. *value: the
 * expression ended in DW_OP_stack_value (a value, not a location). */
static enum tk_unwind_stop eval(const Dwarf_Op *ops, size_t n, const struct frame *f,
				uint64_t cfa, const struct mem *m, uint64_t *res,
				bool *value)
{
	uint64_t st[16], a, b;
	int sp = 0;

	*value = false;
#define PUSH(v) do { if (sp == 16) return TK_UNWIND_BAD_CFI; st[sp++] = (v); } while (0)
#define POP(v) do { if (!sp) return TK_UNWIND_BAD_CFI; (v) = st[--sp]; } while (0)
	for (size_t i = 0; i < n; i++) {
		const Dwarf_Op *op = &ops[i];
		unsigned atom = op->atom;
		int reg = -1;
		int64_t off = 0;

		if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31) {
			reg = atom - DW_OP_breg0;
			off = (int64_t)op->number;
		} else if (atom == DW_OP_bregx) {
			reg = (int)op->number;
			off = (int64_t)op->number2;
		}
		if (reg >= 0) {
			if (reg == REG_SP)
				PUSH(f->sp + off);
			else if (reg == REG_BP && f->bp_known)
				PUSH(f->bp + off);
			else if (reg == REG_LR && f->lr_known)
				PUSH(f->lr + off);
			else if (reg == REG_RA && REG_LR < 0)
				PUSH(f->ip + off);
			else
				return TK_UNWIND_REGISTER;
			continue;
		}
		if (atom >= DW_OP_lit0 && atom <= DW_OP_lit31) {
			PUSH(atom - DW_OP_lit0);
			continue;
		}
		switch (atom) {
		case DW_OP_nop:
			break;
		case DW_OP_call_frame_cfa:
			PUSH(cfa);
			break;
		case DW_OP_const1u: case DW_OP_const2u: case DW_OP_const4u:
		case DW_OP_const8u: case DW_OP_constu:
		case DW_OP_const1s: case DW_OP_const2s: case DW_OP_const4s:
		case DW_OP_const8s: case DW_OP_consts:
			PUSH(op->number);
			break;
		case DW_OP_plus_uconst:
			POP(a);
			PUSH(a + op->number);
			break;
		case DW_OP_deref:
			POP(a);
			if (!mem_read(m, a, &b))
				return TK_UNWIND_SNAPSHOT;
			PUSH(b);
			break;
		case DW_OP_stack_value:
			*value = true;
			break;
		case DW_OP_plus: POP(b); POP(a); PUSH(a + b); break;
		case DW_OP_minus: POP(b); POP(a); PUSH(a - b); break;
		case DW_OP_and: POP(b); POP(a); PUSH(a & b); break;
		case DW_OP_or: POP(b); POP(a); PUSH(a | b); break;
		case DW_OP_shl: POP(b); POP(a); PUSH(b < 64 ? a << b : 0); break;
		case DW_OP_shr: POP(b); POP(a); PUSH(b < 64 ? a >> b : 0); break;
		case DW_OP_ge: POP(b); POP(a); PUSH((int64_t)a >= (int64_t)b); break;
		case DW_OP_gt: POP(b); POP(a); PUSH((int64_t)a > (int64_t)b); break;
		case DW_OP_le: POP(b); POP(a); PUSH((int64_t)a <= (int64_t)b); break;
		case DW_OP_lt: POP(b); POP(a); PUSH((int64_t)a < (int64_t)b); break;
		case DW_OP_eq: POP(b); POP(a); PUSH(a == b); break;
		case DW_OP_ne: POP(b); POP(a); PUSH(a != b); break;
		default:
			return TK_UNWIND_BAD_CFI;
		}
	}
	POP(*res);
#undef PUSH
#undef POP
	return TK_UNWIND_DONE;
}

/* What a register's rule says in frame f: where the caller's value was
 * saved (RULE_SAVED, *loc), or the value itself (RULE_VALUE, *loc). */
enum rule { RULE_SAME, RULE_UNDEFINED, RULE_VALUE, RULE_SAVED };

static enum tk_unwind_stop reg_rule(Dwarf_Frame *fr, int regno, const struct frame *f,
				    uint64_t cfa, const struct mem *m, enum rule *rule,
				    uint64_t *loc)
{
	Dwarf_Op mem_ops[3], *ops;
	size_t nops;
	enum tk_unwind_stop r;
	bool value;

	if (dwarf_frame_register(fr, regno, mem_ops, &ops, &nops))
		return TK_UNWIND_BAD_CFI;
	if (!nops) {
		/* ops NULL: "same value"; ops_mem: "undefined". */
		*rule = ops ? RULE_UNDEFINED : RULE_SAME;
		return TK_UNWIND_DONE;
	}
	if ((r = eval(ops, nops, f, cfa, m, loc, &value)))
		return r;
	*rule = value ? RULE_VALUE : RULE_SAVED;
	return TK_UNWIND_DONE;
}

/* A register's value in the caller: the rule of regno, read. same: its
 * value in f, for the rule "same value". *known false: the rule is
 * "undefined", or "same value" of a value not known. */
static enum tk_unwind_stop caller_reg(Dwarf_Frame *fr, int regno, const struct frame *f,
				      uint64_t cfa, const struct mem *m, uint64_t same,
				      bool same_known, uint64_t *val, bool *known)
{
	enum tk_unwind_stop r;
	enum rule rule;
	uint64_t loc = 0;

	if ((r = reg_rule(fr, regno, f, cfa, m, &rule, &loc)))
		return r;
	*known = rule != RULE_UNDEFINED && (rule != RULE_SAME || same_known);
	*val = rule == RULE_SAME ? same : loc;
	if (rule != RULE_SAVED)
		return TK_UNWIND_DONE;
	return mem_read(m, loc, val) ? TK_UNWIND_DONE : TK_UNWIND_SNAPSHOT;
}

/* Does f's function keep a frame pointer at f->ip, so that the
 * frame-pointer walk through its bp is right? Its CFI saves the
 * caller's frame pointer at bp and the return address at bp + 8: a
 * frame record (x86-64's push rbp; mov rbp, rsp; arm64's stp x29, x30,
 * [sp, #-n]!; mov x29, sp), and bp already points at it. (arm64's GCC
 * keeps the CFA on sp, not x29, in such a function: the CFA's rule
 * does not say.) */
static bool keeps_frame_pointer(Dwarf_Frame *fr, int ra_reg, const struct frame *f,
				uint64_t cfa, const struct mem *m)
{
	enum rule rule;
	uint64_t loc = 0;

	if (!f->bp_known || reg_rule(fr, REG_BP, f, cfa, m, &rule, &loc) ||
	    rule != RULE_SAVED || loc != f->bp)
		return false;
	return !reg_rule(fr, ra_reg, f, cfa, m, &rule, &loc) && rule == RULE_SAVED &&
	       loc == f->bp + 8;
}

/* One step: f's caller into *up, from the CFI at f->ip (leaf: the IP
 * itself; callers: the call, the byte before the return address).
 * *fp_frame: f's function keeps a frame pointer there. *end: f is the
 * outermost frame (its return address is undefined). */
static enum tk_unwind_stop step(struct tk_syms *s, pid_t pid, const struct frame *f,
				bool leaf, const struct mem *m, struct frame *up,
				bool *fp_frame, bool *end, const char **module)
{
	unsigned long long addr;
	Dwarf_Frame *fr = NULL;
	Dwarf_Op *ops;
	size_t nops;
	void *cfi;
	uint64_t cfa;
	bool value, known;
	enum tk_unwind_stop r;
	int ra_reg;

	*fp_frame = *end = false;
	if (!tk_syms_user_cfi(s, pid, leaf ? f->ip : f->ip - 1, &cfi, &addr, module))
		return TK_UNWIND_NO_CFI;
	if (dwarf_cfi_addrframe(cfi, addr, &fr))
		return TK_UNWIND_NO_CFI;
	ra_reg = dwarf_frame_info(fr, NULL, NULL, NULL);
	if (ra_reg < 0 || dwarf_frame_cfa(fr, &ops, &nops) || !nops) {
		r = TK_UNWIND_BAD_CFI;
		goto out;
	}
	if ((r = eval(ops, nops, f, 0, m, &cfa, &value)))
		goto out;
	*fp_frame = keeps_frame_pointer(fr, ra_reg, f, cfa, m);
	/* The return address: on arm64 in x30 ("same value") until the
	 * prologue saves it. */
	if ((r = caller_reg(fr, ra_reg, f, cfa, m, f->lr, f->lr_known, &up->ip, &known)))
		goto out;
	up->ip = code_address(up->ip);
	if (!known || !up->ip) {
		*end = true;
		goto out;
	}
	/* The caller's x30 held its own return address no longer: x30 is
	 * the link register of the leaf alone. */
	up->lr = 0;
	up->lr_known = false;
	if ((r = caller_reg(fr, REG_BP, f, cfa, m, f->bp, f->bp_known, &up->bp,
			    &up->bp_known)))
		goto out;
	up->sp = cfa;
	/* A caller's frame is above. arm64's call pushes nothing: a leaf
	 * whose return address is still in x30 may have its caller's sp. */
	if (cfa < f->sp || (cfa == f->sp && !leaf))
		r = TK_UNWIND_BAD_CFI;
out:
	free(fr);
	return r;
}

/* Where in the walk fp[0..nfp) the frames above a frame whose frame
 * pointer is bp, the walk's i-th (chain[i] == bp), begin: the walk read
 * that frame's return address at bp + 8 as fp[i + 1], or as fp[i + 2]
 * when the kernel put the return address at *sp in front of the walk (a
 * uprobe at a function's entry, since Linux 6.10). ip: that frame's
 * own address, which in the second case is fp[i + 1]. With bp + 8 in
 * the snapshot the return address there decides; else the position.
 * 0: no join (nothing of the walk fits). */
static size_t join_at(const struct mem *m, const uint64_t *fp, size_t nfp, size_t i,
		      uint64_t bp, uint64_t ip)
{
	uint64_t ra;
	size_t j = i + 1;

	if (j < nfp && fp[j] == ip)
		j++;
	if (j > nfp)
		return 0;
	if (mem_read(m, bp + 8, &ra) && j < nfp && fp[j] != ra)
		return 0;
	return j;
}

size_t tk_unwind_user(struct tk_syms *s, pid_t pid, enum tk_unwind_mode mode,
		      const struct tk_uregs *r, const uint8_t *snap, size_t len,
		      const uint64_t *fp, size_t nfp, uint64_t *out, size_t max,
		      enum tk_unwind_stop *stop, const char **module)
{
	struct mem m = { r->sp, snap, len };
	struct frame f = { r->ip, r->sp, r->bp, r->lr, true, REG_LR >= 0 }, up;
	uint64_t chain[128];  /* frame pointers the kernel's walk went through */
	size_t nchain = 0, n = 0, i;
	bool fp_frame, end;

	*module = NULL;
	*stop = TK_UNWIND_FALLBACK;
	/* The registers and the walk must be of one moment. */
	if (mode == TK_UNWIND_FP || !nfp || fp[0] != r->ip || !r->sp || !max)
		goto fallback;
	/* chain[i] is the frame pointer at which the walk read fp[i + 1]. */
	for (chain[nchain++] = r->bp; nchain < nfp - 1 && nchain < 128; nchain++)
		if (!mem_read(&m, chain[nchain - 1], &chain[nchain]))
			break;
	out[n++] = r->ip;
	for (;;) {
		*stop = step(s, pid, &f, n == 1, &m, &up, &fp_frame, &end, module);
		if (mode == TK_UNWIND_AUTO && fp_frame && f.bp_known) {
			/* This frame's rbp is its own frame pointer: the walk
			 * through it, where the walk went, is right. */
			for (i = 0; i < nchain; i++)
				if (chain[i] == f.bp)
					break;
			if (i < nchain && (i = join_at(&m, fp, nfp, i, f.bp, out[n - 1]))) {
				for (; i < nfp && n < max; i++)
					out[n++] = fp[i];
				*stop = TK_UNWIND_DONE;
				return n;
			}
		}
		if (*stop != TK_UNWIND_DONE) {
			if (n == 1)
				goto fallback;
			return n;
		}
		if (end || n == max)
			return n;
		out[n++] = up.ip;
		f = up;
	}
fallback:
	/* Nothing better than the walk: it stands as it was. */
	for (n = 0; n < nfp && n < max; n++)
		out[n] = fp[n];
	*stop = TK_UNWIND_FALLBACK;
	return n;
}

#else

size_t tk_unwind_user(struct tk_syms *s, pid_t pid, enum tk_unwind_mode mode,
		      const struct tk_uregs *r, const uint8_t *snap, size_t len,
		      const uint64_t *fp, size_t nfp, uint64_t *out, size_t max,
		      enum tk_unwind_stop *stop, const char **module)
{
	size_t n;

	(void)s; (void)pid; (void)mode; (void)r; (void)snap; (void)len;
	for (n = 0; n < nfp && n < max; n++)
		out[n] = fp[n];
	*stop = TK_UNWIND_FALLBACK;
	*module = NULL;
	return n;
}

#endif
