// SPDX-License-Identifier: GPL-2.0
/* profile: sample what the CPUs run. One perf event per CPU (cpu-clock,
 * at -F Hz or every -c ns, opened by libtrace) runs this program; it
 * counts the interrupted task's user and kernel stacks in
 * tk_stack_counts (tk_stack.bpf.h), which userspace prints at exit. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "tk_filter.bpf.h"
#include "tk_stack.bpf.h"

const volatile bool include_idle = false;  /* -I */

SEC("perf_event")
int profile_perf_event(struct bpf_perf_event_data *ctx)
{
	struct tk_stack_key key = {};

	if (!tk_task_wanted())
		return 0;
	/* The idle task is tgid 0, tid 0 on every CPU: excluded unless -I,
	 * as in bcc. */
	if (!include_idle && !bpf_get_current_pid_tgid())
		return 0;
	tk_stack_key_fill(ctx, &key, 0);
	tk_stack_add(ctx, &key, 1, (struct task_struct *)bpf_get_current_task(), true);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
