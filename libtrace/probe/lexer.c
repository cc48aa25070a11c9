/* Tokens of the probe language (lexer.h). */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/lexer.h"

/* Longest first: "<<" before "<", "->" before "-". */
static const char *const puncts[] = {
	"->", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
	"(", ")", ",", ".", "+", "-", "*", "/", "%", "&", "|", "^",
	"~", "!", "<", ">",
};

bool tk_lex_fail(struct tk_lexer *lx, int pos, const char *fmt, ...)
{
	va_list ap;

	if (lx->failed)
		return false;
	lx->failed = true;
	lx->err->pos = pos;
	va_start(ap, fmt);
	vsnprintf(lx->err->msg, sizeof(lx->err->msg), fmt, ap);
	va_end(ap);
	return false;
}

static void tok_clear(struct tk_tok *t)
{
	free(t->str);
	memset(t, 0, sizeof(*t));
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static bool lex_string(struct tk_lexer *lx)
{
	const char *s = lx->text;
	int start = lx->pos, i = lx->pos + 1;
	size_t n = 0;
	char *out = malloc(strlen(s + i) + 1);
	bool star = false;

	if (!out)
		return tk_lex_fail(lx, start, "out of memory");
	for (;;) {
		int c = (unsigned char)s[i];

		if (!c) {
			free(out);
			return tk_lex_fail(lx, start, "unterminated string");
		}
		if (c == '"')
			break;
		star = false;
		if (c != '\\') {
			out[n++] = (char)c;
			star = c == '*';
			i++;
			continue;
		}
		c = (unsigned char)s[i + 1];
		switch (c) {
		case '"': case '\\': case '*':
			out[n++] = (char)c;
			i += 2;
			break;
		case 'n':
			out[n++] = '\n';
			i += 2;
			break;
		case 't':
			out[n++] = '\t';
			i += 2;
			break;
		case 'x': {
			int h = hexval(s[i + 2]), l = h < 0 ? -1 : hexval(s[i + 3]);

			if (h < 0 || l < 0 || (h | l) == 0) {
				free(out);
				return tk_lex_fail(lx, i, "\\x takes two hex digits, not 00");
			}
			out[n++] = (char)(h << 4 | l);
			i += 4;
			break;
		}
		default:
			free(out);
			return tk_lex_fail(lx, i, "unknown escape '\\%c' (\\\" \\\\ \\n \\t \\xNN \\*)",
					   c ? c : ' ');
		}
	}
	if (star)
		n--;  /* the prefix marker, not a character */
	out[n] = 0;
	lx->tok.kind = TK_TOK_STR;
	lx->tok.str = out;
	lx->tok.len = n;
	lx->tok.prefix = star;
	lx->pos = i + 1;
	return true;
}

static bool lex_int(struct tk_lexer *lx)
{
	const char *s = lx->text;
	int i = lx->pos, base = 10;
	unsigned long long v = 0;
	bool any = false;

	if (s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
		base = 16;
		i += 2;
	}
	for (;; i++) {
		int d = base == 16 ? hexval(s[i]) : isdigit((unsigned char)s[i]) ? s[i] - '0' : -1;

		if (d < 0)
			break;
		if (v > (~0ULL - (unsigned)d) / (unsigned)base)
			return tk_lex_fail(lx, lx->pos, "integer too large (64 bits)");
		v = v * (unsigned)base + (unsigned)d;
		any = true;
	}
	if (!any)
		return tk_lex_fail(lx, lx->pos, "0x without hex digits");
	if (isalnum((unsigned char)s[i]) || s[i] == '_')
		return tk_lex_fail(lx, i, "unexpected '%c' in a number", s[i]);
	lx->tok.kind = TK_TOK_INT;
	lx->tok.ival = v;
	lx->pos = i;
	return true;
}

bool tk_lex_next(struct tk_lexer *lx)
{
	const char *s = lx->text;
	size_t k;

	if (lx->failed)
		return false;
	tok_clear(&lx->tok);
	while (isspace((unsigned char)s[lx->pos]))
		lx->pos++;
	lx->tok.pos = lx->pos;
	if (!s[lx->pos]) {
		lx->tok.kind = TK_TOK_EOF;
	} else if (s[lx->pos] == '"') {
		if (!lex_string(lx))
			return false;
	} else if (isdigit((unsigned char)s[lx->pos])) {
		if (!lex_int(lx))
			return false;
	} else if (isalpha((unsigned char)s[lx->pos]) || s[lx->pos] == '_' ||
		   s[lx->pos] == '$') {
		int i = lx->pos + 1;

		while (isalnum((unsigned char)s[i]) || s[i] == '_')
			i++;
		if (s[lx->pos] == '$' && i == lx->pos + 1)
			return tk_lex_fail(lx, lx->pos, "'$' without a builtin's name ($pid)");
		lx->tok.kind = TK_TOK_NAME;
		lx->tok.str = strndup(s + lx->pos, (size_t)(i - lx->pos));
		if (!lx->tok.str)
			return tk_lex_fail(lx, lx->pos, "out of memory");
		lx->tok.len = (size_t)(i - lx->pos);
		lx->pos = i;
	} else {
		for (k = 0; k < sizeof(puncts) / sizeof(*puncts); k++)
			if (!strncmp(s + lx->pos, puncts[k], strlen(puncts[k])))
				break;
		if (k == sizeof(puncts) / sizeof(*puncts)) {
			unsigned char c = (unsigned char)s[lx->pos];

			return isprint(c) ? tk_lex_fail(lx, lx->pos, "unexpected '%c'", c)
					  : tk_lex_fail(lx, lx->pos, "unexpected byte 0x%02x", c);
		}
		lx->tok.kind = TK_TOK_PUNCT;
		strcpy(lx->tok.punct, puncts[k]);
		lx->pos += (int)strlen(puncts[k]);
	}
	lx->tok.end = lx->pos;
	return true;
}

void tk_lex_init(struct tk_lexer *lx, const char *text, int pos, struct tk_perr *err)
{
	memset(lx, 0, sizeof(*lx));
	lx->text = text;
	lx->pos = pos;
	lx->err = err;
	err->pos = 0;
	err->msg[0] = 0;
}

bool tk_lex_is(const struct tk_lexer *lx, const char *punct)
{
	return lx->tok.kind == TK_TOK_PUNCT && !strcmp(lx->tok.punct, punct);
}

bool tk_lex_expect(struct tk_lexer *lx, const char *punct)
{
	if (!tk_lex_is(lx, punct))
		return tk_lex_fail(lx, lx->tok.pos, "expected '%s'", punct);
	return tk_lex_next(lx);
}

void tk_lex_done(struct tk_lexer *lx)
{
	tok_clear(&lx->tok);
}
