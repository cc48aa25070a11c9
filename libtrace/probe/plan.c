/* A probe's plan from its parsed text and BTF (plan.h). An expression is
 * either a chain, compiled into one fetch (a base, then loads at
 * offsets: members, dereferences, container_of, casts of pointers), or
 * a computation, compiled into bytecode over fetches and constants. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "closest.h"
#include "probe/plan.h"

enum ty_kind { TY_INT, TY_PTR, TY_STR, TY_STRUCT };

/* A type as the planner tracks it. TY_PTR: id is the pointee's BTF id,
 * or, for a pointer to a plain integer type named in a cast without BTF
 * ("(char *)arg2"), id 0 and psize that integer's size; a void pointer
 * has neither. TY_STR: a char array of size bytes, or a __data_loc
 * string (dloc). TY_STRUCT: id is the struct's or union's. */
struct ty {
	enum ty_kind k;
	int size;
	bool sgn;
	int id;
	int psize;
	bool dloc;
	bool comm;  /* the comm builtin */
};

/* A fetch being built: value + add is the value (lv false) or the
 * address of an object of type t (lv true). */
struct chain {
	struct tk_fetch f;
	int add;
	bool lv;
	bool cast_int;  /* an integer cast applied: narrow the value */
	struct ty t;
};

struct planner {
	const struct tk_plan_ctx *ctx;
	struct tk_plan *plan;
	struct tk_perr *err;
};

/* The kernel's BTF: the context's, else loaded now (a probe of plain
 * fields and builtins never gets here). */
static const struct btf *plan_btf(const struct planner *p)
{
	if (p->ctx->btf)
		return p->ctx->btf;
	return p->ctx->load_btf ? p->ctx->load_btf() : NULL;
}


static int fail(struct planner *p, int pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct planner *p, int pos, const char *fmt, ...)
{
	va_list ap;

	p->err->pos = pos;
	va_start(ap, fmt);
	vsnprintf(p->err->msg, sizeof(p->err->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool user_memory(const struct planner *p)
{
	enum tk_probe_kind k = p->ctx->kind;

	return k == TK_PROBE_UPROBE || k == TK_PROBE_URETPROBE || k == TK_PROBE_USDT;
}

/* --- BTF ---------------------------------------------------------------- */

static const struct btf_type *skip_mods(const struct btf *btf, int *id)
{
	const struct btf_type *t = *id ? btf__type_by_id(btf, (__u32)*id) : NULL;

	while (t && (btf_is_mod(t) || btf_is_typedef(t))) {
		*id = (int)t->type;
		t = *id ? btf__type_by_id(btf, (__u32)*id) : NULL;
	}
	return t;
}

static int ty_of_btf(struct planner *p, int id, struct ty *out, int pos)
{
	const struct btf *btf = plan_btf(p);
	const struct btf_type *t = skip_mods(btf, &id);

	memset(out, 0, sizeof(*out));
	if (!t)
		return fail(p, pos, "a void value");
	if (btf_is_int(t)) {
		out->k = TY_INT;
		out->size = (int)t->size;
		out->sgn = btf_int_encoding(t) & BTF_INT_SIGNED;
	} else if (btf_is_any_enum(t)) {
		out->k = TY_INT;
		out->size = (int)t->size;
		out->sgn = btf_kflag(t);
	} else if (btf_is_ptr(t)) {
		out->k = TY_PTR;
		out->size = 8;
		out->id = (int)t->type;
	} else if (btf_is_array(t)) {
		const struct btf_array *a = btf_array(t);
		int eid = (int)a->type;
		const struct btf_type *e = skip_mods(btf, &eid);

		if (!e || !btf_is_int(e) || e->size != 1)
			return fail(p, pos, "an array of other than char: not supported");
		out->k = TY_STR;
		out->size = (int)a->nelems;
	} else if (btf_is_composite(t)) {
		out->k = TY_STRUCT;
		out->id = id;
	} else {
		return fail(p, pos, "a value of a type that cannot be read (BTF kind %u)", btf_kind(t));
	}
	if (out->k == TY_INT && out->size > 8)
		return fail(p, pos, "a %d-byte integer: at most 8", out->size);
	return 0;
}

static const char *type_name(const struct btf *btf, int id, char *buf, size_t size)
{
	const struct btf_type *t = btf__type_by_id(btf, (__u32)id);
	const char *n = t ? btf__name_by_offset(btf, t->name_off) : NULL;

	snprintf(buf, size, "%s %s", t && btf_is_union(t) ? "union" : "struct", n && *n ? n : "(anonymous)");
	return buf;
}

/* name in struct or union sid, anonymous members searched through:
 * its bit offset and type. */
static bool find_member(const struct btf *btf, int sid, const char *name, long *bits,
			int *mid, int *bitfield)
{
	const struct btf_type *t = skip_mods(btf, &sid);
	const struct btf_member *m;

	if (!t || !btf_is_composite(t))
		return false;
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++) {
		const char *mn = btf__name_by_offset(btf, m->name_off);

		if (!mn || !*mn) {
			if (find_member(btf, (int)m->type, name, bits, mid, bitfield)) {
				*bits += btf_member_bit_offset(t, (__u32)i);
				return true;
			}
		} else if (!strcmp(mn, name)) {
			*bits = btf_member_bit_offset(t, (__u32)i);
			*bitfield = (int)btf_member_bitfield_size(t, (__u32)i);
			*mid = (int)m->type;
			return true;
		}
	}
	return false;
}

static void member_names(const struct btf *btf, int sid, struct tk_closest *c)
{
	const struct btf_type *t = skip_mods(btf, &sid);
	const struct btf_member *m;

	if (!t || !btf_is_composite(t))
		return;
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++) {
		const char *mn = btf__name_by_offset(btf, m->name_off);

		if (!mn || !*mn)
			member_names(btf, (int)m->type, c);
		else
			tk_closest_add(c, mn);
	}
}

/* The byte offset of member path "a.b.c" in sid; *tid its type. */
static int member_path(struct planner *p, int sid, const char *path, int pos, long *off, int *tid)
{
	char part[128];
	const struct btf *btf = plan_btf(p);

	*off = 0;
	*tid = sid;
	while (*path) {
		size_t n = strcspn(path, ".");
		long bits;
		int bitfield, mid;
		char tn[160], near[200];

		snprintf(part, sizeof(part), "%.*s", (int)n, path);
		if (!find_member(btf, *tid, part, &bits, &mid, &bitfield)) {
			struct tk_closest c;

			tk_closest_init(&c, part);
			member_names(btf, *tid, &c);
			return fail(p, pos, "%s has no member '%s'%s", type_name(btf, *tid, tn, sizeof(tn)),
				    part, tk_closest_text(&c, near, sizeof(near)));
		}
		if (bitfield || bits % 8)
			return fail(p, pos, "'%s' is a bitfield: not supported", part);
		*off += bits / 8;
		*tid = mid;
		path += n + (path[n] == '.');
		if (*path) {
			const struct btf_type *t = skip_mods(btf, tid);

			if (!t || !btf_is_composite(t))
				return fail(p, pos, "'%s' is not a struct: it has no member '%s'", part, path);
		}
	}
	return 0;
}

/* A pointer type to pointee in BTF (for casts to "struct foo **"). */
static int ptr_to(const struct btf *btf, int pointee)
{
	__u32 n = btf__type_cnt(btf);

	for (__u32 id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);

		if (btf_is_ptr(t) && (int)t->type == pointee)
			return (int)id;
	}
	return 0;
}

