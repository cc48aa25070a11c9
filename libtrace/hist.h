/* Histograms: printed as bcc's star bars, in JSON with bucket bounds,
 * counts and unit, and percentile estimates. */
#ifndef TK_HIST_H
#define TK_HIST_H

#include <stdbool.h>
#include <stdio.h>

#include "json.h"

/* log2 buckets as filled by tk_log2_slot() in bpf/tk_bits.bpf.h:
 * bucket 0 holds [0, 1], bucket b > 0 holds [2^b, 2^(b+1) - 1]. */
void tk_log2_bounds(int b, unsigned long long *low, unsigned long long *high);
void tk_hist_print_log2(FILE *f, const unsigned long long *vals, int n,
			const char *unit);

/* Linear buckets: bucket i holds [base + i*step, base + (i+1)*step - 1]. */
void tk_hist_print_linear(FILE *f, const unsigned long long *vals, int n,
			  long long base, long long step, const char *unit);

/* Estimated value at quantile q (0..1), interpolated within its bucket;
 * -1 when the histogram is empty. */
double tk_hist_quantile_log2(const unsigned long long *vals, int n, double q);
double tk_hist_quantile_linear(const unsigned long long *vals, int n,
			       long long base, long long step, double q);

/* Members of a JSON object: "unit", "buckets":[{"low","high","count"}],
 * "total", "p50", "p90", "p99". Only non-empty buckets are listed. */
void tk_hist_json_log2(struct tk_json *j, const unsigned long long *vals,
		       int n, const char *unit);
void tk_hist_json_linear(struct tk_json *j, const unsigned long long *vals,
			 int n, long long base, long long step,
			 const char *unit);

/* --print-cgroup: a histogram per cgroup, or per cgroup and the tool's
 * own key (a process, a function). The rest of its section line, after
 * the tool's own label if there is one (after_key): "cgroup = PATH", or
 * ", cgroup = PATH" ("pid = 185 nginx, cgroup = /system.slice/x.service"),
 * PATH as tk_cgroup_path names it, printed safe. */
void tk_hist_print_cgroup_label(FILE *f, bool after_key,
				unsigned long long cgroup_id);

/* The order of such histograms: by their cgroups' paths (then ids). */
int tk_hist_cgroup_cmp(unsigned long long a, unsigned long long b);

#endif
