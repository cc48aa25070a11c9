/* Expressions of the probe language: a recursive-descent parser over
 * lexer.c's tokens, C's precedence by climbing (expr.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/lexer.h"

/* Deeper nesting than this is an error, not a stack overflow (a fuzzer
 * finds one in seconds). */
#define MAX_DEPTH 64

static const struct {
	const char *text;
	enum tk_px_op op;
	int prec;  /* higher binds tighter */
} binops[] = {
	{ "||", TK_OP_OR, 1 },   { "&&", TK_OP_AND, 2 },  { "|", TK_OP_BOR, 3 },
	{ "^", TK_OP_BXOR, 4 },  { "&", TK_OP_BAND, 5 },  { "==", TK_OP_EQ, 6 },
	{ "!=", TK_OP_NE, 6 },   { "<", TK_OP_LT, 7 },    { "<=", TK_OP_LE, 7 },
	{ ">", TK_OP_GT, 7 },    { ">=", TK_OP_GE, 7 },   { "<<", TK_OP_SHL, 8 },
	{ ">>", TK_OP_SHR, 8 },  { "+", TK_OP_ADD, 9 },   { "-", TK_OP_SUB, 9 },
	{ "*", TK_OP_MUL, 10 },  { "/", TK_OP_DIV, 10 },  { "%", TK_OP_MOD, 10 },
};

static const struct {
	const char *text;
	enum tk_px_op op;
} unops[] = {
	{ "-", TK_OP_NEG }, { "!", TK_OP_NOT }, { "~", TK_OP_BNOT }, { "*", TK_OP_DEREF },
};

const char *tk_px_op_name(enum tk_px_op op)
{
	size_t i;

	for (i = 0; i < sizeof(binops) / sizeof(*binops); i++)
		if (binops[i].op == op)
			return binops[i].text;
	for (i = 0; i < sizeof(unops) / sizeof(*unops); i++)
		if (unops[i].op == op)
			return unops[i].text;
	return "?";
}

void tk_px_free(struct tk_px *x)
{
	if (!x)
		return;
	tk_px_free(x->kid[0]);
	tk_px_free(x->kid[1]);
	free(x->str);
	free(x->name);
	free(x->type.name);
	free(x);
}

static struct tk_px *node(struct tk_lexer *lx, enum tk_px_kind kind, int pos)
{
	struct tk_px *x = calloc(1, sizeof(*x));

	if (!x)
		tk_lex_fail(lx, pos, "out of memory");
	else {
		x->kind = kind;
		x->pos = pos;
	}
	return x;
}

/* Words that begin a type in a cast: C's, the kernel's fixed-width
 * names, and any name ending in _t (size_t, pid_t, loff_t). */
static bool type_word(const char *w)
{
	static const char *const words[] = {
		"struct", "union", "enum", "const", "volatile", "unsigned", "signed",
		"void", "char", "short", "int", "long", "bool", "_Bool",
		"u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64",
		"__u8", "__u16", "__u32", "__u64", "__s8", "__s16", "__s32", "__s64",
	};
	size_t n = strlen(w), i;

	for (i = 0; i < sizeof(words) / sizeof(*words); i++)
		if (!strcmp(w, words[i]))
			return true;
	return n > 2 && !strcmp(w + n - 2, "_t");
}

static bool append(struct tk_lexer *lx, char **s, const char *word)
{
	size_t old = *s ? strlen(*s) : 0;
	char *n = realloc(*s, old + strlen(word) + 2);

	if (!n)
		return tk_lex_fail(lx, lx->tok.pos, "out of memory");
	if (old)
		n[old++] = ' ';
	strcpy(n + old, word);
	*s = n;
	return true;
}

/* A type name from the current token: "struct TAG", or type words
 * ("unsigned long"), then '*'s. */
