#include "syscalltp.h"

#include <bpf/libbpf.h>
#include <stdio.h>

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
