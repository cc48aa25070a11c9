"""trace end to end: probes on events the test makes itself, each line
asserted exactly. A workload (tests/e2e/progs/trace_target.c) calls
item(i, "item-<i>", -7 * i) an exact number of times and libc's getppid;
tracepoints are the test's own execs and a sleep's timer; kernel
functions (the kernel matrix: this host has no kprobes and refuses
fentry) read the name of a file the test reads."""
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import (ROOT, SYSCALL_ENTRY, Tool, Workload, assert_no_kernel_function_tracing,
                      json_lines, loss_record, require, run, syscall_numbers)
from test_stackcount import LOSS, NO_RING

PROGS = ROOT / "tests/e2e/progs"
HEADER = f"{'PID':<7} {'TID':<7} {'COMM':<15} {'FUNC':<16} -"


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    out = tmp_path_factory.mktemp("trace") / "trace-target"
    subprocess.run(["cc", "-O0", "-fno-inline", "-o", str(out), str(PROGS / "trace_target.c")],
                   check=True)
    return out


def lines(out):
    """The event lines, the header checked and dropped."""
    rows = out.splitlines()
    assert rows and rows[0] == HEADER, out
    return rows[1:]


def row(pid, comm, func, msg):
    return f"{pid:<7} {pid:<7} {comm:<15} {func:<16} {msg}".rstrip()


def traced(prog, probes, cmds, *opts, env=None):
    """trace -p WORKLOAD opts probes while a fresh workload runs cmds:
    (stdout, stderr, the workload's pid)."""
    with Workload(prog) as w:
        with Tool("trace", "-p", w.pid, *opts, *probes, env=env) as tool:
            for c in cmds:
                w.send(c)
            out, err, rc = tool.stop()
    assert rc == 0, err
    return out, err, w.pid


# ---- user functions ----

@pytest.mark.kernel
def test_arguments_return_values_and_a_filter(prog):
    """Two probes on one function, each with its own filter and format:
    the entry's integers and string (item 1 filtered out), the return's
    values, which are negative from item 2 on (3i + 6 - 7i)."""
    out, err, pid = traced(prog, [
        f'u:{prog}:item (arg1 != 1) "i=%d name=%s delta=%ld", arg1, (char *)arg2, arg3',
        f'ur:{prog}:item "ret %d", retval'], ["calls 4"])
    want = []
    for i in range(4):
        if i != 1:
            want.append(row(pid, "trace-target", "item",
                            f"i={i} name=item-{i} delta={-7 * i}"))
        want.append(row(pid, "trace-target", "item", f"ret {3 * i + 6 - 7 * i}"))
    assert lines(out) == want
    assert err == ""


@pytest.mark.kernel
def test_libc_function_return_value_is_the_callers_parent(prog):
    """getppid from libc, 5 times: retval is the test's own pid."""
    out, _, pid = traced(prog, ['ur:c:getppid "%d", retval'], ["getppid 5"])
    assert lines(out) == [row(pid, "trace-target", "getppid", str(os.getpid()))] * 5


@pytest.mark.kernel
def test_unreadable_string_is_marked_fault(prog):
    """A pointer into a page the process never touched: BPF cannot fault
    it in, and trace says so rather than print nothing."""
    out, _, pid = traced(prog, [f'u:{prog}:item "[%s]", (char *)arg2'], ["untouched"])
    assert lines(out) == [row(pid, "trace-target", "item", "[(fault)]")]


def test_format_widths_lengths_and_literal_percent(prog):
    out, _, pid = traced(prog, [
        f'u:{prog}:item (arg1 == 3) "%-4d|%5s|%x|%hhd|%%|%c", arg1, (char *)arg2, arg3, arg3, arg1 + 62'],
        ["calls 4"])
    # arg3 = -21: %x of an int is its 32 bits; %hhd of it a char's
    assert lines(out) == [row(pid, "trace-target", "item",
                              "3   |item-3|ffffffeb|-21|%|A")]


