/* libFuzzer harness for the probe language's parser (libtrace/probe/):
 * the input, as text, is parsed as a probe, as argdist's specifier
 * (its split's offsets in order and within the text) and as an
 * expression. For any
 * bytes: no read outside them and no leak (ASan), an error's offset lies
 * within the text and its message is not empty, and whatever parses
 * prints back (tk_px_format) as text that parses to the same print: the
 * printer and the parser agree on every tree. Any violation abort()s.
 *
 *   make fuzz  (fuzz_src_probe in the Makefile)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/argspec.h"
#include "probe/expr.h"
#include "probe/spec.h"

static void round_trip(const struct tk_px *x)
{
	struct tk_perr err;
	struct tk_px *y;
	int n = tk_px_format(x, NULL, 0);
	char *a = malloc((size_t)n + 1), *b;

	if (!a)
		return;
	tk_px_format(x, a, (size_t)n + 1);
	y = tk_px_parse(a, &err);
	if (!y) {
		/* Nesting the printer adds may pass the bound: never else. */
		if (!strstr(err.msg, "nested too deeply"))
			abort();
		free(a);
		return;
	}
	b = malloc((size_t)n + 1);
	if (b && (tk_px_format(y, b, (size_t)n + 1) != n || strcmp(a, b)))
		abort();
	free(a);
	free(b);
	tk_px_free(y);
}

static void check_error(const char *text, const struct tk_perr *err)
{
	FILE *f;

	if (err->pos < 0 || (size_t)err->pos > strlen(text) || !err->msg[0])
		abort();
	f = fopen("/dev/null", "w");
	if (f) {
		tk_perr_print(f, "fuzz", text, err);
		fclose(f);
	}
}

/* A parse's result: its expressions print and parse back alike, or its
 * error has a place and a message. The spec is freed either way. */
static void check_spec(int rc, const char *text, struct tk_probe_spec *spec,
		       const struct tk_perr *err)
{
	if (!rc) {
		if (spec->filter)
			round_trip(spec->filter);
		for (int i = 0; i < spec->nargs; i++)
			round_trip(spec->args[i]);
	} else {
		check_error(text, err);
	}
	tk_probe_spec_free(spec);
}

static void argspec(const char *text)
{
	struct tk_argspec_split sp;
	struct tk_probe_spec spec;
	struct tk_perr err;
	int len = (int)strlen(text);

	if (!tk_argspec_split(text, &sp, &err)) {
		if (sp.probe_end < 0 || sp.probe_end > len ||
		    (sp.exprs >= 0 && (sp.exprs != sp.probe_end + 1 || sp.exprs_end < sp.exprs ||
				       sp.exprs_end > len || text[sp.probe_end] != ':')) ||
		    (sp.exprs < 0 && (sp.probe_end != len || sp.filter >= 0)) ||
		    (sp.filter >= 0 && (sp.filter != sp.exprs_end + 1 || sp.filter > len ||
					text[sp.exprs_end] != ':')))
			abort();
	} else {
		check_error(text, &err);
	}
	check_spec(tk_argspec_parse(text, &spec, &err), text, &spec, &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct tk_probe_spec spec;
	struct tk_perr err;
	struct tk_px *x;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	check_spec(tk_probe_parse(text, &spec, &err), text, &spec, &err);
	argspec(text);
	if ((x = tk_px_parse(text, &err))) {
		round_trip(x);
		tk_px_free(x);
	} else {
		check_error(text, &err);
	}
	free(text);
	return 0;
}
