// SPDX-License-Identifier: GPL-2.0
/* vfsstat: count calls of VFS functions (and of fsync(2), fdatasync(2)).
 *
 * Each function is one probe with two methods (fentry, then kprobe):
 * the task filter, then one add to this CPU's slot of a per-CPU array;
 * no hash, no atomics (--print-cgroup: of the task's cgroup's counters,
 * in a per-CPU hash). Userspace sums the CPUs at each interval. The
 * functions' arguments are not read, so their signatures (vfs_create's
 * changed in 5.12 and 6.3) do not matter. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "tk_cgroup.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_loss.bpf.h"
#include "vfsstat.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, VFSSTAT_SLOTS);
	__type(key, u32);
	__type(value, u64);
} counts SEC(".maps");

/* --print-cgroup; userspace creates only the map a run uses. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, VFSSTAT_MAX_CGROUPS);
	__type(key, u64);   /* cgroup id */
	__type(value, struct vfsstat_counts);
} by_cgroup SEC(".maps");

static __always_inline int count(u32 slot)
{
	u64 *n;

	if (!tk_task_wanted())
		return 0;
	if (tk_filter.cgroup_ids) {
		struct vfsstat_counts *c, zero = {};
		u64 id = tk_cgroup_id();

		c = tk_lookup_or_init(&by_cgroup, &id, &zero);
		if (c && slot < VFSSTAT_SLOTS)
			c->n[slot]++;   /* per-CPU: no atomic needed */
		return 0;
	}
	n = bpf_map_lookup_elem(&counts, &slot);
	if (n)
		(*n)++;   /* per-CPU: no atomic needed */
	return 0;
}

SEC("fentry/vfs_read")
int BPF_PROG(vfs_read_fentry)
{
	return count(VFSSTAT_READ);
}

SEC("kprobe/vfs_read")
int BPF_KPROBE(vfs_read_kprobe)
{
	return count(VFSSTAT_READ);
}

SEC("fentry/vfs_write")
int BPF_PROG(vfs_write_fentry)
{
	return count(VFSSTAT_WRITE);
}

SEC("kprobe/vfs_write")
int BPF_KPROBE(vfs_write_kprobe)
{
	return count(VFSSTAT_WRITE);
}

/* fsync(2) and fdatasync(2), at their syscall functions. The VFS
 * functions they go through are compiled inline into them: on Debian's
 * 5.10, 6.1 and 6.12 neither call ever reaches vfs_fsync (bcc's choice,
 * whose count stays 0), and fdatasync(2) reaches vfs_fsync_range on
 * 6.12 but not on 5.10 or 6.1. */
#if defined(__TARGET_ARCH_arm64)
#define SYSCALL_FN(name) "__arm64_sys_" #name
#else
#define SYSCALL_FN(name) "__x64_sys_" #name
#endif

SEC("fentry/" SYSCALL_FN(fsync))
int BPF_PROG(sys_fsync_fentry)
{
	return count(VFSSTAT_FSYNC);
}

SEC("kprobe/" SYSCALL_FN(fsync))
int BPF_KPROBE(sys_fsync_kprobe)
{
	return count(VFSSTAT_FSYNC);
}

SEC("fentry/" SYSCALL_FN(fdatasync))
int BPF_PROG(sys_fdatasync_fentry)
{
	return count(VFSSTAT_FSYNC);
}

SEC("kprobe/" SYSCALL_FN(fdatasync))
int BPF_KPROBE(sys_fdatasync_kprobe)
{
	return count(VFSSTAT_FSYNC);
}

SEC("fentry/vfs_open")
int BPF_PROG(vfs_open_fentry)
{
	return count(VFSSTAT_OPEN);
}

SEC("kprobe/vfs_open")
int BPF_KPROBE(vfs_open_kprobe)
{
	return count(VFSSTAT_OPEN);
}

SEC("fentry/vfs_create")
int BPF_PROG(vfs_create_fentry)
{
	return count(VFSSTAT_CREATE);
}

SEC("kprobe/vfs_create")
int BPF_KPROBE(vfs_create_kprobe)
{
	return count(VFSSTAT_CREATE);
}

char LICENSE[] SEC("license") = "GPL";
