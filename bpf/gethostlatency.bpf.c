// SPDX-License-Identifier: GPL-2.0
/* gethostlatency: getaddrinfo, gethostbyname and gethostbyname2 in the
 * C library, by uprobes at their entry (the name asked for, the time)
 * and uretprobes at their return (one event, with the latency), as bcc.
 * The name is the first argument of all three. The lookups' thread
 * keeps its entry in a hash by thread id until the return; a thread that
 * never returns (killed in a lookup) leaves it there until the thread
 * id's next lookup. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "gethostlatency.h"
#include "tk_emit.bpf.h"
#include "tk_filter.bpf.h"
#include "tk_user_str.bpf.h"

struct start {
	u64 ts;
	u64 name;   /* the caller's const char * */
	int func;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, u32);   /* tid */
	__type(value, struct start);
} starts SEC(".maps");

static __always_inline int entry(const char *name, int func)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct start s = { .ts = bpf_ktime_get_ns(), .name = (u64)name, .func = func };

	if (!tk_task_wanted())
		return 0;
	if (bpf_map_update_elem(&starts, &tid, &s, BPF_ANY))
		tk_count_loss(TK_LOSS_MAP_FULL);
	return 0;
}

static __always_inline int leave(void *ctx)
{
	u32 tid = (u32)bpf_get_current_pid_tgid();
	struct gethostlatency_event e;
	struct start *s = bpf_map_lookup_elem(&starts, &tid);
	u64 id;

	if (!s)
		return 0;
	__builtin_memset(&e, 0, sizeof(e));
	e.ts = bpf_ktime_get_ns();
	e.lat_ns = e.ts - s->ts;
	e.func = s->func;
	/* The name is still the caller's: read at the return, off the
	 * entry's hot path. */
	e.host_len = tk_read_user_str(e.host, sizeof(e.host), (const void *)s->name);
	bpf_map_delete_elem(&starts, &tid);
	id = tk_pid_tgid();
	e.pid = id >> 32;
	e.tid = (u32)id;
	e.uid = (u32)bpf_get_current_uid_gid();
	bpf_get_current_comm(e.comm, sizeof(e.comm));
	tk_emit(ctx, &e, sizeof(e));
	return 0;
}

#define LOOKUP(name, func)                                                   \
SEC("uprobe")                                                                \
int BPF_KPROBE(name##_entry_uprobe, const char *host)                        \
{                                                                            \
	return entry(host, func);                                            \
}                                                                            \
SEC("uretprobe")                                                             \
int BPF_KRETPROBE(name##_exit_uretprobe)                                     \
{                                                                            \
	return leave(ctx);                                                   \
}

LOOKUP(getaddrinfo, GETHOSTLATENCY_GETADDRINFO)
LOOKUP(gethostbyname, GETHOSTLATENCY_GETHOSTBYNAME)
LOOKUP(gethostbyname2, GETHOSTLATENCY_GETHOSTBYNAME2)

char LICENSE[] SEC("license") = "GPL";
