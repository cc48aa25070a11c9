/* From a parsed probe (spec.h) to its plan (bpf/tk_plan.h): names are
 * resolved against what the probe sees (a tracepoint's fields, a kernel
 * function's arguments from BTF, builtins, kernel symbols), members and
 * casts against BTF's types, and every expression is typed, so that an
 * error names the place and the closest names that exist, before
 * anything is loaded. */
#ifndef TK_PROBE_PLAN_H
#define TK_PROBE_PLAN_H

#include <bpf/btf.h>
#include <stdbool.h>

#include "probe/spec.h"
#include "tk_plan.h"

/* A tracepoint field, as its format file declares it:
 * "field:struct hrtimer * hrtimer; offset:8; size:8; signed:0;" is
 * { "hrtimer", "struct hrtimer *", 8, 8, 0, false, false }. */
struct tk_plan_field {
	const char *name;
	const char *type;   /* without the name and the [N] */
	int offset, size;
	int array;          /* elements of "char comm[16]"; 0: not an array */
	bool is_signed;
	bool data_loc;      /* __data_loc char[] */
};

/* What the probe sees. */
struct tk_plan_ctx {
	enum tk_probe_kind kind;
	const char *what;                      /* "timer:hrtimer_expire_entry",
						* "vfs_read": for messages */
	const struct btf *btf;                 /* kernel BTF; NULL: load_btf's */
	const struct btf *(*load_btf)(void);   /* the BTF, on first need (a
						* probe of plain fields needs
						* none); NULL: no BTF */
	const struct tk_plan_field *fields;    /* a tracepoint's */
	int nfields;
	int func_id;                           /* BTF FUNC of k:/kr:, or 0 */
	int usdt_nargs;                        /* U:, its note's arguments */
	/* A kernel symbol's address, 0 when there is none. */
	unsigned long long (*ksym)(const char *name, void *arg);
	void *ksym_arg;
};

enum tk_plan_kind {
	TK_PV_INT,   /* an integer: size, is_signed */
	TK_PV_PTR,   /* an address (printed by %s as a symbol) */
	TK_PV_STR,   /* a string */
};

/* One value of the format. */
struct tk_plan_value {
	enum tk_plan_kind kind;
	int size;
	bool is_signed;
	int fetch;   /* the fetch that gives it, or -1 */
	int prog;    /* else the program that computes it: start in insn */
};

struct tk_plan {
	struct tk_fetch fetch[TK_PLAN_FETCHES];
	int nfetch;
	struct tk_insn insn[TK_PLAN_INSNS];
	int ninsn;
	char str[TK_PLAN_STRS][TK_PLAN_STR_LEN];
	int nstr;
	int filter;  /* start of the filter's program; -1: none */
	int nfilter_fetch;  /* fetch[0..nfilter_fetch) are the filter's: the
			     * filter is compiled first, so BPF reads only
			     * those before it runs, the rest for what passes */
	struct tk_plan_value value[TK_PROBE_MAX_ARGS];
	int nvalues;
};

/* 0, or -EINVAL with err (its pos in the probe's text). A value whose
 * conversion is 0 (argdist's keys) takes any kind: a char * is a
 * string, another pointer an address, the rest an integer. */
int tk_plan_build(const struct tk_plan_ctx *ctx, const struct tk_probe_spec *spec,
		  struct tk_plan *plan, struct tk_perr *err);

/* What BPF runs of plan (nargs: a kernel function's, for fexit). */
void tk_plan_to_code(const struct tk_plan *plan, int nargs, struct tk_plan_code *code);

/* Where BPF finds value v (tk_plan_value() in bpf/tk_plan.bpf.h). */
int tk_plan_value_src(const struct tk_plan_value *v);

/* A string value (TK_PLAN_STR_LEN bytes) as text, what cannot be shown
 * escaped (\xNN), "..." when it filled its bytes (it may have gone on,
 * *truncated). */
void tk_plan_str_text(const unsigned char *d, char *out, size_t size, bool *truncated);

#endif
