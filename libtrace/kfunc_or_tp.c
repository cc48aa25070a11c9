/* tk_load_kfunc_or_tp: kernel functions first, else tracepoints. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kfunc_or_tp.h"
#include "setup.h"

struct way_ctx {
	const struct tk_skel_ops *ops;
	tk_configure_fn configure;
	void *ctx;
	enum tk_way way;
};

/* Autoload only this way's programs, then the tool's own settings. */
static int configure_way(void *skel, void *c)
{
	struct way_ctx *w = c;
	struct bpf_object *obj = w->ops->obj(skel);

	tk_programs_off(obj, w->way == TK_WAY_KFUNC ? "tp_" : "kf_");
	return w->configure ? w->configure(skel, w->ctx) : 0;
}

/* Which ways TRACEKIT_ATTACH allows: bit 1 << TK_WAY_*. */
static unsigned ways_forced(void)
{
	const char *env = getenv("TRACEKIT_ATTACH");
	unsigned ways = 0;
	char *copy, *tok, *save = NULL;

	if (!env || !*env)
		return 1u << TK_WAY_KFUNC | 1u << TK_WAY_TP;
	copy = strdup(env);
	if (!copy)
		tk_fail("out of memory");
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		ways |= 1u << (!strcmp(tok, "tp") || !strcmp(tok, "raw_tp") ||
			       !strcmp(tok, "tp_btf") ? TK_WAY_TP : TK_WAY_KFUNC);
	free(copy);
	return ways;
}

static void *load_way(struct way_ctx *w, bool last, char *err, size_t errlen)
{
	if (!last)
		return tk_try_load(w->ops, configure_way, w, err, errlen);
	return err ? tk_try_load(w->ops, configure_way, w, err, errlen)
		   : tk_load(w->ops, configure_way, w);
}

/* Both: err NULL, tk_load (exit 1 when the last way fails); else
 * tk_try_load, the cause in err. tp_first: the tracepoint way first,
 * unless TRACEKIT_ATTACH names a kernel-function method. */
static void *load(const struct tk_skel_ops *ops, tk_configure_fn configure, void *ctx,
		  enum tk_way *way, const char *tp_blind, bool tp_first, const char *tp_name,
		  char *err, size_t errlen)
{
	struct way_ctx w = { ops, configure, ctx, TK_WAY_KFUNC };
	unsigned ways = ways_forced();
	const char *env = getenv("TRACEKIT_ATTACH");
	char why[512];
	void *skel;

	if (tp_first && (!env || !*env || !(ways & 1u << TK_WAY_KFUNC))) {
		*way = w.way = TK_WAY_TP;
		if (!(ways & 1u << TK_WAY_KFUNC))
			return load_way(&w, true, err, errlen);
		skel = load_way(&w, false, why, sizeof(why));
		if (skel) {
			tk_info("tracepoints traced; they cannot see %s", tp_blind);
			return skel;
		}
		tk_info("no tracepoint tracing (%s); tracing kernel functions instead", why);
		*way = w.way = TK_WAY_KFUNC;
		return load_way(&w, true, err, errlen);
	}
	if (ways & 1u << TK_WAY_KFUNC) {
		*way = TK_WAY_KFUNC;
		if (!(ways & 1u << TK_WAY_TP))
			return load_way(&w, true, err, errlen);
		skel = load_way(&w, false, why, sizeof(why));
		if (skel) {
			tk_info("kernel functions traced: they see every caller");
			return skel;
		}
		tk_info("no kernel function tracing (%s)", why);
	}
	tk_info("tracing %s instead; they cannot see %s", tp_name, tp_blind);
	*way = w.way = TK_WAY_TP;
	return load_way(&w, true, err, errlen);
}

void *tk_load_kfunc_or_tp(const struct tk_skel_ops *ops, tk_configure_fn configure,
			  void *ctx, enum tk_way *way, const char *tp_blind)
{
	return load(ops, configure, ctx, way, tp_blind, false, "syscall tracepoints", NULL, 0);
}

void *tk_load_kfunc_or_named_tp(const struct tk_skel_ops *ops, tk_configure_fn configure,
				void *ctx, enum tk_way *way, const char *tp_name,
				const char *tp_blind)
{
	return load(ops, configure, ctx, way, tp_blind, false, tp_name, NULL, 0);
}

void *tk_load_tp_or_kfunc(const struct tk_skel_ops *ops, tk_configure_fn configure,
			  void *ctx, enum tk_way *way, const char *tp_blind)
{
	return load(ops, configure, ctx, way, tp_blind, true, "tracepoints", NULL, 0);
}

void *tk_try_load_kfunc_or_tp(const struct tk_skel_ops *ops, tk_configure_fn configure,
			      void *ctx, enum tk_way *way, const char *tp_blind,
			      char *err, size_t errlen)
{
	return load(ops, configure, ctx, way, tp_blind, false, "syscall tracepoints", err, errlen);
}

void *tk_try_load_tp_or_kfunc(const struct tk_skel_ops *ops, tk_configure_fn configure,
			      void *ctx, enum tk_way *way, const char *tp_blind,
			      char *err, size_t errlen)
{
	return load(ops, configure, ctx, way, tp_blind, true, "tracepoints", err, errlen);
}