def test_json_values_are_typed(prog):
    out, _, pid = traced(prog, [f'u:{prog}:item (arg1 == 2) "%d %s", arg1 * 10, (char *)arg2'],
                         ["calls 3"], "-j")
    records = json_lines(out)
    assert loss_record(records) == {"type": "loss", "events_lost": 0, "map_inserts_failed": 0}
    (ev,) = records[:-1]
    assert ev["type"] == "event" and ev["pid"] == pid and ev["tid"] == pid
    assert ev["comm"] == "trace-target" and ev["func"] == "item"
    assert ev["values"] == [{"type": "integer", "value": 20},
                            {"type": "string", "value": "item-2", "truncated": False}]
    assert ev["message"] == "20 item-2"


def test_max_events_ends_the_run(prog):
    with Workload(prog) as w:
        with Tool("trace", "-p", w.pid, "-M", "3", f"u:{prog}:item") as tool:
            w.send("calls 10")
            out, err, rc = tool.wait()
    assert rc == 0, err
    assert lines(out) == [row(w.pid, "trace-target", "item", "")] * 3


def test_command_is_traced_from_its_exec(prog):
    """-- COMMAND: its own exec is the first event; the line's PID is the
    pid the record carries."""
    r = run("trace", 't:sched:sched_process_exec "%s %d", filename, pid', "--",
            "/bin/true")
    assert r.returncode == 0, r.stderr
    (line,) = lines(r.stdout)
    pid = line.split()[0]
    assert line == row(pid, "true", "sched_process_exec", f"/bin/true {pid}")


# ---- stacks (-K, -U) ----
# getppid's syscall, entered and left, at raw_syscalls' tracepoints (the
# filter on this machine's number of getppid, -p on the workload: only
# its getppid calls): two kernel stacks, one user stack (libc's getppid,
# the same user state both times). Not syscalls:sys_enter_getppid: before
# 6.12 those have no kernel stack (test_syscalls_tracepoints_kernel_stacks).
GETPPID_NR = syscall_numbers()["getppid"]
GETPPID = [f't:raw_syscalls:sys_enter (id == {GETPPID_NR}) "%d", id',
           f't:raw_syscalls:sys_exit (id == {GETPPID_NR}) "%d", ret']
# The ways of a stack the stack map cannot keep, as test_stackcount
# forces them: one slot and no spill map (below 8 slots), so by its
# frames on the event buffer; one slot beside the spill map of 512 (an
# eighth of 4096).
STACK_PATHS = {"frames": (["--stack-storage-size", "1"], {}),
               "spill": ([], {"TRACEKIT_STACK_MAP_SLOTS": "1"})}


def stack_tuples(evs):
    """{(kstack, ustack)} of the JSON events evs (None: unavailable)."""
    return {tuple(None if s is None else tuple(s) for s in (e["kstack"], e["ustack"]))
            for e in evs}


def of_func(evs, func):
    return [e for e in evs if e["func"] == func]


def in_syscall(kstack):
    """Is kstack (innermost first) a system call's: is its outermost
    frame the architecture's syscall entry? Only that one: a tail call
    can leave out the frames after it (on 5.10, at raw_syscalls:sys_exit,
    do_syscall_64's, which jumps to syscall_exit_to_user_mode)."""
    return bool(kstack) and kstack[-1].split("+")[0] == SYSCALL_ENTRY[0]