/* A C integer type's name: "unsigned long", "u32", "s8", "__u64",
 * "char", "bool". */
static bool plain_int(const char *name, int *size, bool *sgn)
{
	static const struct { const char *n; int size; bool sgn; } fixed[] = {
		{ "u8", 1, 0 }, { "u16", 2, 0 }, { "u32", 4, 0 }, { "u64", 8, 0 },
		{ "s8", 1, 1 }, { "s16", 2, 1 }, { "s32", 4, 1 }, { "s64", 8, 1 },
		{ "__u8", 1, 0 }, { "__u16", 2, 0 }, { "__u32", 4, 0 }, { "__u64", 8, 0 },
		{ "__s8", 1, 1 }, { "__s16", 2, 1 }, { "__s32", 4, 1 }, { "__s64", 8, 1 },
		{ "bool", 1, 0 }, { "_Bool", 1, 0 },
	};
	int longs = 0, words = 0;
	bool uns = false, chr = false, shrt = false;
	char buf[64], *save, *w;

	for (size_t i = 0; i < sizeof(fixed) / sizeof(*fixed); i++)
		if (!strcmp(name, fixed[i].n)) {
			*size = fixed[i].size;
			*sgn = fixed[i].sgn;
			return true;
		}
	snprintf(buf, sizeof(buf), "%s", name);
	for (w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save), words++) {
		if (!strcmp(w, "unsigned"))
			uns = true;
		else if (!strcmp(w, "long"))
			longs++;
		else if (!strcmp(w, "char"))
			chr = true;
		else if (!strcmp(w, "short"))
			shrt = true;
		else if (strcmp(w, "signed") && strcmp(w, "int"))
			return false;
	}
	if (!words)
		return false;
	*size = chr ? 1 : shrt ? 2 : longs ? 8 : 4;
	*sgn = !uns;
	return true;
}

