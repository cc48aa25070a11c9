#include "hist.h"

#include <limits.h>
#include <string.h>

#include "cgroups.h"
#include "output.h"

#define STARS 40

static void print_stars(FILE *f, unsigned long long val,
			unsigned long long max, int width)
{
	int stars = max ? (int)((val < max ? val : max) * width / max) : 0;
	int i;

	for (i = 0; i < width; i++)
		fputc(i < stars ? '*' : ' ', f);
}

void tk_log2_bounds(int b, unsigned long long *low, unsigned long long *high)
{
	*low = b ? 1ULL << b : 0;
	*high = b >= 63 ? ~0ULL : (1ULL << (b + 1)) - 1;
}

static unsigned long long max_of(const unsigned long long *v, int n,
				 int *first, int *last)
{
	unsigned long long max = 0;
	int i;

	*first = *last = -1;
	for (i = 0; i < n; i++) {
		if (v[i]) {
			if (*first < 0)
				*first = i;
			*last = i;
		}
		if (v[i] > max)
			max = v[i];
	}
	return max;
}

void tk_hist_print_log2(FILE *f, const unsigned long long *vals, int n,
			const char *unit)
{
	int first, last, i;
	unsigned long long max = max_of(vals, n, &first, &last);
	bool wide;
	int width, stars;

	if (last < 0)
		return;
	/* bcc widens the columns once values pass 2^32. */
	wide = last > 32;
	width = wide ? 20 : 10;
	stars = wide ? STARS / 2 : STARS;
	fprintf(f, "%*s%-*s : count    distribution\n", wide ? 15 : 5, "",
		wide ? 29 : 19, unit);
	for (i = 0; i <= last; i++) {
		unsigned long long low, high;

		tk_log2_bounds(i, &low, &high);
		fprintf(f, "%*llu -> %-*llu : %-8llu |", width, low, width, high,
			vals[i]);
		print_stars(f, vals[i], max, stars);
		fputs("|\n", f);
	}
}

void tk_hist_print_linear(FILE *f, const unsigned long long *vals, int n,
			  long long base, long long step, const char *unit)
{
	int first, last, i;
	unsigned long long max = max_of(vals, n, &first, &last);

	if (last < 0)
		return;
	fprintf(f, "     %-13s : count     distribution\n", unit);
	for (i = first; i <= last; i++) {
		if (!vals[i])
			continue;
		fprintf(f, "        %-10lld : %-8llu |", base + i * step, vals[i]);
		print_stars(f, vals[i], max, STARS);
		fputs("|\n", f);
	}
}

static unsigned long long total_of(const unsigned long long *v, int n)
{
	unsigned long long t = 0;
	int i;

	for (i = 0; i < n; i++)
		t += v[i];
	return t;
}

/* Quantile over buckets whose bounds come from bounds(i). */
static double quantile(const unsigned long long *vals, int n, double q,
		       void (*bounds)(int, long long, long long, double *, double *),
		       long long base, long long step)
{
	unsigned long long total = total_of(vals, n), seen = 0;
	double rank;
	int i;

	if (!total)
		return -1;
	if (q < 0)
		q = 0;
	if (q > 1)
		q = 1;
	rank = q * total;
	for (i = 0; i < n; i++) {
		double low, high;

		if (!vals[i])
			continue;
		bounds(i, base, step, &low, &high);
		if (seen + vals[i] >= rank) {
			/* Spread the bucket's count evenly over its range. */
			double frac = (rank - seen) / vals[i];

			return low + frac * (high - low);
		}
		seen += vals[i];
	}
	return -1;
}

static void log2_bounds_d(int i, long long base, long long step, double *low,
			  double *high)
{
	unsigned long long l, h;

	(void)base;
	(void)step;
	tk_log2_bounds(i, &l, &h);
	*low = l;
	*high = (double)h + 1;
}

static void linear_bounds_d(int i, long long base, long long step,
			    double *low, double *high)
{
	*low = base + (double)i * step;
	*high = *low + step;
}

double tk_hist_quantile_log2(const unsigned long long *vals, int n, double q)
{
	return quantile(vals, n, q, log2_bounds_d, 0, 0);
}

double tk_hist_quantile_linear(const unsigned long long *vals, int n,
			       long long base, long long step, double q)
{
	return quantile(vals, n, q, linear_bounds_d, base, step);
}

static void json_tail(struct tk_json *j, const unsigned long long *vals,
		      int n, double (*qf)(const unsigned long long *, int,
					  long long, long long, double),
		      long long base, long long step)
{
	static const struct { const char *key; double q; } qs[] = {
		{ "p50", 0.50 }, { "p90", 0.90 }, { "p99", 0.99 },
	};
	unsigned long long total = total_of(vals, n);
	unsigned i;

	tk_json_uint(j, "total", total);
	for (i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		if (total)
			tk_json_double(j, qs[i].key, qf(vals, n, base, step, qs[i].q));
		else
			tk_json_null(j, qs[i].key);
	}
}

static double qf_log2(const unsigned long long *v, int n, long long b,
		      long long s, double q)
{
	(void)b;
	(void)s;
	return tk_hist_quantile_log2(v, n, q);
}

void tk_hist_json_log2(struct tk_json *j, const unsigned long long *vals,
		       int n, const char *unit)
{
	int i;

	tk_json_str(j, "unit", unit);
	tk_json_str(j, "scale", "log2");
	tk_json_arr_open(j, "buckets");
	for (i = 0; i < n; i++) {
		unsigned long long low, high;

		if (!vals[i])
			continue;
		tk_log2_bounds(i, &low, &high);
		tk_json_obj_open(j, NULL);
		tk_json_uint(j, "low", low);
		tk_json_uint(j, "high", high);
		tk_json_uint(j, "count", vals[i]);
		tk_json_obj_close(j);
	}
	tk_json_arr_close(j);
	json_tail(j, vals, n, qf_log2, 0, 0);
}

void tk_hist_json_linear(struct tk_json *j, const unsigned long long *vals,
			 int n, long long base, long long step,
			 const char *unit)
{
	int i;

	tk_json_str(j, "unit", unit);
	tk_json_str(j, "scale", "linear");
	tk_json_arr_open(j, "buckets");
	for (i = 0; i < n; i++) {
		if (!vals[i])
			continue;
		tk_json_obj_open(j, NULL);
		tk_json_int(j, "low", base + i * step);
		tk_json_int(j, "high", base + (i + 1) * step - 1);
		tk_json_uint(j, "count", vals[i]);
		tk_json_obj_close(j);
	}
	tk_json_arr_close(j);
	json_tail(j, vals, n, tk_hist_quantile_linear, base, step);
}

void tk_hist_print_cgroup_label(FILE *f, bool after_key,
				unsigned long long cgroup_id)
{
	fputs(after_key ? ", cgroup = " : "cgroup = ", f);
	tk_print_cgroup(f, cgroup_id, 0);
}

int tk_hist_cgroup_cmp(unsigned long long a, unsigned long long b)
{
	char path_a[PATH_MAX];
	int order;

	if (a == b)
		return 0;
	/* Copied: looking up b may walk the hierarchy again, which frees
	 * the cached paths (and an unknown id's name is a static buffer). */
	snprintf(path_a, sizeof(path_a), "%s", tk_cgroup_path(a));
	order = strcmp(path_a, tk_cgroup_path(b));
	/* A path can name two cgroups in turn (removed, made again). */
	return order ? order : a < b ? -1 : 1;
}