@pytest.mark.parametrize("transport", ["ringbuf", "perf"])
@pytest.mark.parametrize("path", sorted(STACK_PATHS))
@pytest.mark.kernel
def test_every_event_has_its_stacks_when_the_maps_cannot_keep_them(prog, path, transport):
    """item 5 times, then getppid 5 times: four distinct stacks (item's
    user stack; getppid's user stack and the kernel's at its entry and
    its exit, raw_syscalls:sys_enter and sys_exit), each taken 5 times,
    in a one-slot stack map that keeps the first (item's). The other
    three go to the spill map, or by their frames; over per-CPU perf buffers too, where each event's frames go
    just before it. Every event has its exact stacks, none is lost. A
    uprobe fires in user mode: item has no kernel stack (not a loss)."""
    opts, env = STACK_PATHS[path]
    out, err, pid = traced(prog, [f'u:{prog}:item "%d", arg1', *GETPPID],
                           ["calls 5", "getppid 5"], "-j", "-v", "-K", "-U", *opts,
                           env=dict(env, TRACEKIT_TRANSPORT=transport))
    records = json_lines(out)
    assert loss_record(records) == LOSS, records[-1]
    evs = records[:-1]
    # As many of each as made (in perf buffers, one a CPU, the order is
    # lost when the workload moves).
    assert sorted((e["func"], e["pid"]) for e in evs) == \
        sorted([("item", pid)] * 5 + [("sys_enter", pid), ("sys_exit", pid)] * 5), evs
    assert [e["message"] for e in of_func(evs, "sys_enter")] == [str(GETPPID_NR)] * 5, evs
    assert [e["message"] for e in of_func(evs, "sys_exit")] == [str(os.getpid())] * 5, evs
    (item,) = stack_tuples(of_func(evs, "item"))
    (enter,) = stack_tuples(of_func(evs, "sys_enter"))
    (exit_,) = stack_tuples(of_func(evs, "sys_exit"))
    assert item[0] is None and item[1] and item[1][0].startswith("item"), item
    for kstack, ustack in (enter, exit_):
        assert in_syscall(kstack), kstack
        assert ustack and ustack[0].startswith("getppid"), ustack
    assert enter[0] != exit_[0] and enter[1] == exit_[1], (enter, exit_)
    assert f"trace: event transport: {'ring' if transport == 'ringbuf' else 'perf'} buffer\n" in err
    if path == "frames":
        assert ("trace: 3 stacks reached userspace by their frames: the stack map and the spill "
                "map could not keep them; 0 ids were shared by two or more (their events show "
                "[... stack unavailable])\n") in err, err
    else:
        assert ("trace: the stack map has 1 slots, the spill map 512 "
                "(TRACEKIT_STACK_MAP_SLOTS)\n") in err, err
        assert "by their frames" not in err, err


def stop(pid, timeout=30):
    """SIGSTOP pid, and wait until each of its threads is stopped (a
    task that has not run since reads what came meanwhile first)."""
    os.kill(pid, signal.SIGSTOP)
    end = time.monotonic() + timeout
    while True:
        states = []
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                states.append(f.read().rsplit(")", 1)[1].split()[0])
        if all(st == "T" for st in states):
            return
        assert time.monotonic() < end, f"{pid} not stopped after {timeout} s: {states}"
        time.sleep(0.01)


