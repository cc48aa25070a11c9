#include "syscalltp.h"

#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf.h"
#include "funcmatch.h"

#include "setup.h"

/* Programs absent from the object (a tool that traces only one of the
 * pair) are no error. */
static void off(struct bpf_object *obj, const char *syscall, const char *end)
{
	struct bpf_program *p;
	char name[128];

	snprintf(name, sizeof(name), "%s_%s", syscall, end);
	p = bpf_object__find_program_by_name(obj, name);
	if (p)
		bpf_program__set_autoload(p, false);
}

bool tk_syscall_tp_or_off(struct bpf_object *obj, const char *syscall)
{
	char tp[128];

	snprintf(tp, sizeof(tp), "sys_enter_%s", syscall);
	if (tk_tracepoint_exists("syscalls", tp))
		return true;
	tk_info("%s(): no syscalls:%s tracepoint on this kernel; not traced",
		syscall, tp);
	off(obj, syscall, "enter");
	off(obj, syscall, "exit");
	return false;
}

void tk_syscall_exits_target(const char *family, const char *const *syscalls, size_t n,
			     const char *label)
{
	/* tk_load reads the list: it lives as long as the tool. */
	struct tk_func_list *exits = calloc(1, sizeof(*exits));
	size_t i;

	if (!exits || !(exits->v = calloc(n ? n : 1, sizeof(*exits->v))))
		tk_fail("out of memory");
	tk_ensure_tracefs();
	for (i = 0; i < n; i++) {
		char tp[128];

		snprintf(tp, sizeof(tp), "sys_exit_%s", syscalls[i]);
		if (!tk_tracepoint_exists("syscalls", tp))
			continue;
		if (asprintf(&exits->v[exits->n].name, "syscalls:%s", tp) < 0)
			tk_fail("out of memory");
		exits->n++;
	}
	if (!exits->n)
		tk_fail("no syscalls:sys_exit_* tracepoint of %s on this kernel: nothing to trace",
			label);
	tk_set_target_tps(family, exits, label);
}
