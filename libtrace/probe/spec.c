/* A probe of the generic tracer, from its text (spec.h). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "probe/lexer.h"
#include "probe/spec.h"

static const char *const kind_names[] = {
	[TK_PROBE_TRACEPOINT] = "t", [TK_PROBE_KPROBE] = "k", [TK_PROBE_KRETPROBE] = "kr",
	[TK_PROBE_UPROBE] = "u", [TK_PROBE_URETPROBE] = "ur", [TK_PROBE_USDT] = "U",
};

const char *tk_probe_kind_name(enum tk_probe_kind kind)
{
	return kind_names[kind];
}

void tk_probe_spec_free(struct tk_probe_spec *spec)
{
	free(spec->target);
	free(spec->provider);
	free(spec->name);
	tk_px_free(spec->filter);
	free(spec->format);
	for (int i = 0; i < spec->nargs; i++)
		tk_px_free(spec->args[i]);
	memset(spec, 0, sizeof(*spec));
}

static int fail(struct tk_perr *err, int pos, const char *msg, const char *arg)
{
	err->pos = pos;
	snprintf(err->msg, sizeof(err->msg), msg, arg);
	return -EINVAL;
}

/* The head's ':'-separated parts: up to 4, each [start, end). */
struct parts {
	int n, start[4], end[4];
};

static int split_head(const char *s, int end, struct parts *p, struct tk_perr *err)
{
	int i, from = 0;

	p->n = 0;
	for (i = 0; i <= end; i++) {
		if (i < end && s[i] != ':')
			continue;
		if (p->n == 4)
			return fail(err, i, "too many ':' in the probe%s", "");
		p->start[p->n] = from;
		p->end[p->n++] = i;
		from = i + 1;
	}
	return 0;
}

static char *part(const char *s, const struct parts *p, int k)
{
	return strndup(s + p->start[k], (size_t)(p->end[k] - p->start[k]));
}

static bool empty(const struct parts *p, int k)
{
	return p->start[k] == p->end[k];
}

static const struct {
	const char *prefix;
	enum tk_probe_kind kind;
	int parts;
	const char *form;
} kinds[] = {
	{ "t", TK_PROBE_TRACEPOINT, 3, "t:CATEGORY:EVENT" },
	{ "k", TK_PROBE_KPROBE, 2, "k:FUNC" },
	{ "kr", TK_PROBE_KRETPROBE, 2, "kr:FUNC" },
	{ "u", TK_PROBE_UPROBE, 3, "u:LIB:FUNC" },
	{ "ur", TK_PROBE_URETPROBE, 3, "ur:LIB:FUNC" },
	{ "U", TK_PROBE_USDT, 4, "U:LIB:PROVIDER:PROBE" },
	{ "p", TK_PROBE_UPROBE, 3, "p:LIB:FUNC or p::FUNC" },
	{ "r", TK_PROBE_URETPROBE, 3, "r:LIB:FUNC or r::FUNC" },
};

int tk_probe_head_parts(const char *text)
{
	size_t n = strcspn(text, ":");

	for (size_t k = 0; k < sizeof(kinds) / sizeof(*kinds); k++)
		if (strlen(kinds[k].prefix) == n && !strncmp(text, kinds[k].prefix, n))
			return text[n] == ':' ? kinds[k].parts : 0;
	return 0;
}

/* The probe itself, s[0, end): its kind and names. */
int tk_probe_parse_head(const char *s, int end, struct tk_probe_spec *spec, struct tk_perr *err)
{
	struct parts p;
	size_t k;
	int e, i;

	if (!end)
		return fail(err, 0, "expected a probe (t:CATEGORY:EVENT, k:FUNC, u:LIB:FUNC, ...)%s", "");
	if ((e = split_head(s, end, &p, err)))
		return e;
	for (k = 0; k < sizeof(kinds) / sizeof(*kinds); k++)
		if ((int)strlen(kinds[k].prefix) == p.end[0] &&
		    !strncmp(s, kinds[k].prefix, (size_t)p.end[0]))
			break;
	if (k == sizeof(kinds) / sizeof(*kinds) || p.n == 1)
		return fail(err, 0, "unknown probe type: t:CATEGORY:EVENT, k:FUNC, kr:FUNC, u:LIB:FUNC, ur:LIB:FUNC or U:LIB:PROVIDER:PROBE%s", "");
	if (p.n != kinds[k].parts)
		return fail(err, 0, "expected %s", kinds[k].form);
	for (i = 1; i < p.n; i++)
		if (empty(&p, i) && !(i == 1 && kinds[k].prefix[0] == 'p') &&
		    !(i == 1 && kinds[k].prefix[0] == 'r' && kinds[k].prefix[1] == 0))
			return fail(err, p.start[i], "empty name in %s", kinds[k].form);
	spec->kind = kinds[k].kind;
	/* bcc's p::FUNC and r::FUNC are kernel functions. */
	if ((kinds[k].prefix[0] == 'p' || !strcmp(kinds[k].prefix, "r")) && empty(&p, 1))
		spec->kind = spec->kind == TK_PROBE_UPROBE ? TK_PROBE_KPROBE : TK_PROBE_KRETPROBE;
	if (p.n >= 3 && !(spec->target = part(s, &p, 1)))
		return -ENOMEM;
	if (spec->kind == TK_PROBE_KPROBE || spec->kind == TK_PROBE_KRETPROBE) {
		free(spec->target);
		spec->target = NULL;
	}
	if (p.n == 4 && !(spec->provider = part(s, &p, 2)))
		return -ENOMEM;
	if (!(spec->name = part(s, &p, p.n - 1)))
		return -ENOMEM;
	return 0;
}