static bool parse_type(struct tk_lexer *lx, struct tk_px_type *t)
{
	int start = lx->tok.pos;

	if (lx->tok.kind != TK_TOK_NAME || !type_word(lx->tok.str))
		return tk_lex_fail(lx, lx->tok.pos, "expected a type (struct NAME, u32, unsigned long, ...)");
	while (lx->tok.kind == TK_TOK_NAME && !strcmp(lx->tok.str, "const"))
		if (!tk_lex_next(lx))
			return false;
	if (lx->tok.kind == TK_TOK_NAME && (!strcmp(lx->tok.str, "struct") ||
	    !strcmp(lx->tok.str, "union") || !strcmp(lx->tok.str, "enum"))) {
		if (!append(lx, &t->name, lx->tok.str) || !tk_lex_next(lx))
			return false;
		if (lx->tok.kind != TK_TOK_NAME || lx->tok.str[0] == '$')
			return tk_lex_fail(lx, lx->tok.pos, "expected the %s's name", t->name);
		if (!append(lx, &t->name, lx->tok.str) || !tk_lex_next(lx))
			return false;
	} else {
		while (lx->tok.kind == TK_TOK_NAME && type_word(lx->tok.str)) {
			if (!strcmp(lx->tok.str, "struct") || !strcmp(lx->tok.str, "union") ||
			    !strcmp(lx->tok.str, "enum"))
				return tk_lex_fail(lx, lx->tok.pos, "'%s' inside a type name", lx->tok.str);
			if (strcmp(lx->tok.str, "const") && strcmp(lx->tok.str, "volatile") &&
			    !append(lx, &t->name, lx->tok.str))
				return false;
			if (!tk_lex_next(lx))
				return false;
		}
		if (!t->name)
			return tk_lex_fail(lx, start, "expected a type");
	}
	while (tk_lex_is(lx, "*")) {
		if (++t->ptr > 8)
			return tk_lex_fail(lx, lx->tok.pos, "too many '*'");
		if (!tk_lex_next(lx))
			return false;
	}
	return true;
}

/* container_of(PTR, struct TYPE, MEMBER[.MEMBER...]), after its name. */
static struct tk_px *parse_container_of(struct tk_lexer *lx, int pos)
{
	struct tk_px *x = node(lx, TK_PX_CONTAINER_OF, pos);

	if (!x || !tk_lex_expect(lx, "(") || !(x->kid[0] = tk_px_parse_at(lx)) ||
	    !tk_lex_expect(lx, ","))
		goto fail;
	if (lx->tok.kind != TK_TOK_NAME || (strcmp(lx->tok.str, "struct") &&
					    strcmp(lx->tok.str, "union"))) {
		tk_lex_fail(lx, lx->tok.pos, "container_of takes a struct type: container_of(PTR, struct TYPE, MEMBER)");
		goto fail;
	}
	if (!parse_type(lx, &x->type))
		goto fail;
	if (x->type.ptr) {
		tk_lex_fail(lx, pos, "container_of takes the struct, not a pointer to it");
		goto fail;
	}
	if (!tk_lex_expect(lx, ","))
		goto fail;
	for (;;) {
		if (lx->tok.kind != TK_TOK_NAME || lx->tok.str[0] == '$') {
			tk_lex_fail(lx, lx->tok.pos, "expected a member name");
			goto fail;
		}
		if (x->name) {
			size_t n = strlen(x->name);
			char *s = realloc(x->name, n + lx->tok.len + 2);

			if (!s) {
				tk_lex_fail(lx, lx->tok.pos, "out of memory");
				goto fail;
			}
			s[n] = '.';
			strcpy(s + n + 1, lx->tok.str);
			x->name = s;
		} else if (!(x->name = strdup(lx->tok.str))) {
			tk_lex_fail(lx, lx->tok.pos, "out of memory");
			goto fail;
		}
		if (!tk_lex_next(lx))
			goto fail;
		if (!tk_lex_is(lx, "."))
			break;
		if (!tk_lex_next(lx))
			goto fail;
	}
	if (tk_lex_expect(lx, ")"))
		return x;
fail:
	tk_px_free(x);
	return NULL;
}

/* argN, retval, a name, or container_of(...). */
static struct tk_px *parse_name(struct tk_lexer *lx)
{
	const char *w = lx->tok.str;
	int pos = lx->tok.pos;
	struct tk_px *x;

	/* A type's name is not a value: "(u32 + 1)" would read as a cast. */
	if (type_word(w)) {
		tk_lex_fail(lx, pos, "'%s' is a type: a cast is written (%s)VALUE", w, w);
		return NULL;
	}
	if (!strcmp(w, "container_of")) {
		if (!tk_lex_next(lx))
			return NULL;
		return parse_container_of(lx, pos);
	}
	if (!strncmp(w, "arg", 3) && w[3] >= '1' && w[3] <= '9' && !w[4]) {
		if (w[3] > '6') {
			tk_lex_fail(lx, pos, "%s: arguments are arg1 to arg6", w);
			return NULL;
		}
		if ((x = node(lx, TK_PX_ARG, pos)))
			x->ival = (unsigned)(w[3] - '0');
	} else if (!strcmp(w, "retval")) {
		x = node(lx, TK_PX_RETVAL, pos);
	} else if ((x = node(lx, TK_PX_NAME, pos))) {
		x->builtin = w[0] == '$';
		if (!(x->name = strdup(w + x->builtin))) {
			tk_lex_fail(lx, pos, "out of memory");
			tk_px_free(x);
			return NULL;
		}
	}
	if (x && !tk_lex_next(lx)) {  /* w is freed from here on */
		tk_px_free(x);
		return NULL;
	}
	if (x && tk_lex_is(lx, "(")) {
		tk_lex_fail(lx, pos, "'%.*s' is not a function of the probe language (container_of is)",
			    (int)strcspn(lx->text + pos, " \t\n\r\v\f("), lx->text + pos);
		tk_px_free(x);
		return NULL;
	}
	return x;
}

