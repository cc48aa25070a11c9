/* The Prometheus text exposition format (version 0.0.4), written to a
 * stdio stream: HELP and TYPE lines, samples with escaped labels, log2
 * histograms as cumulative _bucket series with _sum and _count.
 *
 *   tk_prom_family(f, "tracekit_syscalls_total", "counter", "System calls.");
 *   tk_prom_sample(f, "tracekit_syscalls_total", 42, "syscall", "read", NULL);
 *
 * Label values may hold any bytes: backslash, quote and newline are
 * escaped as the format asks, and bytes that are not well-formed UTF-8
 * become U+FFFD, so that a process's comm can never break a scrape. */
#ifndef TK_PROM_H
#define TK_PROM_H

#include <stdio.h>

/* The Content-Type of a scrape response. */
#define TK_PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* "# HELP name help" and "# TYPE name type" (counter, gauge, histogram). */
void tk_prom_family(FILE *f, const char *name, const char *type,
		    const char *help);

/* One sample: name{k1="v1",...} value. The labels are name/value string
 * pairs ending with NULL. Integral values print without a fraction. */
void tk_prom_sample(FILE *f, const char *name, double value, ...)
	__attribute__((sentinel));

/* The same with the labels in an array of 2*n strings. */
void tk_prom_sample_v(FILE *f, const char *name, double value,
		      const char *const *labels, int n);

/* A histogram of n log2 buckets as filled by tk_log2_slot (bucket b holds
 * whole units v with 2^b <= v < 2^(b+1); bucket 0 holds 0 and 1; the
 * last bucket also holds everything above), in units of unit_seconds:
 * name_bucket{le=...} for the upper bound 2^(b+1) units of each bucket
 * but the last, then le="+Inf", name_sum (sum_seconds) and name_count.
 * The labels as in tk_prom_sample_v. */
void tk_prom_log2_histogram(FILE *f, const char *name,
			    const unsigned long long *buckets, int n,
			    double unit_seconds, double sum_seconds,
			    const char *const *labels, int nlabels);

/* Write a label value, escaped, without quotes. */
void tk_prom_escape(FILE *f, const char *s);

#endif