/* A type written in a cast or a tracepoint's format file. */
static int ty_of_name(struct planner *p, const char *name, int ptrs, struct ty *out, int pos)
{
	const struct btf *btf;
	int size, id = 0;
	bool sgn;

	memset(out, 0, sizeof(*out));
	if (!strcmp(name, "void") && ptrs) {
		out->k = TY_PTR;
		out->size = 8;
		/* void **: a pointer to a pointer of unknown use */
		out->psize = ptrs > 1 ? 8 : 0;
		return 0;
	}
	if (plain_int(name, &size, &sgn)) {
		if (!ptrs) {
			out->k = TY_INT;
			out->size = size;
			out->sgn = sgn;
		} else {
			out->k = TY_PTR;
			out->size = 8;
			out->psize = ptrs > 1 ? 8 : size;
		}
		return 0;
	}
	if (!(btf = plan_btf(p)))
		return fail(p, pos, "type '%s' needs the kernel's BTF, which is not available", name);
	if (!strncmp(name, "struct ", 7))
		id = btf__find_by_name_kind(btf, name + 7, BTF_KIND_STRUCT);
	else if (!strncmp(name, "union ", 6))
		id = btf__find_by_name_kind(btf, name + 6, BTF_KIND_UNION);
	else if (!strncmp(name, "enum ", 5))
		id = btf__find_by_name_kind(btf, name + 5, BTF_KIND_ENUM);
	else
		id = btf__find_by_name_kind(btf, name, BTF_KIND_TYPEDEF);
	if (id <= 0)
		return fail(p, pos, "no type '%s' in the kernel's BTF", name);
	for (; ptrs > 1; ptrs--)
		if (!(id = ptr_to(btf, id)))
			return fail(p, pos, "no pointer to '%s' in the kernel's BTF", name);
	if (ptrs) {
		out->k = TY_PTR;
		out->size = 8;
		out->id = id;
		return 0;
	}
	return ty_of_btf(p, id, out, pos);
}

/* --- Chains ------------------------------------------------------------- */

static int step(struct planner *p, struct chain *c, int off, int size, bool sgn, int pos)
{
	if (c->f.nsteps == TK_PLAN_STEPS)
		return fail(p, pos, "more than %d reads in one value", TK_PLAN_STEPS);
	c->f.step[c->f.nsteps++] = (struct tk_fetch_step){ .off = off, .size = (unsigned char)size,
							   .is_signed = sgn };
	return 0;
}

/* The value of what c addresses, loaded. */
static int load(struct planner *p, struct chain *c, int pos)
{
	int e;

	if (!c->lv)
		return 0;
	if (c->t.k == TY_STRUCT || c->t.k == TY_STR)
		return fail(p, pos, "a %s here, where a value is needed",
			    c->t.k == TY_STRUCT ? "struct" : "string");
	if ((e = step(p, c, c->add, c->t.size, c->t.sgn, pos)))
		return e;
	c->add = 0;
	c->lv = false;
	return 0;
}

static const char *const builtins[] = { "pid", "tid", "comm", "uid", "cpu", "ts" };

static int base_builtin(struct planner *p, struct chain *c, const char *name, int pos)
{
	static const unsigned char base[] = { TK_FB_PID, TK_FB_TID, TK_FB_COMM, TK_FB_UID,
					      TK_FB_CPU, TK_FB_TS };

	for (size_t i = 0; i < sizeof(builtins) / sizeof(*builtins); i++)
		if (!strcmp(name, builtins[i])) {
			c->f.base = base[i];
			c->t = (struct ty){ .k = TY_INT, .size = i == 5 ? 8 : 4 };
			if (base[i] == TK_FB_COMM)
				c->t = (struct ty){ .k = TY_STR, .size = 16, .comm = true };
			return 0;
		}
	return fail(p, pos, "unknown builtin '$%s' (pid tid comm uid cpu ts)", name);
}

static int base_field(struct planner *p, struct chain *c, const struct tk_plan_field *f, int pos)
{
	char tname[128];
	int ptrs = 0, e;
	size_t n;

	c->f.base = TK_FB_CTX;
	c->add = f->offset;
	c->lv = true;
	if (f->data_loc) {
		c->t = (struct ty){ .k = TY_STR, .size = f->size, .dloc = true };
		return 0;
	}
	snprintf(tname, sizeof(tname), "%s", f->type);
	for (n = strlen(tname); n && (tname[n - 1] == '*' || tname[n - 1] == ' '); n--)
		ptrs += tname[n - 1] == '*';
	tname[n] = 0;
	if (f->array && ptrs == 0 && plain_int(tname, &(int){ 0 }, &(bool){ 0 }) &&
	    f->size == f->array) {
		c->t = (struct ty){ .k = TY_STR, .size = f->array };
		return 0;
	}
	if (f->array)
		return fail(p, pos, "field '%s' is an array of %s: not supported", f->name, tname);
	if (ptrs) {
		if ((e = ty_of_name(p, !strncmp(tname, "const ", 6) ? tname + 6 : tname, ptrs, &c->t, pos))) {
			/* A pointer to a type BTF lacks is still an address. */
			c->t = (struct ty){ .k = TY_PTR, .size = 8 };
			p->err->msg[0] = 0;
		}
		return 0;
	}
	/* An integer: the format file's size and sign are the truth. */
	c->t = (struct ty){ .k = TY_INT, .size = f->size, .sgn = f->is_signed };
	if (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8)
		return fail(p, pos, "field '%s' has %d bytes: not an integer that can be read", f->name, f->size);
	return 0;
}

