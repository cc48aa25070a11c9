/* The kernel's BTF, parsed once for the tools that plan with it (trace,
 * argdist, tplist) and for tracepoint lookups. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "kbtf.h"
#include "modbtf.h"
#include "opts.h"

static struct btf *kbtf;
static bool tried;
static int kbtf_errno;

const struct btf *tk_kernel_btf(void)
{
	if (!tried) {
		tried = true;
		kbtf = tk_opts.btf_path ? btf__parse(tk_opts.btf_path, NULL)
					: btf__load_vmlinux_btf();
		kbtf_errno = kbtf ? 0 : errno;
	}
	if (!kbtf)
		errno = kbtf_errno;
	return kbtf;
}

void tk_kernel_btf_release(void)
{
	tk_module_btf_release();   /* split on this one */
	btf__free(kbtf);
	kbtf = NULL;
	tried = false;
}

/* The prototype of tracepoint NAME's btf_trace_NAME, or NULL. */
static const struct btf_type *tp_proto(const struct btf *btf, const char *name)
{
	const struct btf_type *t;
	char typedef_name[128];
	int id;

	if (!btf)
		return NULL;
	snprintf(typedef_name, sizeof(typedef_name), "btf_trace_%s", name);
	id = btf__find_by_name_kind(btf, typedef_name, BTF_KIND_TYPEDEF);
	if (id <= 0)
		return NULL;
	t = btf__type_by_id(btf, btf__type_by_id(btf, id)->type);
	if (!t || !btf_is_ptr(t))
		return NULL;
	t = btf__type_by_id(btf, t->type);
	return t && btf_is_func_proto(t) ? t : NULL;
}

int tk_tp_nargs(const char *name)
{
	const struct btf_type *t = tp_proto(tk_kernel_btf(), name);

	return t ? btf_vlen(t) - 1 : -1;   /* the first is the tracepoint's data */
}

bool tk_tp_arg_is_struct_ptr(const char *name, int i, const char *struct_name)
{
	const struct btf *btf = tk_kernel_btf();
	const struct btf_type *proto = tp_proto(btf, name), *t;

	if (!proto || i < 0 || i + 1 >= btf_vlen(proto))
		return false;
	t = btf__type_by_id(btf, btf_params(proto)[i + 1].type);
	if (!t || !btf_is_ptr(t))
		return false;
	t = btf__type_by_id(btf, btf__resolve_type(btf, t->type));
	return t && btf_is_struct(t) &&
	       !strcmp(btf__name_by_offset(btf, t->name_off), struct_name);
}

bool tk_kernel_has_func(const char *name)
{
	const struct btf *btf = tk_kernel_btf();

	return btf && btf__find_by_name_kind(btf, name, BTF_KIND_FUNC) >= 0;
}

int tk_kernel_enumerator(const char *name, long long *value)
{
	const struct btf *btf = tk_kernel_btf();
	__u32 id, n, i;

	if (!btf)
		return -ENOENT;
	n = btf__type_cnt(btf);
	for (id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);

		if (btf_is_enum(t)) {
			const struct btf_enum *e = btf_enum(t);

			for (i = 0; i < btf_vlen(t); i++, e++)
				if (!strcmp(btf__name_by_offset(btf, e->name_off), name)) {
					*value = btf_kflag(t) ? (long long)e->val : (long long)(__u32)e->val;
					return 0;
				}
		} else if (btf_is_enum64(t)) {
			const struct btf_enum64 *e = btf_enum64(t);

			for (i = 0; i < btf_vlen(t); i++, e++)
				if (!strcmp(btf__name_by_offset(btf, e->name_off), name)) {
					*value = (long long)btf_enum64_value(e);
					return 0;
				}
		}
	}
	return -ENOENT;
}
