/* argdist's specifier, split and parsed (argspec.h). */
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

/* From i: the first ':' outside strings and parentheses, or the end. */
static int scan(const char *s, int i, struct tk_perr *err)
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
		} else if (s[i] == ':' && !depth) {
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
	if ((e = scan(text, i, err)) < 0)
		return e;
	out->exprs_end = e;
	if (!text[e])
		return 0;
	out->filter = e + 1;
	if ((e = scan(text, e + 1, err)) < 0)
		return e;
	if (text[e])
		return fail(err, e, "a ':' after the filter: PROBE:EXPR[,EXPR...][:FILTER]");
	return 0;
}

/* Expressions in text[from, to), separated by ',' when several: parsed
 * over a copy of text blank outside them, so that positions are the
 * text's own. */
static int parse_part(const char *text, int from, int to, bool several, struct tk_probe_spec *spec,
		      struct tk_perr *err)
{
	size_t len = strlen(text);
	char *buf = malloc(len + 1);
	struct tk_lexer lx;
	int e = 0;

	if (!buf)
		return fail(err, from, "out of memory");
	memset(buf, ' ', len);
	buf[len] = 0;
	memcpy(buf + from, text + from, (size_t)(to - from));
	tk_lex_init(&lx, buf, from, err);
	if (!tk_lex_next(&lx))
		goto out;
	for (;;) {
		struct tk_px *x;

		if (lx.tok.kind == TK_TOK_EOF) {
			tk_lex_fail(&lx, lx.tok.pos, several ? "expected an expression" : "expected a filter");
			break;
		}
		if (several && spec->nargs == TK_PROBE_MAX_ARGS) {
			tk_lex_fail(&lx, lx.tok.pos, "more than %d expressions", TK_PROBE_MAX_ARGS);
			break;
		}
		if (!(x = tk_px_parse_at(&lx)))
			break;
		if (several)
			spec->args[spec->nargs++] = x;
		else
			spec->filter = x;
		if (lx.tok.kind == TK_TOK_EOF)
			break;
		if (!several || !tk_lex_is(&lx, ",")) {
			tk_lex_fail(&lx, lx.tok.pos, several ? "expected ',' or ':' after an expression"
							       : "expected the end of the filter");
			break;
		}
		if (!tk_lex_next(&lx))
			break;
	}
out:
	if (lx.failed)
		e = -EINVAL;
	tk_lex_done(&lx);
	free(buf);
	return e;
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
	if (sp.exprs >= 0 && sp.exprs_end > sp.exprs &&
	    strspn(text + sp.exprs, " \t") < (size_t)(sp.exprs_end - sp.exprs) &&
	    (e = parse_part(text, sp.exprs, sp.exprs_end, true, spec, err)))
		return e;
	if (sp.filter >= 0 && (e = parse_part(text, sp.filter, (int)strlen(text), false, spec, err)))
		return e;
	return 0;
}