static const struct btf_param *func_params(const struct planner *p, int *n, int *ret)
{
	const struct btf *btf;
	const struct btf_type *fn, *proto;

	*n = 0;
	if (p->ctx->func_id <= 0 || !(btf = plan_btf(p)) || !(fn = btf__type_by_id(btf, (__u32)p->ctx->func_id)) ||
	    !(proto = btf__type_by_id(btf, fn->type)) || !btf_is_func_proto(proto))
		return NULL;
	*n = btf_vlen(proto);
	*ret = (int)proto->type;
	return btf_params(proto);
}

static int base_arg(struct planner *p, struct chain *c, int n, int pos)
{
	const struct btf_param *params;
	int nparams, ret;

	if (p->ctx->kind == TK_PROBE_TRACEPOINT)
		return fail(p, pos, "a tracepoint has fields, not arguments: tplist -v %s lists them",
			    p->ctx->what);
	c->f.base = TK_FB_ARG;
	c->f.arg = (unsigned char)n;
	if (p->ctx->kind == TK_PROBE_USDT) {
		/* libbpf reads each by its spec, sign-extended to 64 bits. */
		if (n > p->ctx->usdt_nargs)
			return fail(p, pos, "%s has %d argument%s", p->ctx->what, p->ctx->usdt_nargs,
				    p->ctx->usdt_nargs == 1 ? "" : "s");
		c->t = (struct ty){ .k = TY_INT, .size = 8, .sgn = true };
		return 0;
	}
	params = func_params(p, &nparams, &ret);
	if (!params) {
		c->t = (struct ty){ .k = TY_INT, .size = 8 };
		return 0;
	}
	if (n > nparams)
		return fail(p, pos, "%s has %d argument%s", p->ctx->what, nparams, nparams == 1 ? "" : "s");
	return ty_of_btf(p, (int)params[n - 1].type, &c->t, pos);
}

static int base_retval(struct planner *p, struct chain *c, int pos)
{
	const struct btf_param *params;
	int nparams, ret = 0;

	if (p->ctx->kind != TK_PROBE_KRETPROBE && p->ctx->kind != TK_PROBE_URETPROBE)
		return fail(p, pos, "retval is a return probe's (kr:, ur:)");
	c->f.base = TK_FB_RETVAL;
	params = func_params(p, &nparams, &ret);
	if (!params) {
		c->t = (struct ty){ .k = TY_INT, .size = 8, .sgn = true };
		return 0;
	}
	if (!ret)
		return fail(p, pos, "%s returns void", p->ctx->what);
	return ty_of_btf(p, ret, &c->t, pos);
}

/* A name: a field or an argument's name, then a builtin. Kernel symbols
 * are not chains: the caller tries them when this fails with -ENOENT. */
static int base_name(struct planner *p, struct chain *c, const struct tk_px *x)
{
	const struct btf_param *params;
	int nparams, ret;

	if (x->builtin)
		return base_builtin(p, c, x->name, x->pos);
	for (int i = 0; i < p->ctx->nfields; i++)
		if (!strcmp(p->ctx->fields[i].name, x->name))
			return base_field(p, c, &p->ctx->fields[i], x->pos);
	params = func_params(p, &nparams, &ret);
	for (int i = 0; params && i < nparams; i++)
		if (!strcmp(btf__name_by_offset(plan_btf(p), params[i].name_off), x->name)) {
			c->f.base = TK_FB_ARG;
			c->f.arg = (unsigned char)(i + 1);
			return ty_of_btf(p, (int)params[i].type, &c->t, x->pos);
		}
	for (size_t i = 0; i < sizeof(builtins) / sizeof(*builtins); i++)
		if (!strcmp(builtins[i], x->name))
			return base_builtin(p, c, x->name, x->pos);
	return -ENOENT;
}

static int unknown_name(struct planner *p, const struct tk_px *x)
{
	struct tk_closest c;
	const struct btf_param *params;
	int nparams, ret;
	char near[200];

	tk_closest_init(&c, x->name);
	for (int i = 0; i < p->ctx->nfields; i++)
		tk_closest_add(&c, p->ctx->fields[i].name);
	params = func_params(p, &nparams, &ret);
	for (int i = 0; params && i < nparams; i++)
		tk_closest_add(&c, btf__name_by_offset(plan_btf(p), params[i].name_off));
	for (size_t i = 0; i < sizeof(builtins) / sizeof(*builtins); i++)
		tk_closest_add(&c, builtins[i]);
	return fail(p, x->pos, "'%s' is not %s of %s, a builtin or a kernel symbol%s", x->name,
		    p->ctx->kind == TK_PROBE_TRACEPOINT ? "a field" : "an argument", p->ctx->what,
		    tk_closest_text(&c, near, sizeof(near)));
}

