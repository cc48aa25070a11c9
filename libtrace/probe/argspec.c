/* argdist's specifier, split and parsed (argspec.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/argspec.h"
#include "probe/lexer.h"

static int fail(struct tk_perr *err, int pos, const char *msg)
{
	err->pos = pos;
	snprintf(err->msg, sizeof(err->msg), "%s", msg);
	return -EINVAL;
}

/* From i: the first of stop outside strings and parentheses, or the
 * end. */
static int scan(const char *s, int i, const char *stop, struct tk_perr *err)
{
	int depth = 0, open = -1, quote = -1;

	for (; s[i]; i++) {
		if (quote >= 0) {
			if (s[i] == '\\' && s[i + 1])
				i++;
			else if (s[i] == '"')
				quote = -1;
			continue;
		}
		if (s[i] == '"') {
			quote = i;
		} else if (s[i] == '(') {
			if (!depth++)
				open = i;
		} else if (s[i] == ')') {
			if (!depth)
				return fail(err, i, "unbalanced ')'");
			depth--;
		} else if (strchr(stop, s[i]) && !depth) {
			return i;
		}
	}
	if (quote >= 0)
		return fail(err, quote, "unterminated string");
	if (depth)
		return fail(err, open, "unbalanced '(': no ')' closes it");
	return i;
}

int tk_argspec_split(const char *text, struct tk_argspec_split *out, struct tk_perr *err)
{
	int parts = tk_probe_head_parts(text), i = 0, e;

	out->probe_end = 0;
	out->exprs = out->exprs_end = out->filter = -1;
	out->nexprs = 0;
	err->pos = 0;
	err->msg[0] = 0;
	if (!parts)
		return fail(err, 0, "unknown probe type: t:CATEGORY:EVENT, k:FUNC, kr:FUNC, u:LIB:FUNC, ur:LIB:FUNC or U:LIB:PROVIDER:PROBE");
	/* The probe: its kind's parts, each up to the next ':'. */
	for (int k = 0; k < parts && text[i]; k++) {
		i += (int)strcspn(text + i, ":");
		if (k < parts - 1 && text[i])
			i++;
	}
	out->probe_end = i;
	if (!text[i])
		return 0;
	out->exprs = ++i;
	for (;;) {
		int a = i, b;

		if ((e = scan(text, i, ":,", err)) < 0)
			return e;
		for (b = e; b > a && isspace((unsigned char)text[b - 1]); b--)
			;
		while (a < b && isspace((unsigned char)text[a]))
			a++;
		if (text[e] == ',' || a < b || out->nexprs) {
			if (out->nexprs == TK_PROBE_MAX_ARGS)
				return fail(err, a, "more than 16 expressions");
			out->start[out->nexprs] = a;
			out->end[out->nexprs++] = b;
		}
		if (text[e] != ',')
			break;
		i = e + 1;
	}
	out->exprs_end = e;
	if (!text[e])
		return 0;
	out->filter = e + 1;
	if ((e = scan(text, e + 1, ":", err)) < 0)
		return e;
	if (text[e])
		return fail(err, e, "a ':' after the filter: PROBE:EXPR[,EXPR...][:FILTER]");
	return 0;
}

/* The expression that is text[from, to) (blank: what), parsed over a
 * copy of text blank outside it, so that positions are the text's own. */
static struct tk_px *parse_span(const char *text, int from, int to, const char *what,
				const char *after, struct tk_perr *err)
{
	size_t len = strlen(text);
	char *buf = malloc(len + 1);
	struct tk_px *x = NULL;
	struct tk_lexer lx;

	if (!buf) {
		fail(err, from, "out of memory");
		return NULL;
	}
	memset(buf, ' ', len);
	buf[len] = 0;
	memcpy(buf + from, text + from, (size_t)(to - from));
	tk_lex_init(&lx, buf, from, err);
	if (!tk_lex_next(&lx))
		goto out;
	if (lx.tok.kind == TK_TOK_EOF) {
		tk_lex_fail(&lx, to, "expected %s", what);
		goto out;
	}
	x = tk_px_parse_at(&lx);
	if (x && lx.tok.kind != TK_TOK_EOF)
		tk_lex_fail(&lx, lx.tok.pos, "expected %s", after);
out:
	if (lx.failed) {
		tk_px_free(x);
		x = NULL;
	}
	tk_lex_done(&lx);
	free(buf);
	return x;
}

int tk_argspec_parse(const char *text, struct tk_probe_spec *spec, struct tk_perr *err)
{
	struct tk_argspec_split sp;
	int e;

	memset(spec, 0, sizeof(*spec));
	if ((e = tk_argspec_split(text, &sp, err)))
		return e;
	e = tk_probe_parse_head(text, sp.probe_end, spec, err);
	if (e == -ENOMEM)
		return fail(err, 0, "out of memory");
	if (e)
		return e;
	/* "t:a:b:" and "t:a:b::FILTER": no expression (argdist counts hits). */
	for (int i = 0; i < sp.nexprs; i++) {
		if (!(spec->args[i] = parse_span(text, sp.start[i], sp.end[i], "an expression",
						 "',' or ':' after an expression", err)))
			return -EINVAL;
		spec->nargs++;
	}
	if (sp.filter >= 0 && !(spec->filter = parse_span(text, sp.filter, (int)strlen(text),
							  "a filter", "the end of the filter", err)))
		return -EINVAL;
	return 0;
}
