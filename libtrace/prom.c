#include "prom.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "json.h"

void tk_prom_escape(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t left = strlen(s), n;

	while (left) {
		if (*p == '\\' || *p == '"') {
			fputc('\\', f);
			fputc(*p, f);
		} else if (*p == '\n') {
			fputs("\\n", f);
		} else if ((n = tk_utf8_seq_len(p, left)) > 0) {
			fwrite(p, 1, n, f);
			p += n;
			left -= n;
			continue;
		} else {
			fputs("\xef\xbf\xbd", f);  /* U+FFFD */
		}
		p++;
		left--;
	}
}

/* Help text: only backslash and newline are escaped there. */
static void escape_help(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

void tk_prom_family(FILE *f, const char *name, const char *type,
		    const char *help)
{
	fprintf(f, "# HELP %s ", name);
	escape_help(f, help);
	fprintf(f, "\n# TYPE %s %s\n", name, type);
}

static void write_value(FILE *f, double v)
{
	if (isinf(v))
		fputs(v > 0 ? "+Inf" : "-Inf", f);
	else if (isnan(v))
		fputs("NaN", f);
	else if (v == floor(v) && fabs(v) < 1e15)
		fprintf(f, "%.0f", v);
	else
		fprintf(f, "%.15g", v);  /* no 0.07545899999999999 */
}

static void write_labels(FILE *f, const char *const *labels, int n,
			 const char *le)
{
	int i;

	if (!n && !le)
		return;
	fputc('{', f);
	for (i = 0; i < n; i++) {
		fprintf(f, "%s%s=\"", i ? "," : "", labels[2 * i]);
		tk_prom_escape(f, labels[2 * i + 1]);
		fputc('"', f);
	}
	if (le)
		fprintf(f, "%sle=\"%s\"", n ? "," : "", le);
	fputc('}', f);
}

void tk_prom_sample_v(FILE *f, const char *name, double value,
		      const char *const *labels, int n)
{
	fputs(name, f);
	write_labels(f, labels, n, NULL);
	fputc(' ', f);
	write_value(f, value);
	fputc('\n', f);
}

#define MAX_LABELS 8

void tk_prom_sample(FILE *f, const char *name, double value, ...)
{
	const char *labels[2 * MAX_LABELS];
	const char *k;
	va_list ap;
	int n = 0;

	va_start(ap, value);
	while (n < MAX_LABELS && (k = va_arg(ap, const char *))) {
		labels[2 * n] = k;
		labels[2 * n + 1] = va_arg(ap, const char *);
		n++;
	}
	va_end(ap);
	tk_prom_sample_v(f, name, value, labels, n);
}

void tk_prom_log2_histogram(FILE *f, const char *name,
			    const unsigned long long *buckets, int n,
			    double unit_seconds, double sum_seconds,
			    const char *const *labels, int nlabels)
{
	unsigned long long cum = 0;
	char series[256], le[32];
	int b;

	snprintf(series, sizeof(series), "%s_bucket", name);
	for (b = 0; b < n - 1; b++) {
		cum += buckets[b];
		/* 2^(b+1) units: 10 digits hold it exactly (2147.483648 s). */
		snprintf(le, sizeof(le), "%.10g", ldexp(unit_seconds, b + 1));
		fputs(series, f);
		write_labels(f, labels, nlabels, le);
		fprintf(f, " %llu\n", cum);
	}
	if (n > 0)
		cum += buckets[n - 1];
	fputs(series, f);
	write_labels(f, labels, nlabels, "+Inf");
	fprintf(f, " %llu\n", cum);
	snprintf(series, sizeof(series), "%s_sum", name);
	tk_prom_sample_v(f, series, sum_seconds, labels, nlabels);
	snprintf(series, sizeof(series), "%s_count", name);
	tk_prom_sample_v(f, series, (double)cum, labels, nlabels);
}
