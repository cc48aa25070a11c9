/* Multi-links and BPF cookies: feature probes and the uprobe.multi link
 * that libbpf 1.1 cannot make (see multiattach.h). */
#include "multiattach.h"

#include "bpf.h"
#include "funcmatch.h"
#include "setup.h"
#include "tk_probe_index.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef ENOTSUPP
#define ENOTSUPP 524
#endif

#define TK_TRACE_KPROBE_MULTI 42   /* BPF_TRACE_KPROBE_MULTI */
#define TK_F_UPROBE_MULTI_RETURN 1 /* BPF_F_UPROBE_MULTI_RETURN */

/* BPF_LINK_CREATE's attributes for uprobe.multi (6.6), laid out as in
 * union bpf_attr: this system's linux/bpf.h may predate them. */
struct uprobe_multi_attr {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, uflags, pid, pad;
};

static int link_create_uprobe_multi(int prog_fd, int attach_type, const char *path,
				    const uint64_t *offsets,
				    const uint64_t *cookies, size_t n,
				    pid_t pid, bool retprobe)
{
	struct uprobe_multi_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_fd = prog_fd;
	a.attach_type = attach_type;
	a.path = (uintptr_t)path;
	a.offsets = (uintptr_t)offsets;
	a.cookies = (uintptr_t)cookies;
	a.cnt = n;
	a.uflags = retprobe ? TK_F_UPROBE_MULTI_RETURN : 0;
	a.pid = pid > 0 ? pid : 0;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

int tk_uprobe_multi_link(struct bpf_program *prog, const char *binary,
			 const uint64_t *offsets, const uint64_t *cookies,
			 size_t n, pid_t pid, bool retprobe)
{
	return link_create_uprobe_multi(bpf_program__fd(prog), TK_TRACE_UPROBE_MULTI,
					binary, offsets, cookies, n, pid, retprobe);
}

int tk_uprobe_session_link(struct bpf_program *prog, const char *binary,
			   const uint64_t *offsets, const uint64_t *cookies,
			   size_t n, pid_t pid)
{
	return link_create_uprobe_multi(bpf_program__fd(prog), TK_TRACE_UPROBE_SESSION,
					binary, offsets, cookies, n, pid, false);
}

/* "r0 = 0; exit" as a kprobe program of the given expected type. */
static int tiny_prog(int expected)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = expected);

	return bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns, 2, &o);
}

/* A kernel with kprobe.multi looks the symbol up and finds nothing
 * (ESRCH, or ENOENT on some versions); one without rejects the attach
 * type (EINVAL) or has no fprobe (EOPNOTSUPP). */
bool tk_kprobe_multi_supported(void)
{
	static int known = -1;
	const char *syms[] = { "tk_no_such_kernel_function" };
	LIBBPF_OPTS(bpf_link_create_opts, lo);
	int prog, link, err;

	if (known >= 0)
		return known;
	known = 0;
	prog = tiny_prog(TK_TRACE_KPROBE_MULTI);
	if (prog < 0)
		return false;
	lo.kprobe_multi.syms = syms;
	lo.kprobe_multi.cnt = 1;
	link = bpf_link_create(prog, 0, TK_TRACE_KPROBE_MULTI, &lo);
	err = link < 0 ? errno : 0;
	if (link >= 0)
		close(link);
	close(prog);
	known = err == ESRCH || err == ENOENT;
	return known;
}

/* A kernel with the link type opens the path and refuses "/" (a
 * directory) with EBADF; one without refuses the attach type (EINVAL).
 * As libbpf 1.3 probes uprobe.multi. */
static bool uprobe_link_type_supported(int attach_type)
{
	uint64_t offset = 0;
	int prog, link;

	prog = tiny_prog(attach_type);
	if (prog < 0)
		return false;
	link = link_create_uprobe_multi(prog, attach_type, "/", &offset, NULL, 1, -1, false);
	if (link >= 0)
		close(link);
	close(prog);
	return link == -EBADF;
}

bool tk_uprobe_multi_supported(void)
{
	static int known = -1;

	if (known < 0)
		known = uprobe_link_type_supported(TK_TRACE_UPROBE_MULTI);
	return known;
}

bool tk_uprobe_session_supported(void)
{
	static int known = -1;

	if (known < 0)
		known = uprobe_link_type_supported(TK_TRACE_UPROBE_SESSION);
	return known;
}

bool tk_attach_cookies(void)
{
	static int known = -1;

	if (known < 0)
		known = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE,
						BPF_FUNC_get_attach_cookie,
						NULL) == 1;
	return known;
}

void tk_raise_nofile(void)
{
	static bool done;
	struct rlimit rl;

	if (done || getrlimit(RLIMIT_NOFILE, &rl))
		return;
	done = true;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int tk_probe_index_set(struct bpf_object *obj, const struct tk_func_list *l)
{
	unsigned by = TK_PROBE_ONE, n = l->n;
	unsigned long long keys[TK_PROBE_MAX] = { 0 };
	size_t i;
	int err;

	if (l->n < 2)
		return 0;
	if (l->n > TK_PROBE_MAX)
		return -E2BIG;
	if (tk_attach_cookies()) {
		by = TK_PROBE_COOKIE;
	} else if (!l->binary[0]) {
		by = TK_PROBE_KEY;
		for (i = 0; i < l->n; i++)
			keys[i] = l->v[i].addr;
		err = tk_set_rodata(obj, "tk_probe_keys", keys, sizeof(keys));
		if (err)
			return err;
	}
	err = tk_set_rodata(obj, "tk_probe_n", &n, sizeof(n));
	return err ? err : tk_set_rodata(obj, "tk_probe_by", &by, sizeof(by));
}

void tk_probe_index_plan(struct tk_func_list *l, bool tracepoints,
			 const char *what)
{
	if (l->n < 2 || tk_attach_cookies())
		return;
	if (l->binary[0])
		tk_fail("%s over several user functions needs BPF cookies (bpf_get_attach_cookie, Linux 5.15): a hit's address differs in each process (ASLR); use a kernel with them, or one function per run",
			what);
	/* A classic tracepoint's record does start with its event id, but
	 * the kernel overwrites those first 8 bytes with the pt_regs pointer
	 * before a BPF program runs (perf_trace_run_bpf_submit), so the id
	 * cannot tell tracepoints apart (seen on 5.10: every hit counted as
	 * the first tracepoint's). */
	if (tracepoints)
		tk_fail("%s over several tracepoints needs BPF cookies (bpf_get_attach_cookie, Linux 5.15) to tell them apart; use a kernel with them, or one tracepoint per run",
			what);
	if (tk_kernel_funcs_addrs(l, "/proc/kallsyms"))
		tk_fail("%s needs the addresses of the kernel's functions on a kernel without BPF cookies, and /proc/kallsyms hides them (kernel.kptr_restrict); run as root with kptr_restrict < 2",
			what);
	tk_info("no BPF cookies in this kernel: a hit's function is found by its address");
}
