/* A probe of the generic tracer (trace, argdist) resolved on this
 * machine: its tracepoint's fields, its kernel function's BTF, its user
 * function's or USDT probe's file; its plan built; and its program
 * family (PREFIX_<kind>SLOT, bpf/tk_plan.bpf.h's TK_PLAN_SLOT) pointed at
 * its target. Bad input is a usage error (exit 2): a parse or plan error
 * with the probe's text and a caret, or one line. */
#ifndef TK_PROBE_SITE_H
#define TK_PROBE_SITE_H

#include <limits.h>
#include <stdbool.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "functarget.h"
#include "probe/plan.h"
#include "tpformat.h"

struct tk_probe_site {
	const char *text;             /* as given: messages print it */
	struct tk_probe_spec spec;    /* parsed by the tool */
	struct tk_plan plan;
	struct tk_func_target ut;     /* a user function's file and name */
	struct tk_tp_field *tpf;
	struct tk_plan_field *fields;
	int nfields;
	int nargs;                    /* a kernel function's, from BTF */
	int func_id;
	int usdt_nargs;
	char binary[PATH_MAX];        /* a USDT probe's file */
	char family[24];
};

/* Resolves site (its spec parsed) as slot of the tool's programs named
 * prefix ("trace": trace_t0, trace_kr1, ...), then plans it against the
 * kernel's BTF (tk_kernel_btf, parsed only if the probe needs it). tool
 * prefixes error messages. */
void tk_probe_site_resolve(struct tk_probe_site *site, const char *tool, const char *prefix,
			   int slot);

/* Prints a parse or plan error of site as the tools do, and exits 2. */
void tk_probe_site_error(const struct tk_probe_site *site, const char *tool,
			 const struct tk_perr *err) __attribute__((noreturn));

/* From a configure callback: turns off every program of prefix's nslots
 * slots but the n sites' own families. */
void tk_probe_sites_only(struct bpf_object *obj, const char *prefix, int nslots,
			 const struct tk_probe_site *const *sites, int n);

/* Is the site's probe in a process (its addresses are user ones)? */
bool tk_probe_site_user(const struct tk_probe_site *site);

#endif