@pytest.mark.kernel
def test_perf_buffers_give_each_event_its_stack_sent_from_another_cpu(prog):
    """Per-CPU perf buffers: getppid once on the last CPU, where its
    stacks go by their frames (item's user stack holds the one slot),
    then once on the first, all while trace is stopped. At exit trace
    drains the buffers in CPU order, so the first CPU's events come
    before the records the last CPU sent: each event has its stacks only
    because its own CPU's buffer holds them too, just before it."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("one CPU: no buffer of another CPU")
    with Workload(prog) as w:
        with Tool("trace", "-p", w.pid, "-j", "-v", "-K", "-U", "--stack-storage-size", "1",
                  f'u:{prog}:item "%d", arg1', *GETPPID,
                  env={"TRACEKIT_TRANSPORT": "perf"}) as tool:
            stop(tool.proc.pid)
            try:
                os.sched_setaffinity(w.pid, {cpus[-1]})
                w.send("calls 1")
                w.send("getppid 1")
                os.sched_setaffinity(w.pid, {cpus[0]})
                w.send("getppid 1")
                os.kill(tool.proc.pid, signal.SIGINT)
            finally:
                os.kill(tool.proc.pid, signal.SIGCONT)
            out, err, rc = tool.wait()
    assert rc == 0, err
    records = json_lines(out)
    assert loss_record(records) == LOSS, records[-1]
    evs = records[:-1]
    assert [(e["cpu"], e["func"]) for e in evs] == \
        [(cpus[0], "sys_enter"), (cpus[0], "sys_exit"),
         (cpus[-1], "item"), (cpus[-1], "sys_enter"), (cpus[-1], "sys_exit")], evs
    for func in ("sys_enter", "sys_exit"):
        (stacks,) = stack_tuples(of_func(evs, func))
        assert in_syscall(stacks[0]) and stacks[1] and stacks[1][0].startswith("getppid"), stacks
    assert "trace: 3 stacks reached userspace by their frames" in err, err


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.kernel
def test_stacks_no_map_keeps_are_printed_unavailable_and_counted(prog, fmt):
    """Without the way by frames (TRACEKIT_STACK_RING=0) and with one
    stack slot and no spill map: 5 getppid calls take 20 stacks (a
    kernel and a user stack at each of 10 events), of 3 distinct ones:
    the kernel's at raw_syscalls:sys_enter, at sys_exit, and libc's
    getppid (the same user state at both). The first taken, the kernel's
    at entry, holds the one slot, and is found again at each entry: 5
    are kept. The other 15 (each entry's user stack, each exit's two)
    find their bucket taken: each is printed unavailable, and counted,
    15 on the loss line, 15 in the loss record."""
    json = fmt == "json"
    out, err, pid = traced(prog, GETPPID, ["getppid 5"], "-K", "-U",
                           "--stack-storage-size", "1", *(["-j"] if json else []), env=NO_RING)
    if json:
        records = json_lines(out)
        evs = records[:-1]
        assert [e["func"] for e in evs] == ["sys_enter", "sys_exit"] * 5, evs
        unavailable = [(e["func"], k) for e in evs for k in ("kstack", "ustack") if e[k] is None]
        assert sorted(unavailable) == sorted([("sys_enter", "ustack"), ("sys_exit", "kstack"),
                                              ("sys_exit", "ustack")] * 5), evs
        assert loss_record(records) == dict(LOSS, stack_collisions=15), records[-1]
        return
    rows = lines(out)
    evs = events(rows)
    assert [l.split()[3] for l, _ in evs] == ["sys_enter", "sys_exit"] * 5, out
    unavailable = [f for _, frames in evs for f in frames if f.endswith(" stack unavailable]")]
    assert len(unavailable) == 15, out
    assert [l for l in err.splitlines() if "stack" in l] == \
        ["trace: 15 stacks lost to hash collisions in the stack map; raise "
         "--stack-storage-size (now 1)"], err


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.kernel
def test_syscalls_tracepoints_kernel_stacks(prog, fmt):
    """-K at syscalls:sys_enter_getppid and sys_exit_getppid, getppid 5
    times. Before 6.12 the kernel hands BPF the syscall's user-mode
    registers there: no event has a kernel stack (none of the 10), each
    prints unavailable, uncounted as a loss, and trace says once a
    probe, on stderr at exit (-j too), how many events had none and
    which tracepoint has them. Where the kernel gives them, every event
    has its syscall's kernel stack, and nothing is said. Which of the
    two is what the kernel gave; a mix is a failure."""
    json = fmt == "json"
    out, err, pid = traced(prog, ['t:syscalls:sys_enter_getppid "%d", 1',
                                  't:syscalls:sys_exit_getppid "%d", 1'],
                           ["getppid 5"], "-K", *(["-j"] if json else []))
    if json:
        records = json_lines(out)
        assert loss_record(records) == LOSS, records[-1]
        evs = [(e["func"], e["kstack"]) for e in records[:-1]]
    else:
        evs = [(l.split()[3], None if frames == ["[kernel stack unavailable]"] else frames)
               for l, frames in events(lines(out))]
    assert [f for f, _ in evs] == ["sys_enter_getppid", "sys_exit_getppid"] * 5, out
    told = [l for l in err.splitlines() if "kernel stack" in l]
    if all(k is None for _, k in evs):
        assert told == [
            f"trace: the kernel gave no kernel stack at syscalls:sys_{d}_getppid (5 events): "
            "before Linux 6.12 syscalls:* tracepoints carry user-mode registers; "
            f"raw_syscalls:sys_{d} (id == {GETPPID_NR}) has them" for d in ("enter", "exit")], err
    else:
        assert all(in_syscall(k) for _, k in evs), out
        assert told == [], err
    assert "lost" not in err, err


# ---- USDT ----

MARKED = """def marked_gen(x):
    yield x + 1
