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
 * for every process; the few rules that x86-64 code uses are simple. */
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

#if defined(__x86_64__)

/* DWARF register numbers of x86-64. */
#define REG_BP 6
#define REG_SP 7
#define REG_RA 16

/* One frame's registers: ip always, sp always, bp when known. */
struct frame {
	uint64_t ip, sp, bp;
	bool bp_known;
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
			else if (reg == REG_RA)
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

/* A register's value in the caller: the rule ops of regno, read.
 * *known false: the rule is "undefined". */
static enum tk_unwind_stop caller_reg(Dwarf_Frame *fr, int regno, const struct frame *f,
				      uint64_t cfa, const struct mem *m, uint64_t same,
				      bool same_known, uint64_t *val, bool *known)
{
	Dwarf_Op mem_ops[3], *ops;
	size_t nops;
	enum tk_unwind_stop r;
	uint64_t loc;
	bool value;

	if (dwarf_frame_register(fr, regno, mem_ops, &ops, &nops))
		return TK_UNWIND_BAD_CFI;
	if (!nops) {
		/* ops NULL: "same value"; ops_mem: "undefined". */
		*known = !ops && same_known;
		*val = same;
		return TK_UNWIND_DONE;
	}
	if ((r = eval(ops, nops, f, cfa, m, &loc, &value)))
		return r;
	*known = true;
	if (value) {
		*val = loc;
		return TK_UNWIND_DONE;
	}
	return mem_read(m, loc, val) ? TK_UNWIND_DONE : TK_UNWIND_SNAPSHOT;
}

/* Is ops "rbp + 16": a function that keeps a frame pointer, past its
 * prologue, so that the frame-pointer walk through its rbp is right? */
static bool fp_cfa(const Dwarf_Op *ops, size_t n)
{
	if (n != 1)
		return false;
	if (ops[0].atom == DW_OP_bregx)
		return ops[0].number == REG_BP && ops[0].number2 == 16;
	return ops[0].atom == DW_OP_breg0 + REG_BP && ops[0].number == 16;
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
	*fp_frame = fp_cfa(ops, nops);
	if ((r = eval(ops, nops, f, 0, m, &cfa, &value)))
		goto out;
	if ((r = caller_reg(fr, ra_reg, f, cfa, m, 0, false, &up->ip, &known)))
		goto out;
	if (!known || !up->ip) {
		*end = true;
		goto out;
	}
	if ((r = caller_reg(fr, REG_BP, f, cfa, m, f->bp, f->bp_known, &up->bp,
			    &up->bp_known)))
		goto out;
	up->sp = cfa;
	if (cfa <= f->sp)
		r = TK_UNWIND_BAD_CFI;  /* a caller's frame is above */
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
	struct frame f = { r->ip, r->sp, r->bp, true }, up;
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
