/* The kernel's BTF, parsed once for the tools that plan with it (trace,
 * argdist, tplist) and for tracepoint lookups. */
#include <errno.h>
#include <stdbool.h>

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
