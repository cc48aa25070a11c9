"""The test files whose tools take no code path of their own on the
oldest kernel of the x86 matrix (5.10), each file with why: the same
tracepoints, kernel functions, CO-RE fields, helpers and map reads as
on 6.1 and later, or a 5.10 path in shared code that the tests of a file
not listed take there (named). `make check-vm` (tests/vm/check-vm.py) runs their tests
marked kernel on 5.10 only where the host's make check did not pass
them, as it does on 6.1 and 6.12, and every other file's in full: a new
file runs in full until it is listed here.

What takes a path of its own before 6.1, and keeps its files off this
list: task storage for tracing programs (5.11: per-thread state in a
hash before it), task_struct's state (__state from 5.14),
bpf_task_pt_regs and BPF cookies (5.15), the block tracepoints' and
requests' layouts (5.11, 5.17), batch reads of per-CPU arrays and
lookup-and-delete on hashes (after 5.10), lock:contention_begin (5.19), kmem's and skb's tracepoint
arguments (6.1, 5.17), folio functions (5.16), module BTF (5.11), and
every tool's BPF programs under 5.10's verifier (test_doctor's dry runs
of every tool)."""

PENDING_HASH = ("per-thread state in a hash (no task storage for tracing before 5.11: "
                "bpf/tk_pending.bpf.h), which execsnoop's and opensnoop's tests take there")
TAKE_ALL = ("the counts read and deleted key by key without lookup-and-delete "
            "(libtrace/mapread.c), which biolatency's and biotop's tests take there")

SAME_ON_OLDEST = {
    "test_argdist": "uprobes, fentry on vfs_read and the classic syscall tracepoints, "
                    "as on 6.1; no USDT",
    "test_bashreadline": "a uretprobe on readline; its empty-string quirk splits 6.18 from "
                         "6.12, not 5.10 from 6.1",
    "test_cpufreq": "only the no-driver path (exit 1) is tested",
    "test_llcstat": "only the no-PMU path (exit 1) is tested",
    "test_exitsnoop": "sched_process_exit, no version branch",
    "test_gethostlatency": "uprobes, no version branch",
    "test_hardirqs": "a per-CPU hash, read in batches since 5.6",
    "test_netqtop": "net tracepoints, maps read key by key",
    "test_oomkill": "mark_victim passes a pid alone before 6.8, rss_stat has its pre-6.2 "
                    "layout: 5.10 and 6.1 take one branch",
    "test_runqlen": "cfs_rq.nr_running (before 6.14) on both; single lookups",
    "test_tcpconnect": "inet_sock_set_state (4.16) on every kernel; the kernel-function "
                       "way is the same on 5.10 and 6.1",
    "test_tcpconnlat": "inet_sock_set_state; file->f_count (before 6.13) on both",
    "test_tcplife": "inet_sock_set_state; file->f_count (before 6.13) on both",
    "test_tcpstates": "inet_sock_set_state; file->f_count (before 6.13) on both",
    "test_tcptracer": "inet_sock_set_state; file->f_count (before 6.13) on both",
    "test_tplist": "the same parsers; the ftrace invalid-address case is 6.5's",
    "test_vfsstat": "fentry or kprobes that read no argument; single lookups",
    "test_tracekitd_web": "HTTP, TLS and auth; its collectors' 5.10 paths are "
                          "test_tracekitd's",
    "test_command": "execsnoop's and opensnoop's 5.10 paths are their own files'",
    "test_loader": "the attach-method chains are the same as on 6.1; the programs' load "
                   "under 5.10's verifier is test_doctor's",
    # Their one 5.10 path is shared code that other files' tests take there.
    "test_bindsnoop": PENDING_HASH,
    "test_solisten": PENDING_HASH,
    "test_killsnoop": PENDING_HASH,
    "test_sigsnoop": PENDING_HASH,
    "test_statsnoop": PENDING_HASH,
    "test_syncsnoop": PENDING_HASH,
    "test_threadsnoop": PENDING_HASH,
    "test_capable": "the kernel-function way as on 6.1 (its tracepoint is 6.14's); "
                    + PENDING_HASH,
    "test_filetop": PENDING_HASH,
    "test_pidns": "runqlat's, offcputime's, execsnoop's and opensnoop's 5.10 paths are their "
                  "own files'",
    "test_tcprtt": TAKE_ALL,
    "test_tcpsynbl": TAKE_ALL,
    "test_tcpretrans": "tracepoints as on 6.1; " + TAKE_ALL,
    "test_softirqs": "a per-CPU array read key by key without batch reads (libtrace/"
                     "mapread.c), as syscount's and tracekitd's tests read theirs there",
}
