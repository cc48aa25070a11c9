/* argdist's specifier (bcc argdist's, less its signature and types,
 * which come from BTF):
 *
 *   PROBE[:EXPR[,EXPR...][:FILTER]]
 *
 * PROBE as trace writes it (spec.h: t:CATEGORY:EVENT, k:FUNC, kr:FUNC,
 * u:LIB:FUNC, ur:LIB:FUNC, U:LIB:PROVIDER:PROBE, p::FUNC, ...), its kind
 * saying how many ':' it holds; EXPR and FILTER in the expression
 * language (expr.h). The ':' before FILTER is the first one outside a
 * string literal and parentheses. */
#ifndef TK_PROBE_ARGSPEC_H
#define TK_PROBE_ARGSPEC_H

#include "probe/spec.h"

/* Where a specifier's parts are, as byte offsets in its text. */
struct tk_argspec_split {
	int probe_end;   /* PROBE is [0, probe_end) */
	int exprs;       /* EXPR[,EXPR...] is [exprs, exprs_end); -1: none */
	int exprs_end;
	int nexprs;      /* each EXPR, [start, end) without the blanks
			  * around it; "" (nexprs 0) when there is none */
	int start[TK_PROBE_MAX_ARGS], end[TK_PROBE_MAX_ARGS];
	int filter;      /* FILTER is [filter, end of text); -1: none */
};

/* 0, or -EINVAL with err (an unknown probe kind, an unterminated string
 * or parenthesis). */
int tk_argspec_split(const char *text, struct tk_argspec_split *out, struct tk_perr *err);

/* The specifier into spec: its probe, each EXPR a value (spec->args,
 * conversion 0: any kind, plan.h), FILTER its filter. The caller frees
 * spec with tk_probe_spec_free, also on failure. 0, or -EINVAL with err
 * (pos in text). */
int tk_argspec_parse(const char *text, struct tk_probe_spec *spec, struct tk_perr *err);

#endif
