/* tk_load_kfunc_or_tp: kernel functions first, else tracepoints. */
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

/* Both: err NULL, tk_load (exit 1 when the last way fails); else
 * tk_try_load, the cause in err. */
static void *load(const struct tk_skel_ops *ops, tk_configure_fn configure, void *ctx,
		  enum tk_way *way, const char *tp_blind, char *err, size_t errlen)
{
	struct way_ctx w = { ops, configure, ctx, TK_WAY_KFUNC };
	unsigned ways = ways_forced();
	char why[512];
	void *skel;

	if (ways & 1u << TK_WAY_KFUNC) {
		*way = TK_WAY_KFUNC;
		if (!(ways & 1u << TK_WAY_TP))
			return err ? tk_try_load(ops, configure_way, &w, err, errlen)
				   : tk_load(ops, configure_way, &w);
		skel = tk_try_load(ops, configure_way, &w, why, sizeof(why));
		if (skel) {
			tk_info("kernel functions traced: they see every caller");
			return skel;
		}
		tk_info("no kernel function tracing (%s)", why);
	}
	tk_info("tracing syscall tracepoints instead; they cannot see %s", tp_blind);
	*way = w.way = TK_WAY_TP;
	return err ? tk_try_load(ops, configure_way, &w, err, errlen)
		   : tk_load(ops, configure_way, &w);
}

void *tk_load_kfunc_or_tp(const struct tk_skel_ops *ops, tk_configure_fn configure,
			  void *ctx, enum tk_way *way, const char *tp_blind)
{
	return load(ops, configure, ctx, way, tp_blind, NULL, 0);
}

void *tk_try_load_kfunc_or_tp(const struct tk_skel_ops *ops, tk_configure_fn configure,
			      void *ctx, enum tk_way *way, const char *tp_blind,
			      char *err, size_t errlen)
{
	return load(ops, configure, ctx, way, tp_blind, err, errlen);
}