static bool is_chain(const struct tk_px *x)
{
	switch (x->kind) {
	case TK_PX_NAME: case TK_PX_ARG: case TK_PX_RETVAL: case TK_PX_MEMBER:
	case TK_PX_CONTAINER_OF:
		return true;
	case TK_PX_UNARY:
		return x->op == TK_OP_DEREF;
	case TK_PX_CAST:
		return is_chain(x->kid[0]);
	default:
		return false;
	}
}

static int compile_chain(struct planner *p, const struct tk_px *x, struct chain *c);

static int chain_member(struct planner *p, const struct tk_px *x, struct chain *c)
{
	long off;
	int e, tid;

	if ((e = compile_chain(p, x->kid[0], c)))
		return e;
	if (x->arrow) {
		if ((e = load(p, c, x->pos)))
			return e;
		if (c->t.k != TY_PTR || !c->t.id)
			return fail(p, x->pos, "'->%s' on a value that is not a pointer to a struct", x->name);
		if ((e = ty_of_btf(p, c->t.id, &c->t, x->pos)))
			return e;
		c->lv = true;
	}
	if (c->t.k != TY_STRUCT)
		return fail(p, x->pos, "'%s%s' on a value that is not a struct%s", x->arrow ? "->" : ".",
			    x->name, x->arrow ? "" : " (a pointer takes '->')");
	if ((e = member_path(p, c->t.id, x->name, x->pos, &off, &tid)))
		return e;
	c->add += (int)off;
	return ty_of_btf(p, tid, &c->t, x->pos);
}

static int compile_chain(struct planner *p, const struct tk_px *x, struct chain *c)
{
	struct ty t;
	long off;
	int e, tid;

	switch (x->kind) {
	case TK_PX_NAME:
		e = base_name(p, c, x);
		return e == -ENOENT ? unknown_name(p, x) : e;
	case TK_PX_ARG:
		return base_arg(p, c, (int)x->ival, x->pos);
	case TK_PX_RETVAL:
		return base_retval(p, c, x->pos);
	case TK_PX_MEMBER:
		return chain_member(p, x, c);
	case TK_PX_UNARY:  /* dereference */
		if ((e = compile_chain(p, x->kid[0], c)) || (e = load(p, c, x->pos)))
			return e;
		if (c->t.k != TY_PTR || (!c->t.id && !c->t.psize))
			return fail(p, x->pos, "'*' on a value that is not a typed pointer");
		if (c->t.psize)
			c->t = (struct ty){ .k = TY_INT, .size = c->t.psize, .sgn = c->t.psize < 8 };
		else if ((e = ty_of_btf(p, c->t.id, &c->t, x->pos)))
			return e;
		c->lv = true;
		return 0;
	case TK_PX_CAST:
		if ((e = compile_chain(p, x->kid[0], c)) || (e = load(p, c, x->pos)))
			return e;
		if ((e = ty_of_name(p, x->type.name, x->type.ptr, &t, x->pos)))
			return e;
		if (t.k == TY_STRUCT)
			return fail(p, x->pos, "a cast to a struct: cast to a pointer to it");
		c->cast_int = t.k == TY_INT;
		c->t = t;
		return 0;
	case TK_PX_CONTAINER_OF:
		if ((e = compile_chain(p, x->kid[0], c)) || (e = load(p, c, x->pos)))
			return e;
		/* A uprobe's argument is a plain 64-bit value: an address. */
		if (c->t.k != TY_PTR && !(c->t.k == TY_INT && c->t.size == 8))
			return fail(p, x->pos, "container_of takes a pointer");
		if ((e = ty_of_name(p, x->type.name, 0, &t, x->pos)))
			return e;
		if ((e = member_path(p, t.id, x->name, x->pos, &off, &tid)))
			return e;
		c->add -= (int)off;
		c->t = (struct ty){ .k = TY_PTR, .size = 8, .id = t.id };
		return 0;
	default:
		return fail(p, x->pos, "not a value that can be read");
	}
}

static int add_fetch(struct planner *p, const struct chain *c, int pos)
{
	struct tk_plan *pl = p->plan;

	for (int i = 0; i < pl->nfetch; i++)
		if (!memcmp(&pl->fetch[i], &c->f, sizeof(c->f)))
			return i;
	if (pl->nfetch == TK_PLAN_FETCHES)
		return fail(p, pos, "more than %d values read by one probe", TK_PLAN_FETCHES);
	pl->fetch[pl->nfetch] = c->f;
	return pl->nfetch++;
}