static struct tk_px *parse_unary(struct tk_lexer *lx);

static struct tk_px *parse_primary(struct tk_lexer *lx)
{
	struct tk_px *x = NULL;
	int pos = lx->tok.pos;

	switch (lx->tok.kind) {
	case TK_TOK_INT:
		if ((x = node(lx, TK_PX_INT, pos)))
			x->ival = lx->tok.ival;
		break;
	case TK_TOK_STR:
		if ((x = node(lx, TK_PX_STR, pos))) {
			x->str = lx->tok.str;
			x->len = lx->tok.len;
			x->prefix = lx->tok.prefix;
			lx->tok.str = NULL;
		}
		break;
	case TK_TOK_NAME:
		return parse_name(lx);
	case TK_TOK_PUNCT:
		if (!tk_lex_is(lx, "("))
			break;
		if (!tk_lex_next(lx))
			return NULL;
		if (lx->tok.kind == TK_TOK_NAME && type_word(lx->tok.str)) {
			if (!(x = node(lx, TK_PX_CAST, pos)))
				return NULL;
			if (!parse_type(lx, &x->type) || !tk_lex_expect(lx, ")") ||
			    !(x->kid[0] = parse_unary(lx))) {
				tk_px_free(x);
				return NULL;
			}
			return x;
		}
		x = tk_px_parse_at(lx);
		if (x && !tk_lex_expect(lx, ")")) {
			tk_px_free(x);
			return NULL;
		}
		return x;
	case TK_TOK_EOF:
		break;
	}
	if (!x) {
		if (!lx->failed)
			tk_lex_fail(lx, pos, lx->tok.kind == TK_TOK_EOF ? "expected an expression at the end"
								     : "expected an expression");
		return NULL;
	}
	if (!tk_lex_next(lx)) {
		tk_px_free(x);
		return NULL;
	}
	return x;
}

/* Member access after a primary: ->name, .name, any number of times. */
static struct tk_px *parse_postfix(struct tk_lexer *lx)
{
	struct tk_px *x = parse_primary(lx);

	while (x && (tk_lex_is(lx, "->") || tk_lex_is(lx, "."))) {
		struct tk_px *m = node(lx, TK_PX_MEMBER, lx->tok.pos);

		if (!m)
			break;
		m->arrow = tk_lex_is(lx, "->");
		m->kid[0] = x;
		x = m;
		if (!tk_lex_next(lx))
			break;
		if (lx->tok.kind != TK_TOK_NAME || lx->tok.str[0] == '$') {
			tk_lex_fail(lx, lx->tok.pos, "expected a member name after '%s'",
				    m->arrow ? "->" : ".");
			break;
		}
		m->name = lx->tok.str;
		lx->tok.str = NULL;
		if (!tk_lex_next(lx))
			break;
	}
	if (lx->failed) {
		tk_px_free(x);
		return NULL;
	}
	return x;
}

static struct tk_px *parse_unary(struct tk_lexer *lx)
{
	struct tk_px *x;
	size_t i;

	if (++lx->depth > MAX_DEPTH) {
		tk_lex_fail(lx, lx->tok.pos, "expression nested too deeply (%d levels)", MAX_DEPTH);
		return NULL;
	}
	for (i = 0; i < sizeof(unops) / sizeof(*unops); i++)
		if (tk_lex_is(lx, unops[i].text))
			break;
	if (i == sizeof(unops) / sizeof(*unops)) {
		x = parse_postfix(lx);
	} else if ((x = node(lx, TK_PX_UNARY, lx->tok.pos))) {
		x->op = unops[i].op;
		if (!tk_lex_next(lx) || !(x->kid[0] = parse_unary(lx))) {
			tk_px_free(x);
			x = NULL;
		}
	}
	lx->depth--;
	return x;
}

