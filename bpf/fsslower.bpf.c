// SPDX-License-Identifier: GPL-2.0
/* fsslower: one event per file system operation that took min_lat_ns
 * or longer (the probes: tk_fsop.bpf.h). */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "fsop.h"
#include "tk_emit.bpf.h"
#include "tk_filter.bpf.h"

const volatile __u64 min_lat_ns = 10000000;

static __always_inline void fsop_done(void *ctx, u32 op, struct dentry *de, s64 bytes,
				      u64 offset, u64 ts, u64 lat_ns)
{
	struct fsslower_event e = {};
	u64 pid_tgid;

	if (lat_ns < min_lat_ns)
		return;
	e.ts_ns = ts;
	e.lat_ns = lat_ns;
	e.bytes = bytes;
	e.offset = offset;
	e.op = op;
	pid_tgid = tk_pid_tgid();
	e.pid = pid_tgid >> 32;
	e.tid = (u32)pid_tgid;
	bpf_get_current_comm(e.comm, sizeof(e.comm));
	if (de) {
		e.name_len = BPF_CORE_READ(de, d_name.len);
		bpf_probe_read_kernel_str(e.name, sizeof(e.name), BPF_CORE_READ(de, d_name.name));
	}
	tk_emit(ctx, &e, sizeof(e));
}

#include "tk_fsop.bpf.h"

char LICENSE[] SEC("license") = "GPL";