static bool char_pointer(const struct planner *p, const struct ty *t)
{
	int id = t->id;
	const struct btf_type *bt;
	const struct btf *btf;

	if (t->k != TY_PTR)
		return false;
	if (!id)
		return t->psize == 1;
	bt = (btf = plan_btf(p)) ? skip_mods(btf, &id) : NULL;
	return bt && btf_is_int(bt) && bt->size == 1;
}

/* x as a fetch: a string (want_str and x is one), else an integer.
 * *t gets its type. Returns the fetch's index or -EINVAL. */
static int fetch_of(struct planner *p, const struct tk_px *x, bool want_str, struct ty *t)
{
	struct chain c;
	int e;

	memset(&c, 0, sizeof(c));
	c.f.user = user_memory(p);
	if ((e = compile_chain(p, x, &c)))
		return e;
	if (c.t.k == TY_STR) {
		if (!want_str)
			return fail(p, x->pos, "a string here, where an integer is needed (compare it with == or !=)");
		if (c.t.dloc) {
			if ((e = step(p, &c, c.add, 4, false, x->pos)))
				return e;
			c.f.final = TK_FF_DATA_LOC;
		} else if (!c.t.comm) {
			if (c.add && (e = step(p, &c, c.add, 0, false, x->pos)))
				return e;
			c.f.final = TK_FF_STR;
		}
	} else {
		if ((e = load(p, &c, x->pos)))
			return e;
		if (c.add && (e = step(p, &c, c.add, 0, false, x->pos)))
			return e;
		if (want_str && char_pointer(p, &c.t)) {
			c.f.final = TK_FF_STR;
			c.t = (struct ty){ .k = TY_STR, .size = TK_PLAN_STR_LEN };
		} else if (c.t.k == TY_STRUCT) {
			return fail(p, x->pos, "a struct: name one of its members");
		}
	}
	*t = c.t;
	if (c.cast_int && !want_str)
		t->k = TY_INT;
	return add_fetch(p, &c, x->pos);
}

/* --- Computations -------------------------------------------------------- */

static int emit(struct planner *p, int op, int a, int b, int flags, long long imm, int pos)
{
	struct tk_plan *pl = p->plan;

	if (pl->ninsn == TK_PLAN_INSNS)
		return fail(p, pos, "the probe's expressions are too long (%d operations)", TK_PLAN_INSNS);
	pl->insn[pl->ninsn++] = (struct tk_insn){ .op = (unsigned char)op, .a = (unsigned char)a,
						  .b = (unsigned char)b, .flags = (unsigned char)flags,
						  .imm = imm };
	return 0;
}

static int compile(struct planner *p, const struct tk_px *x, struct ty *t);

static int compile_streq(struct planner *p, const struct tk_px *x, const struct tk_px *s,
			 const struct tk_px *lit, struct ty *t)
{
	struct tk_plan *pl = p->plan;
	struct ty st;
	int f, e;

	if (!is_chain(s) || (f = fetch_of(p, s, true, &st)) < 0)
		return is_chain(s) ? -EINVAL : fail(p, s->pos, "a string compares with a string value (a field, comm, a char *)");
	if (st.k != TY_STR)
		return fail(p, s->pos, "not a string: it cannot equal \"%s\"", lit->str);
	if (lit->len >= TK_PLAN_STR_LEN)
		return fail(p, lit->pos, "a string of %zu bytes: at most %d", lit->len, TK_PLAN_STR_LEN - 1);
	if (pl->nstr == TK_PLAN_STRS)
		return fail(p, lit->pos, "more than %d strings in one probe", TK_PLAN_STRS);
	memcpy(pl->str[pl->nstr], lit->str, lit->len + 1);
	if ((e = emit(p, TK_I_STREQ, f, pl->nstr++, lit->prefix ? TK_IF_PREFIX : 0, 0, x->pos)))
		return e;
	if (x->op == TK_OP_NE && (e = emit(p, TK_I_NOT, 0, 0, 0, 0, x->pos)))
		return e;
	*t = (struct ty){ .k = TY_INT, .size = 4, .sgn = true };
	return 0;
}

static const int binop_insn[] = {
	[TK_OP_MUL] = TK_I_MUL, [TK_OP_DIV] = TK_I_DIV, [TK_OP_MOD] = TK_I_MOD,
	[TK_OP_ADD] = TK_I_ADD, [TK_OP_SUB] = TK_I_SUB, [TK_OP_SHL] = TK_I_SHL,
	[TK_OP_SHR] = TK_I_SHR, [TK_OP_LT] = TK_I_LT, [TK_OP_LE] = TK_I_LE,
	[TK_OP_GT] = TK_I_GT, [TK_OP_GE] = TK_I_GE, [TK_OP_EQ] = TK_I_EQ,
	[TK_OP_NE] = TK_I_NE, [TK_OP_BAND] = TK_I_BAND, [TK_OP_BXOR] = TK_I_BXOR,
	[TK_OP_BOR] = TK_I_BOR, [TK_OP_AND] = TK_I_LAND, [TK_OP_OR] = TK_I_LOR,
};