/* FORMAT's conversions into spec->conv; pos: where FORMAT is. */
static int parse_format(struct tk_probe_spec *spec, int pos, struct tk_perr *err)
{
	const char *f = spec->format;

	spec->nargs = 0;
	while ((f = strchr(f, '%'))) {
		const char *start = f++;
		struct tk_fmt_conv *c;

		if (*f == '%') {
			f++;
			continue;
		}
		if (spec->nargs == TK_PROBE_MAX_ARGS)
			return fail(err, pos, "more than %s conversions in the format", "16");
		c = &spec->conv[spec->nargs++];
		c->pos = pos;
		f += strspn(f, "-+ #0");
		while (isdigit((unsigned char)*f))
			f++;
		if (*f == '.')
			for (f++; isdigit((unsigned char)*f); f++)
				;
		if (f[0] == 'h' && f[1] == 'h')
			c->length = 'H', f += 2;
		else if (f[0] == 'l' && f[1] == 'l')
			c->length = 'L', f += 2;
		else if (*f == 'h' || *f == 'l' || *f == 'z')
			c->length = *f++;
		if (!*f || !strchr("diuxXocspKU", *f)) {
			char bad[2] = { *f ? *f : ' ', 0 };

			return *f ? fail(err, pos, "unknown conversion '%%%s' in the format (d i u x X o c s p K U)", bad)
				  : fail(err, pos, "the format ends in a '%%'%s", "");
		}
		c->conv = *f++;
		if (c->length && !strchr("diuxXo", c->conv))
			return fail(err, pos, "a length (h, l, ll, z) goes with an integer conversion only%s", "");
		if (f - start >= (long)sizeof(c->text))
			return fail(err, pos, "a conversion of the format is too long%s", "");
		memcpy(c->text, start, (size_t)(f - start));
		c->text[f - start] = 0;
	}
	return 0;
}

static int parse_rest(struct tk_lexer *lx, struct tk_probe_spec *spec)
{
	int nconv, fpos;

	if (!tk_lex_next(lx))
		return -EINVAL;
	if (tk_lex_is(lx, "(")) {
		if (!tk_lex_next(lx) || !(spec->filter = tk_px_parse_at(lx)) ||
		    !tk_lex_expect(lx, ")"))
			return -EINVAL;
	}
	if (lx->tok.kind == TK_TOK_EOF)
		return 0;
	if (lx->tok.kind != TK_TOK_STR)
		return tk_lex_fail(lx, lx->tok.pos, spec->filter ? "expected \"FORMAT\" after the filter"
					    : "expected (FILTER) or \"FORMAT\" after the probe"), -EINVAL;
	/* A trailing '*' marks a prefix in a comparison; in a format it is
	 * a star (the lexer left room for it). */
	if (lx->tok.prefix)
		strcpy(lx->tok.str + lx->tok.len, "*");
	spec->format = lx->tok.str;
	lx->tok.str = NULL;
	fpos = lx->tok.pos;
	if (parse_format(spec, fpos, lx->err)) {
		lx->failed = true;
		return -EINVAL;
	}
	nconv = spec->nargs;
	spec->nargs = 0;
	if (!tk_lex_next(lx))
		return -EINVAL;
	while (tk_lex_is(lx, ",")) {
		if (spec->nargs == TK_PROBE_MAX_ARGS)
			return tk_lex_fail(lx, lx->tok.pos, "more than %d values", TK_PROBE_MAX_ARGS), -EINVAL;
		if (!tk_lex_next(lx) || !(spec->args[spec->nargs++] = tk_px_parse_at(lx)))
			return -EINVAL;
	}
	if (lx->tok.kind != TK_TOK_EOF)
		return tk_lex_fail(lx, lx->tok.pos, "expected ',' or the end of the probe"), -EINVAL;
	if (spec->nargs != nconv)
		return tk_lex_fail(lx, fpos, "the format has %d conversion%s and %d value%s", nconv,
				   nconv == 1 ? "" : "s", spec->nargs, spec->nargs == 1 ? "" : "s"),
		       -EINVAL;
	return 0;
}

int tk_probe_parse(const char *text, struct tk_probe_spec *spec, struct tk_perr *err)
{
	struct tk_lexer lx;
	int head = 0, end, e;

	memset(spec, 0, sizeof(*spec));
	err->pos = 0;
	err->msg[0] = 0;
	while (isspace((unsigned char)text[head]))
		head++;
	end = head + (int)strcspn(text + head, " \t\n\r\v\f");
	for (int i = head; i < end; i++)
		if (text[i] == '(' || text[i] == '"')
			return fail(err, i, text[i] == '(' ? "a blank goes between the probe and its (FILTER)%s"
						     : "a blank goes between the probe and its \"FORMAT\"%s", "");
	e = tk_probe_parse_head(text + head, end - head, spec, err);
	if (e) {
		err->pos += head;
		if (e == -ENOMEM)
			snprintf(err->msg, sizeof(err->msg), "out of memory");
		return -EINVAL;
	}
	tk_lex_init(&lx, text, end, err);
	e = parse_rest(&lx, spec);
	if (!e && lx.failed)
		e = -EINVAL;
	tk_lex_done(&lx);
	return e;
}

void tk_perr_print(FILE *f, const char *tool, const char *text, const struct tk_perr *err)
{
	fprintf(f, "%s: %s\n  ", tool, err->msg);
	/* One line of text; any control character shown as a blank, so that
	 * the caret stays under its column. */
	for (const char *s = text; *s; s++)
		fputc(iscntrl((unsigned char)*s) ? ' ' : *s, f);
	fprintf(f, "\n  %*s^\n", err->pos, "");
}