for i in range(7):
    next(marked_gen(i))
"""


@pytest.mark.kernel
def test_usdt_python_function_entry_names_the_marked_function():
    """Debian's python3 (3.11) fires function__entry when the interpreter
    enters a frame from C: a generator's first next(), not a plain call
    from Python code (3.11's inlined calls skip the probe). The script
    starts 7 generators of marked_gen: 7 events, with its file and name
    read from the probe's string arguments, in user memory (a short path:
    a string holds 63 bytes)."""
    d = f"/tmp/tkt-{os.getpid()}"
    os.makedirs(d, exist_ok=True)
    script = f"{d}/marked.py"
    with open(script, "w") as f:
        f.write(MARKED)
    r = run("trace", 'U:/usr/bin/python3:python:function__entry ((char *)arg2 == "marked_gen") '
            '"%s %s", (char *)arg1, (char *)arg2', "--", "/usr/bin/python3", script)
    os.unlink(script)
    os.rmdir(d)
    assert r.returncode == 0, r.stderr
    events = [l.split(None, 4) for l in lines(r.stdout)]
    assert len(events) == 7, r.stdout
    assert all(e[2:] == ["python3", "function__entry", f"{script} marked_gen"] for e in events)


# ---- tracepoints ----

def hrtimer_lines(*args):
    """trace -a -K on the hrtimer expiries while `sleep 0.01` runs:
    (event lines and their frames, stderr)."""
    r = run("trace", "-a", "-K", *args, "--", "sleep", "0.01")
    assert r.returncode == 0, r.stderr
    return lines(r.stdout), r.stderr


def events(rows):
    """(event line, its stack frames) pairs from -K output."""
    out = []
    for r in rows:
        if r.startswith("        "):
            out[-1][1].append(r.strip())
        else:
            out.append((r, []))
    return out


@pytest.mark.kernel
def test_hrtimer_expiry_names_the_function_with_a_kernel_stack():
    """The sleep's timer expires in an interrupt, on whatever task runs
    (-a: every process while COMMAND runs, as trace-cmd record does); its
    function is hrtimer_wakeup, named, and the stack is the timer
    interrupt's. No event's stack is lost, and no loss is reported (on
    5.10 one wakeup once printed [kernel stack unavailable]: its stack's
    bucket in the stack map held another)."""
    rows, err = hrtimer_lines('t:timer:hrtimer_expire_entry "%s", function')
    evs = events(rows)
    wakeups = [(l, s) for l, s in evs if l.endswith(" hrtimer_wakeup")]
    assert wakeups, evs
    for line, stack in wakeups:
        assert line.split()[-2] == "hrtimer_expire_entry"
        assert stack and any(f.startswith("__hrtimer_run_queues") for f in stack), stack
    assert all(stack and "[kernel stack unavailable]" not in stack for _, stack in evs), evs
    assert not [l for l in err.splitlines() if "stack" in l], err


@pytest.mark.kernel
def test_filter_by_symbol_drops_exactly_what_it_names():
    kept = events(hrtimer_lines('t:timer:hrtimer_expire_entry (function != hrtimer_wakeup) "%s", function')[0])
    assert kept and all(not l.endswith(" hrtimer_wakeup") for l, _ in kept), kept
    only = events(hrtimer_lines('t:timer:hrtimer_expire_entry (function == hrtimer_wakeup) "%s", function')[0])
    assert only and all(l.endswith(" hrtimer_wakeup") for l, _ in only), only


@pytest.mark.kernel
def test_data_loc_string_and_prefix_filter():
    """sched_process_exec's filename is a __data_loc string; a prefix
    comparison keeps the test's own marker program only (in a directory
    of a short name: a string constant holds 63 bytes)."""
    d = f"/tmp/tkt-{os.getpid()}"
    os.makedirs(d, exist_ok=True)
    marker = f"{d}/tk-trace-marker"
    if not os.path.islink(marker):
        os.symlink("/bin/true", marker)
    r = run("trace", f't:sched:sched_process_exec (filename == "{d}/tk-*") "%s", filename',
            "--", "sh", "-c", f"/bin/true; {marker}; /bin/true")
    os.unlink(marker)
    os.rmdir(d)
    assert r.returncode == 0, r.stderr
    (line,) = lines(r.stdout)
    assert line.endswith(f" sched_process_exec {marker}"), line


@pytest.mark.kernel
def test_user_pointer_of_a_kernel_probe_is_read_as_user_memory():
    """sys_enter_openat's filename is the caller's pointer: trace reads it
    from the process's memory (a kernel read of it fails; before, every
    such string printed (fault)). cat opens the test's path once."""
    path = f"/tmp/tk-trace-{os.getpid()}-no-such-file"
    r = run("trace", f't:syscalls:sys_enter_openat (filename == "{path}") "%s", filename',
            "--", "cat", path)
    assert r.returncode == 1, r.stderr    # cat's own status: no such file
    (line,) = lines(r.stdout)
    pid = line.split()[0]
    assert line == row(pid, "cat", "sys_enter_openat", path)