/* C's usual conversions, in 64 bits: unsigned when either side is an
 * unsigned 64-bit value or a pointer. */
static bool signed_pair(const struct ty *a, const struct ty *b)
{
	return !((a->k == TY_PTR || (a->size == 8 && !a->sgn)) ||
		 (b->k == TY_PTR || (b->size == 8 && !b->sgn)));
}

static int compile_binary(struct planner *p, const struct tk_px *x, struct ty *t)
{
	const struct tk_px *l = x->kid[0], *r = x->kid[1];
	struct ty lt, rt;
	int e, op = binop_insn[x->op];
	bool cmp = op >= TK_I_EQ && op <= TK_I_LOR;

	if (x->op == TK_OP_EQ || x->op == TK_OP_NE) {
		if (r->kind == TK_PX_STR)
			return compile_streq(p, x, l, r, t);
		if (l->kind == TK_PX_STR)
			return compile_streq(p, x, r, l, t);
	}
	if ((e = compile(p, l, &lt)) || (e = compile(p, r, &rt)))
		return e;
	if (emit(p, op, 0, 0, signed_pair(&lt, &rt) ? TK_IF_SIGNED : 0, 0, x->pos))
		return -EINVAL;
	*t = cmp ? (struct ty){ .k = TY_INT, .size = 4, .sgn = true }
		 : (struct ty){ .k = lt.k == TY_PTR ? TY_PTR : TY_INT, .size = 8,
				.sgn = signed_pair(&lt, &rt) };
	return 0;
}

static int compile_name_or_symbol(struct planner *p, const struct tk_px *x, struct ty *t)
{
	struct chain c;
	unsigned long long addr;
	int f;

	memset(&c, 0, sizeof(c));
	if (x->kind == TK_PX_NAME && !x->builtin && base_name(p, &c, x) == -ENOENT) {
		if (!p->ctx->ksym || !(addr = p->ctx->ksym(x->name, p->ctx->ksym_arg)))
			return unknown_name(p, x);
		*t = (struct ty){ .k = TY_PTR, .size = 8 };
		return emit(p, TK_I_CONST, 0, 0, 0, (long long)addr, x->pos);
	}
	p->err->msg[0] = 0;
	if ((f = fetch_of(p, x, false, t)) < 0)
		return f;
	if (emit(p, TK_I_FETCH, f, 0, 0, 0, x->pos))
		return -EINVAL;
	if (t->k == TY_INT && t->size < 8)
		return emit(p, TK_I_CAST, t->size, 0, t->sgn ? TK_IF_SIGNED : 0, 0, x->pos);
	return 0;
}

static int compile(struct planner *p, const struct tk_px *x, struct ty *t)
{
	static const int unop_insn[] = { [TK_OP_NEG] = TK_I_NEG, [TK_OP_NOT] = TK_I_NOT,
					 [TK_OP_BNOT] = TK_I_BNOT };
	int e;

	if (is_chain(x))
		return compile_name_or_symbol(p, x, t);
	switch (x->kind) {
	case TK_PX_INT:
		*t = (struct ty){ .k = TY_INT, .size = 8, .sgn = x->ival <= (unsigned long long)INT64_MAX };
		return emit(p, TK_I_CONST, 0, 0, 0, (long long)x->ival, x->pos);
	case TK_PX_STR:
		return fail(p, x->pos, "a string compares with == or != only");
	case TK_PX_UNARY:
		if (x->op == TK_OP_NEG && x->kid[0]->kind == TK_PX_INT) {
			/* -3 is a constant (a filter ret < -3 stays one
			 * comparison: BPF's quick filter) */
			*t = (struct ty){ .k = TY_INT, .size = 8, .sgn = true };
			return emit(p, TK_I_CONST, 0, 0, 0, (long long)(0 - x->kid[0]->ival), x->pos);
		}
		if ((e = compile(p, x->kid[0], t)))
			return e;
		if (x->op == TK_OP_NOT)
			*t = (struct ty){ .k = TY_INT, .size = 4, .sgn = true };
		return emit(p, unop_insn[x->op], 0, 0, 0, 0, x->pos);
	case TK_PX_BINARY:
		return compile_binary(p, x, t);
	case TK_PX_CAST: {
		struct ty c;

		if ((e = compile(p, x->kid[0], t)) ||
		    (e = ty_of_name(p, x->type.name, x->type.ptr, &c, x->pos)))
			return e;
		if (c.k == TY_STRUCT)
			return fail(p, x->pos, "a cast to a struct: cast to a pointer to it");
		*t = c;
		if (c.k == TY_INT && c.size < 8)
			return emit(p, TK_I_CAST, c.size, 0, c.sgn ? TK_IF_SIGNED : 0, 0, x->pos);
		return 0;
	}
	default:
		return fail(p, x->pos, "not a value");
	}
}

