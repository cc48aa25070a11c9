/* The tokens of the probe language, for expr.c and spec.c (not for
 * tools: they call tk_px_parse and tk_probe_parse). */
#ifndef TK_PROBE_LEXER_H
#define TK_PROBE_LEXER_H

#include <stdbool.h>
#include <stddef.h>

#include "probe/expr.h"

enum tk_tok_kind {
	TK_TOK_EOF,
	TK_TOK_INT,
	TK_TOK_STR,
	TK_TOK_NAME,
	TK_TOK_PUNCT,  /* text: one of ( ) , . -> and the operators */
};

struct tk_tok {
	enum tk_tok_kind kind;
	int pos, end;            /* [pos, end) in the text */
	unsigned long long ival;
	char *str;               /* TK_TOK_STR: unescaped, malloc'd */
	size_t len;
	bool prefix;             /* TK_TOK_STR ended in an unescaped '*' */
	char punct[3];
};

/* A parse in progress over text: the current token in tok. Errors go
 * to err; the first one sticks (failed is set). */
struct tk_lexer {
	const char *text;
	int pos;
	struct tk_tok tok;
	struct tk_perr *err;
	bool failed;
	int depth;               /* nesting, bounded */
};

void tk_lex_init(struct tk_lexer *lx, const char *text, int pos, struct tk_perr *err);
/* Moves to the next token; false on a lexical error. */
bool tk_lex_next(struct tk_lexer *lx);
bool tk_lex_is(const struct tk_lexer *lx, const char *punct);
/* Consumes punct, or fails with "expected 'punct'". */
bool tk_lex_expect(struct tk_lexer *lx, const char *punct);
/* Fails at pos with the message (printf format); returns false. */
bool tk_lex_fail(struct tk_lexer *lx, int pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void tk_lex_done(struct tk_lexer *lx);

/* One expression from the current token on (expr.c). */
struct tk_px *tk_px_parse_at(struct tk_lexer *lx);

#endif
