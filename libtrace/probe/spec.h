/* One probe of the generic tracer, as written on trace's command line
 * (bcc trace's syntax, extended):
 *
 *   PROBE [(FILTER)] ["FORMAT"[, EXPR...]]
 *
 *   t:CATEGORY:EVENT             a tracepoint
 *   k:FUNC  kr:FUNC              a kernel function's entry, its return
 *   u:LIB:FUNC  ur:LIB:FUNC      a user function's (LIB: c, a library's
 *                                file name, a path, a program in PATH)
 *   U:LIB:PROVIDER:PROBE         a USDT probe
 *   p::FUNC r::FUNC p:LIB:FUNC r:LIB:FUNC   bcc's spellings of k, kr,
 *                                u and ur
 *
 * FILTER is an expression (expr.h); FORMAT is printf's, one conversion
 * per EXPR: %d %i %u %x %X %o %c %s %p with flags, width, precision and
 * the h hh l ll z lengths, plus bcc's %K and %U (a kernel or user
 * address, printed as symbol+offset). The probe ends at the first blank:
 * "k:vfs_read(arg3 > 0)" is an error that says so. */
#ifndef TK_PROBE_SPEC_H
#define TK_PROBE_SPEC_H

#include <stdio.h>

#include "probe/expr.h"

enum tk_probe_kind {
	TK_PROBE_TRACEPOINT,
	TK_PROBE_KPROBE,
	TK_PROBE_KRETPROBE,
	TK_PROBE_UPROBE,
	TK_PROBE_URETPROBE,
	TK_PROBE_USDT,
};

/* One conversion of FORMAT. */
struct tk_fmt_conv {
	char text[24];  /* as written, "%-8lld" */
	char conv;      /* d i u x X o c s p K U */
	char length;    /* 0, 'h' (h), 'H' (hh), 'l' (l), 'L' (ll), 'z' */
	int pos;        /* in the probe's text */
};

#define TK_PROBE_MAX_ARGS 16

struct tk_probe_spec {
	enum tk_probe_kind kind;
	char *target;     /* tracepoint category; user functions' and USDT's
			   * LIB; NULL for kernel functions */
	char *provider;   /* USDT */
	char *name;       /* event, function, or USDT probe */
	struct tk_px *filter;              /* NULL: none */
	char *format;                      /* unescaped; NULL: none */
	struct tk_fmt_conv conv[TK_PROBE_MAX_ARGS];
	struct tk_px *args[TK_PROBE_MAX_ARGS];
	int nargs;                         /* = the conversions */
};

/* Parses text into *spec (which the caller frees with
 * tk_probe_spec_free, also on failure). 0, or -EINVAL with err set. */
int tk_probe_parse(const char *text, struct tk_probe_spec *spec, struct tk_perr *err);

void tk_probe_spec_free(struct tk_probe_spec *spec);

/* The probe alone, text[0, end), "t:sched:sched_switch", into spec's
 * kind and names: 0, -EINVAL with err (pos in text), or -ENOMEM. */
int tk_probe_parse_head(const char *text, int end, struct tk_probe_spec *spec,
			struct tk_perr *err);

/* How many ':'-separated parts the probe that text begins with has, by
 * its kind (t:CATEGORY:EVENT 3, k:FUNC 2, U:LIB:PROVIDER:PROBE 4, ...);
 * 0 when text does not begin with a kind and a ':'. */
int tk_probe_head_parts(const char *text);

/* The probe kind's prefix as trace writes it ("t", "k", "kr", ...). */
const char *tk_probe_kind_name(enum tk_probe_kind kind);

/* The error as the tools print it: "TOOL: MESSAGE", the text indented
 * by two blanks, and a caret under err->pos. */
void tk_perr_print(FILE *f, const char *tool, const char *text, const struct tk_perr *err);

#endif
