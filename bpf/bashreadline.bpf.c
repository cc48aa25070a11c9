// SPDX-License-Identifier: GPL-2.0
/* bashreadline: a uretprobe on readline_internal_teardown() (or
 * readline()) in bash or the libreadline it uses: the line it returns. Only tasks named bash, as bcc:
 * other programs that link readline (python3, gdb) are left out unless
 * -a asks for them. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bashreadline.h"
#include "tk_cgroup.bpf.h"
#include "tk_emit.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_user_str.bpf.h"

const volatile bool any_comm = false;   /* --all-programs */

SEC("uretprobe")
int BPF_KRETPROBE(line_uretprobe, const char *line)
{
	struct readline_event e;
	char comm[TK_TASK_COMM_LEN];
	u64 pid_tgid;

	bpf_get_current_comm(comm, sizeof(comm));
	if (!any_comm && !(comm[0] == 'b' && comm[1] == 'a' && comm[2] == 's' &&
			   comm[3] == 'h' && comm[4] == 0))
		return 0;
	if (!tk_task_wanted())
		return 0;
	__builtin_memset(&e, 0, sizeof(e));
	e.len = line ? tk_read_user_str(e.line, sizeof(e.line), line) : -1;
	pid_tgid = tk_pid_tgid();
	e.pid = pid_tgid >> 32;
	e.tid = (u32)pid_tgid;
	e.uid = (u32)bpf_get_current_uid_gid();
	e.cgroup_id = tk_cgroup_id();
	__builtin_memcpy(e.comm, comm, sizeof(comm));
	tk_emit(ctx, &e, sizeof(e));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