# ---- kernel functions (the kernel matrix) ----

@pytest.mark.parametrize("method", ["fentry", "kprobe"])
@pytest.mark.kernel
def test_member_chain_reads_the_file_name(method, tmp_path):
    """k:vfs_read with file->f_path.dentry->d_name.name: the name of the
    file the test reads, exactly once; kr:vfs_read's retval its size."""
    require(method)
    name = f"tk-trace-{os.getpid()}"
    path = tmp_path / name
    path.write_bytes(b"x" * 1234)
    with Tool("trace", "-p", os.getpid(),
              f'k:vfs_read (file->f_path.dentry->d_name.name == "{name}") "%s %d", '
              "file->f_path.dentry->d_name.name, count",
              'kr:vfs_read (retval == 1234) "%d", retval',
              env={"TRACEKIT_ATTACH": method}) as tool:
        with open(path, "rb", buffering=0) as f:
            assert len(f.read(4096)) == 1234
        out, err, rc = tool.stop()
    assert rc == 0, err
    pid = os.getpid()
    comm = open("/proc/self/comm").read().strip()
    got = [l for l in lines(out)]
    assert got == [f"{pid:<7} {pid:<7} {comm:<15} {'vfs_read':<16} {name} 4096",
                   f"{pid:<7} {pid:<7} {comm:<15} {'vfs_read':<16} 1234"], out


@pytest.mark.parametrize("method", ["fentry", "kprobe"])
@pytest.mark.kernel
def test_container_of_reaches_the_sleeping_task(method):
    """hrtimer_start_range_ns gets the timer embedded in a sleeper;
    container_of reaches the sleeper, and its task is the test itself.
    Only a timer whose function is hrtimer_wakeup is a sleeper's: the
    test's process also arms others while it is current (the tick's, when
    its CPU leaves idle), and those are filtered by a kernel symbol."""
    require(method)
    tid = os.getpid()
    with Tool("trace", "-p", tid,
              'k:hrtimer_start_range_ns (timer->function == hrtimer_wakeup) "%d", '
              "container_of(timer, struct hrtimer_sleeper, timer)->task->pid",
              env={"TRACEKIT_ATTACH": method}) as tool:
        time.sleep(0.01)
        out, err, rc = tool.stop()
    assert rc == 0, err
    got = {l.split()[-1] for l in lines(out)}
    assert got == {str(tid)}, out