/* A program for x into the plan; its start, or -EINVAL. */
static int program(struct planner *p, const struct tk_px *x, struct ty *t)
{
	int start = p->plan->ninsn, e;

	if ((e = compile(p, x, t)) || (e = emit(p, TK_I_END, 0, 0, 0, 0, x->pos)))
		return e;
	return start;
}

static int plan_value(struct planner *p, const struct tk_fmt_conv *conv, const struct tk_px *x,
		      struct tk_plan_value *v)
{
	bool want_str = conv->conv == 's' || !conv->conv;
	struct ty t;
	int r;

	v->fetch = v->prog = -1;
	if (is_chain(x) && (r = fetch_of(p, x, want_str, &t)) >= 0) {
		v->fetch = r;
	} else if (is_chain(x) && x->kind != TK_PX_NAME) {
		return r;
	} else {
		p->err->msg[0] = 0;
		if ((r = program(p, x, &t)) < 0)
			return r;
		v->prog = r;
	}
	v->kind = t.k == TY_STR ? TK_PV_STR : t.k == TY_PTR ? TK_PV_PTR : TK_PV_INT;
	v->size = t.k == TY_INT ? t.size : 8;
	v->is_signed = t.k == TY_INT && t.sgn;
	if (conv->conv == 's' && v->kind == TK_PV_INT)
		return fail(p, x->pos, "%s takes a string or an address: this is an integer", conv->text);
	if (conv->conv && strchr("diuxXoc", conv->conv) && v->kind == TK_PV_STR)
		return fail(p, x->pos, "%s takes an integer: this is a string (use %%s)", conv->text);
	return 0;
}

int tk_plan_build(const struct tk_plan_ctx *ctx, const struct tk_probe_spec *spec,
		  struct tk_plan *plan, struct tk_perr *err)
{
	struct planner p = { ctx, plan, err };
	struct ty t;
	int e;

	memset(plan, 0, sizeof(*plan));
	plan->filter = -1;
	err->pos = 0;
	err->msg[0] = 0;
	if (spec->filter) {
		if ((e = program(&p, spec->filter, &t)) < 0)
			return -EINVAL;
		plan->filter = e;
	}
	plan->nfilter_fetch = plan->nfetch;
	for (int i = 0; i < spec->nargs; i++) {
		if (plan_value(&p, &spec->conv[i], spec->args[i], &plan->value[i]))
			return -EINVAL;
		plan->nvalues++;
	}
	return 0;
}

/* FETCH a [CAST n] CONST k CMP END: the whole filter is one comparison. */
static void quick_filter(const struct tk_plan *pl, struct tk_quick_filter *q)
{
	const struct tk_insn *in;
	int f = pl->filter, cast = 0;

	memset(q, 0, sizeof(*q));
	if (f < 0 || f + 4 >= TK_PLAN_INSNS)
		return;
	in = &pl->insn[f];
	if (in[0].op != TK_I_FETCH)
		return;
	if (in[1].op == TK_I_CAST)
		cast = 1;
	if (in[1 + cast].op != TK_I_CONST || in[2 + cast].op < TK_I_EQ ||
	    in[2 + cast].op > TK_I_GE || in[3 + cast].op != TK_I_END)
		return;
	q->op = in[2 + cast].op;
	q->fetch = in[0].a;
	q->cast = cast ? in[1].a : 0;
	q->flags = (unsigned char)((cast ? (in[1].flags & TK_IF_SIGNED) << 4 : 0) |
				   (in[2 + cast].flags & TK_IF_SIGNED));
	q->imm = in[1 + cast].imm;
}

void tk_plan_to_code(const struct tk_plan *pl, int nargs, struct tk_plan_code *c)
{
	memset(c, 0, sizeof(*c));
	memcpy(c->fetch, pl->fetch, sizeof(c->fetch));
	memcpy(c->insn, pl->insn, sizeof(c->insn));
	memcpy(c->str, pl->str, sizeof(c->str));
	c->filter = pl->filter;
	c->nfetch = pl->nfetch;
	c->nfilter_fetch = pl->nfilter_fetch;
	quick_filter(pl, &c->quick);
	c->nargs = nargs;
}

int tk_plan_value_src(const struct tk_plan_value *v)
{
	return v->fetch >= 0 ? v->fetch : -(v->prog + 1);
}

void tk_plan_str_text(const unsigned char *d, char *out, size_t size, bool *truncated)
{
	size_t len = strnlen((const char *)d, TK_PLAN_STR_LEN), n = 0;

	*truncated = len >= TK_PLAN_STR_LEN - 1;
	for (size_t i = 0; i < len && n + 5 < size; i++) {
		if (isprint(d[i]))
			out[n++] = (char)d[i];
		else
			n += (size_t)snprintf(out + n, size - n, "\\x%02x", d[i]);
	}
	out[n] = 0;
	if (*truncated && n + 4 < size)
		strcpy(out + n, "...");
}
