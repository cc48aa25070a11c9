/* The kernel's BTF, parsed once for the tools that plan with it (trace,
 * argdist, tplist) and for tracepoint lookups. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>

#include "kbtf.h"
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
	btf__free(kbtf);
	kbtf = NULL;
	tried = false;
}

int tk_tp_nargs(const char *name)
{
	const struct btf *btf = tk_kernel_btf();
	const struct btf_type *t;
	char typedef_name[128];
	int id;

	if (!btf)
		return -1;
	snprintf(typedef_name, sizeof(typedef_name), "btf_trace_%s", name);
	id = btf__find_by_name_kind(btf, typedef_name, BTF_KIND_TYPEDEF);
	if (id <= 0)
		return -1;
	t = btf__type_by_id(btf, btf__type_by_id(btf, id)->type);
	if (!t || !btf_is_ptr(t))
		return -1;
	t = btf__type_by_id(btf, t->type);
	if (!t || !btf_is_func_proto(t))
		return -1;
	return btf_vlen(t) - 1;   /* the first is the tracepoint's data */
}