def kernel_version():
    return tuple(int(x) for x in re.match(r"(\d+)\.(\d+)", os.uname().release).groups())


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.kernel
def test_runs_the_kernel_skipped_are_reported(prog, fmt):
    """Two probes: the workload's getppid tracepoint, and a kprobe on
    bpf_ringbuf_output, the helper each event goes out through. A
    tracepoint's program runs with the CPU's bpf_prog_active taken, so
    the kprobe its bpf_ringbuf_output hits cannot run a program: the
    kernel skips it and counts the miss (since 6.7). So each of the 5
    getppid events is printed, no kprobe event is, and exactly 5 runs are
    reported missed: on stderr in text, as runs_missed in JSON. (Only
    trace's own programs call bpf_ringbuf_output here: the kernel matrix
    runs nothing else with BPF. fentry refuses a BPF helper.)"""
    require("kprobe")
    if kernel_version() < (6, 7):
        pytest.skip(f"Linux {'.'.join(map(str, kernel_version()))} does not count the "
                    "kprobe runs it skips (since 6.7)")
    opts = ["-j"] if fmt == "json" else []
    out, err, pid = traced(prog, ['t:syscalls:sys_enter_getppid "%d", 1',
                                  'k:bpf_ringbuf_output "%d", arg3'],
                           ["getppid 5"], *opts)
    if fmt == "json":
        records = json_lines(out)
        assert [(r["func"], r["message"]) for r in records[:-1]] == \
            [("sys_enter_getppid", "1")] * 5, records
        assert records[-1] == {"type": "loss", "events_lost": 0, "map_inserts_failed": 0,
                               "runs_missed": 5}, records[-1]
    else:
        assert lines(out) == [row(pid, "trace-target", "sys_enter_getppid", "1")] * 5, out
        assert err == ("trace: probe runs missed: 5 (the kernel skipped a program already "
                       "running on that CPU, or ran none for an event it did not deliver); "
                       "counts may be incomplete\n"), err


@pytest.mark.kernel
def test_kernel_function_without_fentry_or_kprobes_fails_in_one_line():
    assert_no_kernel_function_tracing("trace", "vfs_read", "k:vfs_read")


# ---- bad input ----

@pytest.mark.parametrize("probe, message, caret", [
    ("k:vfs_read (count > )", "expected an expression", 20),
    ("k:vfs_read(count > 0)", "a blank goes between the probe and its (FILTER)", 10),
    ('k:vfs_read "%d %d", count', "the format has 2 conversions and 1 value", 11),
    ("x:foo", "unknown probe type: t:CATEGORY:EVENT, k:FUNC, kr:FUNC, u:LIB:FUNC, "
              "ur:LIB:FUNC or U:LIB:PROVIDER:PROBE", 0),
    ('t:timer:hrtimer_expire_entry "%s", fnction',
     "'fnction' is not a field of timer:hrtimer_expire_entry, a builtin or a kernel symbol; "
     "closest: function", 35),
    ('k:vfs_read "%s", file->f_pth', "struct file has no member 'f_pth'; closest: f_path", 21),
    ('t:sched:sched_process_exec "%d", filename',
     "a string here, where an integer is needed (compare it with == or !=)", 33),
])
def test_probe_errors_show_the_place(probe, message, caret):
    """The message (its closest names may go on: struct file differs
    between kernels), the probe, a caret under the place."""
    r = run("trace", probe)
    assert (r.returncode, r.stdout) == (2, "")
    first, rest = r.stderr.split("\n", 1)
    assert first.startswith(f"trace: {message}"), r.stderr
    assert rest == f"  {probe}\n  {' ' * caret}^\n", r.stderr


@pytest.mark.parametrize("args, message", [
    (["t:sched:tk_nope"], "invalid PROBE 't:sched:tk_nope': no tracepoint sched:tk_nope in this "
                          "kernel (tplist 'sched:*' lists its category)"),
    (["k:vfs_raed"], "invalid PROBE 'k:vfs_raed': no kernel function 'vfs_raed'; closest: vfs_read"),
    (["u:/nonexistent/x:f"], "invalid PROBE 'u:/nonexistent/x:f': "),
    (["U:/usr/bin/python3:python:tk_nope"],
     "invalid PROBE 'U:/usr/bin/python3:python:tk_nope': no USDT probe python:tk_nope in "),
    (["-M", "0", "t:sched:sched_switch"], "invalid -M/--max-events value '0'"),
    (["-K", "--stack-storage-size", "0", "t:sched:sched_switch"],
     "invalid --stack-storage-size value '0'"),
    (["--stack-storage-size", "8", "t:sched:sched_switch"],
     "option --stack-storage-size needs -K or -U"),
    ([], "missing PROBE"),
    (["t:sched:sched_switch"] * 9, "too many probes: at most 8 per run"),
])
def test_usage_errors(args, message):
    r = run("trace", *args)
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr.startswith(f"trace: {message}"), r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
