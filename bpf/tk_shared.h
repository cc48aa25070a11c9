/* Definitions shared by every BPF program and by libtrace. Plain C types
 * only: this header is included both with vmlinux.h and with libc. */
#ifndef TK_SHARED_H
#define TK_SHARED_H

/* Task filter, written into each program's rodata by libtrace before load. */
/* tgid and tid: 0 any; > 0 this one; TK_FILTER_LIST any of those in the
 * map tk_filter_tgids / tk_filter_tids (-p 1,2,3 as bcc takes it). */
#define TK_FILTER_LIST (-1)
#define TK_FILTER_IDS_MAX 1024

struct tk_filter {
	int tgid;         /* 0: any process */
	int tid;          /* 0: any thread */
	int uid;          /* -1: any user */
	int use_cgroup;   /* 1: only tasks under tk_cgroup[0] */
	char comm[16];    /* "": any comm; else substring of comm */
	int ppid;         /* 0: any; else only children of this process */
	int cgroup_ids;   /* --print-cgroup: record tasks' cgroup v2 ids
			   * (bpf/tk_cgroup.bpf.h); else they stay 0 */
	int follow;       /* -- COMMAND without cgroup v2: only processes in
			   * tk_follow_tgids (bpf/tk_follow.bpf.h) */
	/* The tool's PID namespace when it is not the initial one: PIDs
	 * shown and filtered are that namespace's (bpf/tk_pidns.bpf.h). */
	unsigned long long pidns_dev;
	unsigned long long pidns_ino;   /* 0: the initial namespace */
};
/* How many processes -- COMMAND's tree may have when followed by fork. */
#define TK_FOLLOW_MAX 65536

/* Indexes of the per-CPU loss counters (map tk_losses). */
enum tk_loss {
	TK_LOSS_EVENT = 0,   /* event not submitted: ring/perf buffer full */
	TK_LOSS_MAP_FULL,    /* map insert failed: map at max_entries */
	TK_LOSS_UNSEEN,      /* an event the kernel never delivered, noticed
			      * afterwards (offcputime: a switch back in) */
	TK_LOSS_RUN_UNSEEN,  /* a probe run the kernel did not make, noticed
			      * afterwards (reported with runs_missed) */
	TK_LOSS_MAX,
};

/* Event transport chosen by libtrace at run time. */
enum tk_transport {
	TK_TRANSPORT_RINGBUF = 0,
	TK_TRANSPORT_PERFBUF = 1,
};

#define TK_TASK_COMM_LEN 16

/* Ring buffer wakeups: the BPF side wakes the reader at most once every
 * TK_EVENTS_WAKE_MS (or when a quarter of the buffer is waiting), and the
 * reader, while events keep coming, polls at that interval to collect the
 * ones that were sent without a wakeup. A wakeup for every event (the
 * ring buffer's default when the reader keeps up) costs an irq_work and a
 * context switch each: in a storm, more than the event itself. */
#define TK_EVENTS_WAKE_MS 2

#endif