static int binop_at(const struct tk_lexer *lx)
{
	size_t i;

	if (lx->tok.kind == TK_TOK_PUNCT)
		for (i = 0; i < sizeof(binops) / sizeof(*binops); i++)
			if (!strcmp(lx->tok.punct, binops[i].text))
				return (int)i;
	return -1;
}

/* Operands joined by operators that bind at least as tight as min. */
static struct tk_px *parse_binary(struct tk_lexer *lx, int min)
{
	struct tk_px *x = parse_unary(lx);
	int i;

	while (x && (i = binop_at(lx)) >= 0 && binops[i].prec >= min) {
		struct tk_px *b = node(lx, TK_PX_BINARY, lx->tok.pos);

		if (!b)
			break;
		b->op = binops[i].op;
		b->kid[0] = x;
		x = b;
		if (!tk_lex_next(lx) || !(b->kid[1] = parse_binary(lx, binops[i].prec + 1)))
			break;
	}
	if (lx->failed) {
		tk_px_free(x);
		return NULL;
	}
	return x;
}

/* Every level of nesting (parentheses, unary operators, casts) passes
 * through parse_unary, which bounds the depth. */
struct tk_px *tk_px_parse_at(struct tk_lexer *lx)
{
	return parse_binary(lx, 1);
}

struct tk_px *tk_px_parse(const char *text, struct tk_perr *err)
{
	struct tk_lexer lx;
	struct tk_px *x = NULL;

	tk_lex_init(&lx, text, 0, err);
	if (tk_lex_next(&lx) && (x = tk_px_parse_at(&lx)) && lx.tok.kind != TK_TOK_EOF) {
		tk_lex_fail(&lx, lx.tok.pos, "unexpected text after the expression");
		tk_px_free(x);
		x = NULL;
	}
	tk_lex_done(&lx);
	return x;
}

/* --- Back to text ------------------------------------------------------ */

struct out {
	char *buf;
	size_t size, len;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->len < o->size ? o->buf + o->len : NULL,
		      o->len < o->size ? o->size - o->len : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n;
}

static void put_type(struct out *o, const struct tk_px_type *t)
{
	put(o, "%s%s", t->name, t->ptr ? " " : "");
	for (int i = 0; i < t->ptr; i++)
		put(o, "*");
}

static void put_string(struct out *o, const struct tk_px *x)
{
	put(o, "\"");
	for (size_t i = 0; i < x->len; i++) {
		unsigned char c = (unsigned char)x->str[i];

		if (c == '"' || c == '\\' || c == '*')
			put(o, "\\%c", c);
		else if (c == '\n')
			put(o, "\\n");
		else if (c == '\t')
			put(o, "\\t");
		else if (c < 0x20 || c >= 0x7f)
			put(o, "\\x%02x", c);
		else
			put(o, "%c", c);
	}
	put(o, "%s\"", x->prefix ? "*" : "");
}

static void format(struct out *o, const struct tk_px *x)
{
	switch (x->kind) {
	case TK_PX_INT:
		put(o, "%llu", x->ival);
		break;
	case TK_PX_STR:
		put_string(o, x);
		break;
	case TK_PX_NAME:
		put(o, "%s%s", x->builtin ? "$" : "", x->name);
		break;
	case TK_PX_ARG:
		put(o, "arg%llu", x->ival);
		break;
	case TK_PX_RETVAL:
		put(o, "retval");
		break;
	case TK_PX_MEMBER:
		format(o, x->kid[0]);
		put(o, "%s%s", x->arrow ? "->" : ".", x->name);
		break;
	case TK_PX_CAST:
		put(o, "((");
		put_type(o, &x->type);
		put(o, ")");
		format(o, x->kid[0]);
		put(o, ")");
		break;
	case TK_PX_CONTAINER_OF:
		put(o, "container_of(");
		format(o, x->kid[0]);
		put(o, ", ");
		put_type(o, &x->type);
		put(o, ", %s)", x->name);
		break;
	case TK_PX_UNARY:
		put(o, "(%s", tk_px_op_name(x->op));
		format(o, x->kid[0]);
		put(o, ")");
		break;
	case TK_PX_BINARY:
		put(o, "(");
		format(o, x->kid[0]);
		put(o, " %s ", tk_px_op_name(x->op));
		format(o, x->kid[1]);
		put(o, ")");
		break;
	}
}

int tk_px_format(const struct tk_px *x, char *buf, size_t size)
{
	struct out o = { buf, size, 0 };

	if (size)
		buf[0] = 0;
	format(&o, x);
	return (int)o.len;
}
