/* The plan of one probe of the generic tracer (trace, argdist): what its
 * BPF program reads and computes, written by userspace
 * (libtrace/probe/plan.c) from the probe's text and the kernel's BTF, so
 * that no code is generated at run time. Seen by BPF and libtrace; plain
 * C types only.
 *
 * A fetch reads one value: it starts from a base (a tracepoint record,
 * a function argument, the return value, a builtin), then each step
 * loads step.size bytes from (value + step.off), or with size 0 only
 * adds off; the final kind says what the value is (an integer, or the
 * address of a string to copy). Expressions over fetches (filters, and
 * values with operators) are bytecode for a small stack machine that
 * BPF runs in a bounded loop. */
#ifndef TK_PLAN_H
#define TK_PLAN_H

#define TK_PLAN_STEPS 8     /* loads in one fetch */
#define TK_PLAN_FETCHES 16  /* fetches of one probe */
#define TK_PLAN_INSNS 64    /* bytecode of one probe */
#define TK_PLAN_STACK 8     /* the machine's stack */
#define TK_PLAN_STRS 4      /* string constants of one probe */
#define TK_PLAN_STR_LEN 64  /* bytes of a string constant or value,
			     * its NUL included */

enum tk_fetch_base {
	TK_FB_CTX,     /* the tracepoint's record (its address) */
	TK_FB_ARG,     /* argument number arg (1..6) */
	TK_FB_RETVAL,
	TK_FB_PID,     /* the process (tgid), as the tool's namespace sees it */
	TK_FB_TID,
	TK_FB_UID,
	TK_FB_CPU,
	TK_FB_TS,      /* ktime ns */
	TK_FB_COMM,    /* the task's comm: a string (no steps; final unused) */
};

enum tk_fetch_final {
	TK_FF_INT,       /* the value */
	TK_FF_STR,       /* a NUL-terminated string at the value */
	TK_FF_DATA_LOC,  /* a tracepoint's __data_loc string: the value is
			  * (length << 16 | offset in the record) */
};

struct tk_fetch_step {
	int off;
	unsigned char size;       /* 0, 1, 2, 4, 8 */
	unsigned char is_signed;  /* sign-extend what is loaded */
	unsigned char pad[2];
};

struct tk_fetch {
	unsigned char base;       /* enum tk_fetch_base */
	unsigned char arg;
	unsigned char nsteps;
	unsigned char final;      /* enum tk_fetch_final */
	unsigned char user;       /* loads read the process's memory */
	unsigned char pad[3];
	struct tk_fetch_step step[TK_PLAN_STEPS];
};

/* Bytecode: each instruction pops its operands and pushes its result;
 * a program leaves one value. */
enum tk_insn_op {
	TK_I_END,
	TK_I_FETCH,    /* push fetch a's value (an integer fetch) */
	TK_I_CONST,    /* push imm */
	TK_I_STREQ,    /* push whether string fetch a equals string b
			* (flags & TK_IF_PREFIX: begins with it) */
	TK_I_NEG, TK_I_NOT, TK_I_BNOT,
	TK_I_ADD, TK_I_SUB, TK_I_MUL, TK_I_DIV, TK_I_MOD,
	TK_I_SHL, TK_I_SHR, TK_I_BAND, TK_I_BOR, TK_I_BXOR,
	TK_I_EQ, TK_I_NE, TK_I_LT, TK_I_LE, TK_I_GT, TK_I_GE,
	TK_I_LAND, TK_I_LOR,  /* no short circuit: fetches have no effects */
	TK_I_CAST,     /* keep the low a bytes (1, 2, 4), sign-extended
			* with TK_IF_SIGNED */
};

#define TK_IF_SIGNED 1   /* DIV MOD SHR LT LE GT GE CAST: signed */
#define TK_IF_PREFIX 2   /* STREQ */

struct tk_insn {
	unsigned char op;
	unsigned char a, b, flags;
	unsigned int pad;
	long long imm;
};

/* How a slot's program reads its arguments. */
enum tk_plan_mode {
	TK_MODE_TP,     /* a tracepoint: ctx is the record */
	TK_MODE_REGS,   /* kprobe, uprobe: ctx is pt_regs */
	TK_MODE_ARGS,   /* fentry, fexit: ctx is the arguments (u64[]) */
	TK_MODE_USDT,   /* a USDT probe: arguments by libbpf's spec */
};

/* What BPF runs of one probe's plan (bpf/tk_plan.bpf.h). */
struct tk_plan_code {
	struct tk_fetch fetch[TK_PLAN_FETCHES];
	struct tk_insn insn[TK_PLAN_INSNS];
	char str[TK_PLAN_STRS][TK_PLAN_STR_LEN];
	int filter;                       /* start in insn; -1: none */
	int nfetch;
	int nfilter_fetch;                /* fetch[0..nfilter_fetch): what the
					   * filter reads (struct tk_plan) */
	int nargs;                        /* fexit: the return value's index */
	/* A filter that is one comparison of a fetch with a constant
	 * (pid == 42, ret < 0): BPF makes it without the bytecode loop
	 * (tk_plan_to_code finds it; bench-trace: the loop cost a dropped
	 * event more than bpftrace's compiled filter). */
	struct tk_quick_filter {
		unsigned char op;         /* TK_I_EQ..TK_I_GE; 0: none */
		unsigned char fetch;
		unsigned char cast;       /* a CAST's size first, or 0 */
		unsigned char flags;      /* the CAST's TK_IF_SIGNED << 4, the
					   * comparison's TK_IF_SIGNED */
		unsigned int pad;
		long long imm;
	} quick;
};

#endif
