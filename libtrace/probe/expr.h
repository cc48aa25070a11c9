/* The expressions of the generic tracer's probe language (trace's
 * filters and values, argdist's keys), parsed into a tree. Nothing here
 * knows the kernel: a name is a tracepoint field, a function argument, a
 * builtin (pid tid comm uid cpu ts) or a kernel symbol only once the
 * planner resolves it against BTF; a cast's type is text until then.
 *
 *   integers       42  0x1f
 *   strings        "sshd"  "ssh*" (a trailing unescaped '*': prefix
 *                  match)  escapes \" \\ \n \t \xNN \*
 *   names          file  prev_pid  pid  $pid (a '$' name is always the
 *                  builtin, when a field has the same name)
 *   arguments      arg1 .. arg6, retval
 *   members        file->f_path.dentry->d_name.name
 *   casts          (struct task_struct *)arg1  (u32)x  (unsigned long)p
 *   container_of   container_of(dl_se, struct task_struct, dl)
 *   operators      C's, with C's precedence: unary - ! ~ * (dereference),
 *                  * / %, + -, << >>, < <= > >=, == !=, &, ^, |, &&, ||
 */
#ifndef TK_PROBE_EXPR_H
#define TK_PROBE_EXPR_H

#include <stdbool.h>
#include <stddef.h>

/* Where a parse failed: a byte offset into the text, and why. */
struct tk_perr {
	int pos;
	char msg[160];
};

enum tk_px_kind {
	TK_PX_INT,           /* ival */
	TK_PX_STR,           /* str (len bytes, NUL-terminated), prefix */
	TK_PX_NAME,          /* name; builtin when written with '$' */
	TK_PX_ARG,           /* argN: ival = N (1..6) */
	TK_PX_RETVAL,
	TK_PX_MEMBER,        /* kid[0]->name (arrow) or kid[0].name */
	TK_PX_CAST,          /* (type) kid[0] */
	TK_PX_CONTAINER_OF,  /* container_of(kid[0], type, name): name may be
			      * a path ("a.b") */
	TK_PX_UNARY,         /* op kid[0] */
	TK_PX_BINARY,        /* kid[0] op kid[1] */
};

enum tk_px_op {
	TK_OP_NONE,
	/* unary */
	TK_OP_NEG, TK_OP_NOT, TK_OP_BNOT, TK_OP_DEREF,
	/* binary */
	TK_OP_MUL, TK_OP_DIV, TK_OP_MOD, TK_OP_ADD, TK_OP_SUB,
	TK_OP_SHL, TK_OP_SHR, TK_OP_LT, TK_OP_LE, TK_OP_GT, TK_OP_GE,
	TK_OP_EQ, TK_OP_NE, TK_OP_BAND, TK_OP_BXOR, TK_OP_BOR,
	TK_OP_AND, TK_OP_OR,
};

/* A type as written: "struct file", "u32", "unsigned long", with ptr
 * levels of '*'. */
struct tk_px_type {
	char *name;
	int ptr;
};

struct tk_px {
	enum tk_px_kind kind;
	enum tk_px_op op;
	unsigned long long ival;
	char *str;                /* TK_PX_STR */
	size_t len;
	bool prefix;              /* TK_PX_STR: "abc*" */
	char *name;               /* TK_PX_NAME, _MEMBER, _CONTAINER_OF */
	bool builtin;             /* TK_PX_NAME written "$name" */
	bool arrow;               /* TK_PX_MEMBER: '->', else '.' */
	struct tk_px_type type;   /* TK_PX_CAST, _CONTAINER_OF */
	struct tk_px *kid[2];
	int pos;                  /* where it starts in the text */
};

/* The expression that is all of text; NULL on failure, with err set. */
struct tk_px *tk_px_parse(const char *text, struct tk_perr *err);

void tk_px_free(struct tk_px *x);

/* x as text, every binary and unary operation in parentheses, so that
 * it reads back as the same tree. Returns the length it needed (as
 * snprintf). */
int tk_px_format(const struct tk_px *x, char *buf, size_t size);

/* The operator's spelling ("->" is not an operator here). */
const char *tk_px_op_name(enum tk_px_op op);

#endif
