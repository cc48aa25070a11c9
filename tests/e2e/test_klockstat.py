"""klockstat end to end: writer threads of tests/e2e/progs/lock_target.c
contend on one pipe's mutex (pipe_write takes pipe->mutex; the function is
anon_pipe_write since Linux 6.16) and must appear with that caller.

Contention is not certain in any given second on a busy 2-CPU machine or
under QEMU's TCG, so the tests do not hope for it: klockstat prints every
second (-i 1, the totals since the start) and the test reads until a
pipe_write row has come (at most a minute), and only then stops it."""
import os
import re
import select
import subprocess
import time

import pytest

from conftest import (ROOT, Tool, has_ksym, json_lines, kernel_has, loss_record, run)

PROG_SRC = ROOT / "tests/e2e/progs/lock_target.c"
RWSEM_SRC = ROOT / "tests/e2e/progs/rwsem_target.c"
PIPE_WRITE = re.compile(r"(anon_)?pipe_write")
ROW_KEYS = {"type", "time", "kind", "caller", "stack", "count", "avg_ns", "max_ns", "total_ns",
            "max_pid", "max_tid", "max_comm", "max_lock"}
WAIT_TIMEOUT = 60


def build(tmp_path_factory, src):
    path = tmp_path_factory.mktemp("klock") / src.stem
    subprocess.run(["cc", "-O2", "-pthread", "-o", str(path), str(src)], check=True)
    return path


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    return build(tmp_path_factory, PROG_SRC)


@pytest.fixture(scope="module")
def rwsem_prog(tmp_path_factory):
    return build(tmp_path_factory, RWSEM_SRC)


class Writers:
    """A workload (lock_target, or rwsem_target) made with args: its pid,
    its threads waiting until go() (-g: tests/e2e/progs/start_gate.h), so
    that klockstat attaches before they take their locks; stopped (stdin
    closed) at the end."""

    def __init__(self, prog, *args):
        self.proc = subprocess.Popen([str(prog), "-g", *map(str, args)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        pid, word = self.proc.stdout.readline().split()
        assert word == "ready" and int(pid) == self.proc.pid
        self.pid = self.proc.pid

    def go(self):
        """Once the tools have attached: the threads start."""
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.stdin.close()
        try:
            assert self.proc.stdout.read() == "done\n"
            assert self.proc.wait(timeout=30) == 0
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()


def read_until(tool, done, timeout=WAIT_TIMEOUT):
    """Read the tool's JSON lines as they come until done(records so far)
    holds (False when the time runs out); the rest come at stop()."""
    records, buf = [], b""
    fd = tool.proc.stdout.fileno()
    end = time.monotonic() + timeout
    while not done(records):
        left = end - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return records, False
        data = os.read(fd, 65536)
        if not data:
            return records, False
        buf += data
        *lines, buf = buf.split(b"\n")
        records += json_lines(b"\n".join(lines).decode())
    return records, True


def caller_rows(records, kind, caller):
    """The rows of kind ("wait", "hold") whose caller matches caller."""
    return [r for r in records if r["type"] == "lock" and r["kind"] == kind
            and caller.fullmatch(r["caller"])]


def pipe_write_rows(records, kind="wait"):
    return caller_rows(records, kind, PIPE_WRITE)


def assert_sane(row, pid):
    assert set(row) == ROW_KEYS, row
    assert row["count"] >= 1
    assert row["max_ns"] >= row["avg_ns"] > 0, row
    assert abs(row["total_ns"] - row["avg_ns"] * row["count"]) < row["count"], row
    assert row["max_pid"] == pid and row["max_comm"] == "tk-lockw", row
    assert re.fullmatch(r"(anon_)?pipe_write\+0x[0-9a-f]+", row["stack"][0]), row
    assert int(row["max_lock"], 16) > 0


def trace_writers(prog, *args, kinds=("wait",)):
    """klockstat -j -i 1 -p WRITERS until pipe_write rows of each kind
    have come; returns (every record, stderr, pid)."""
    with Writers(prog) as w:
        with Tool("klockstat", "-j", "-i", 1, "-p", w.pid, *args) as tool:
            w.go()
            records, seen = read_until(
                tool, lambda rs: all(pipe_write_rows(rs, k) for k in kinds))
            out, err, rc = tool.stop()
    records += json_lines(out)
    assert seen, (records[-10:], err)
    assert rc == 0, err
    return records, err, w.pid


@pytest.mark.kernel
def test_tracepoints_show_pipe_write_waits(prog):
    """Linux 5.19+: waits from lock:contention_begin/end. Hold times come
    from kernel functions where the kernel traces them, else a note says
    why there are none."""
    if not has_ksym("__traceiter_contention_begin"):
        pytest.skip("no lock:contention_begin tracepoint (Linux 5.19+): "
                    "test_kernel_functions_show_pipe_write_waits_and_holds")
    holds = kernel_has("fentry") or kernel_has("kprobe")
    records, err, pid = trace_writers(prog, kinds=("wait", "hold") if holds else ("wait",))
    assert err == ""
    notes = [r for r in records if r["type"] == "note"]
    if holds:
        assert notes == []
        assert_sane(pipe_write_rows(records, "hold")[0], pid)
    else:
        assert records[0] == notes[0] and len(notes) == 1
        assert notes[0]["note"].startswith("no hold times: they need kernel functions ("), notes
        assert not [r for r in records if r["type"] == "lock" and r["kind"] == "hold"]
    assert_sane(pipe_write_rows(records)[0], pid)
    assert {r["max_pid"] for r in records if r["type"] == "lock"} == {pid}
    assert loss_record(records) == {"type": "loss", "events_lost": 0, "map_inserts_failed": 0}


@pytest.mark.kernel
def test_kernel_functions_show_pipe_write_waits_and_holds(prog):
    """Before Linux 5.19: waits are mutex_lock calls, holds from its return
    to mutex_unlock, both by kernel functions."""
    if has_ksym("__traceiter_contention_begin"):
        pytest.skip("this kernel has lock:contention_begin: "
                    "test_tracepoints_show_pipe_write_waits")
    if not (kernel_has("fentry") or kernel_has("kprobe")):
        pytest.skip("this kernel traces no kernel functions")
    records, err, pid = trace_writers(prog, kinds=("wait", "hold"))
    assert err == ""
    assert not [r for r in records if r["type"] == "note"]
    assert_sane(pipe_write_rows(records)[0], pid)
    assert_sane(pipe_write_rows(records, "hold")[0], pid)
    assert loss_record(records) == {"type": "loss", "events_lost": 0, "map_inserts_failed": 0}


# rwsem_target's modes: the callers of the lock calls they make.
RWSEM_CALLERS = {
    "mmap": re.compile(r"vm_mmap_pgoff|__vm_munmap"),
    "proc": re.compile(r"lock_trace|proc_pid_syscall"),
}


@pytest.mark.kernel
@pytest.mark.parametrize("mode", RWSEM_CALLERS)
def test_rwsem_and_killable_locks_have_holds(rwsem_prog, mode):
    """Locks other than mutex_lock's: threads that mmap and munmap hold
    their mm's mmap_lock for writing (down_write_killable to up_write);
    threads that read /proc/self/syscall hold the exec update lock
    (mutex_lock_killable to mutex_unlock before 5.11, down_read_killable
    to up_read since). Hold rows come with those callers; without the
    lock:contention_* tracepoints (waits from kernel functions, every
    call that takes a lock) wait rows too."""
    if not (kernel_has("fentry") or kernel_has("kprobe")):
        pytest.skip("hold times need kernel functions, which this kernel cannot "
                    "trace (make check-vm runs it under other kernels)")
    caller = RWSEM_CALLERS[mode]
    kinds = ("hold",) if has_ksym("__traceiter_contention_begin") else ("hold", "wait")
    with Writers(rwsem_prog, mode) as w:
        with Tool("klockstat", "-j", "-i", 1, "-p", w.pid) as tool:
            w.go()
            records, seen = read_until(
                tool, lambda rs: all(caller_rows(rs, k, caller) for k in kinds))
            out, err, rc = tool.stop()
    records += json_lines(out)
    assert seen, (records[-10:], err)
    assert (rc, err) == (0, ""), err
    for kind in kinds:
        row = caller_rows(records, kind, caller)[-1]
        assert set(row) == ROW_KEYS, row
        assert row["max_ns"] >= row["avg_ns"] > 0, row
        assert (row["max_pid"], row["max_comm"]) == (w.pid, "tk-rwsem"), row
        assert re.fullmatch(rf"({caller.pattern})\+0x[0-9a-f]+", row["stack"][0]), row
    assert {r["max_pid"] for r in records if r["type"] == "lock"} == {w.pid}
    assert loss_record(records) == {"type": "loss", "events_lost": 0, "map_inserts_failed": 0}


def test_caller_filter_leaves_other_callers_out(prog):
    """-c vfs_ matches no caller of the writers' waits (vfs_write is the
    caller's caller): no rows, while an unfiltered klockstat beside it
    sees pipe_write; -c with pipe_write's prefix keeps only pipe_write."""
    with Writers(prog) as w:
        with Tool("klockstat", "-j", "-p", w.pid, "-c", "vfs_") as none, \
                Tool("klockstat", "-j", "-p", w.pid, "-c", "anon_pipe_w") as anon, \
                Tool("klockstat", "-j", "-p", w.pid, "-c", "pipe_w") as plain, \
                Tool("klockstat", "-j", "-i", 1, "-p", w.pid) as every:
            w.go()
            records, seen = read_until(every, pipe_write_rows)
            outs = [t.stop() for t in (none, anon, plain, every)]
    assert seen, records[-10:]
    assert all(rc == 0 for _, _, rc in outs), outs
    none_records, anon_records, plain_records, _ = (json_lines(o) for o, _, _ in outs)
    assert [r["type"] for r in none_records if r["type"] != "note"] == ["loss"]
    # One of the two prefixes names this kernel's pipe_write.
    prefixed = [[r for r in rs if r["type"] == "lock"] for rs in (anon_records, plain_records)]
    assert any(prefixed), outs
    for rows, prefix in zip(prefixed, ("anon_pipe_w", "pipe_w")):
        assert all(r["caller"].startswith(prefix) for r in rows), rows


def test_lock_filter_and_per_thread(prog):
    """-L ADDRESS keeps that lock's waits only: the pipe's mutex, found by
    a first run, gives pipe_write rows all of that lock; -L with another
    address (just past the pipe's mutex) gives none of the writers'. -P
    gives a row per writer thread, by tid and comm."""
    with Writers(prog) as w:
        with Tool("klockstat", "-j", "-i", 1, "-p", w.pid) as first:
            w.go()
            records, seen = read_until(first, pipe_write_rows)
            first.stop()
        assert seen, records[-10:]
        lock = pipe_write_rows(records)[0]["max_lock"]
        tids = {int(t) for t in os.listdir(f"/proc/{w.pid}/task")} - {w.pid}
        other_lock = hex(int(lock, 16) + 0x40)
        with Tool("klockstat", "-j", "-p", w.pid, "-L", other_lock) as other, \
                Tool("klockstat", "-j", "-i", 1, "-p", w.pid, "-P") as threads, \
                Tool("klockstat", "-j", "-i", 1, "-p", w.pid, "-L", lock) as this:
            records, seen = read_until(this, pipe_write_rows)
            by_thread, seen_threads = read_until(
                threads, lambda rs: any(r["type"] == "lock" and r["comm"] == "tk-lockw"
                                        for r in rs))
            outs = [t.stop() for t in (other, threads, this)]
    assert seen and seen_threads and all(rc == 0 for _, _, rc in outs), outs
    records += json_lines(outs[2][0])
    assert {r["max_lock"] for r in records if r["type"] == "lock"} == {lock}
    assert [r["type"] for r in json_lines(outs[0][0]) if r["type"] != "note"] == ["loss"]
    by_thread += json_lines(outs[1][0])
    rows = [r for r in by_thread if r["type"] == "lock"]
    assert rows and all(set(r) == ROW_KEYS - {"caller", "stack"} | {"tid", "comm"}
                        for r in rows), rows
    assert all(r["tid"] == r["max_tid"] and r["comm"] == r["max_comm"] for r in rows), rows
    assert {r["tid"] for r in rows if r["comm"] == "tk-lockw"} <= tids


def test_text_tables(prog):
    """libbpf-tools' table: Caller, Avg Wait, Count, Max Wait, Total Wait;
    -s 3 adds the caller's callers and the longest wait's task and lock."""
    with Writers(prog) as w:
        with Tool("klockstat", "-s", 3, "-p", w.pid) as text, \
                Tool("klockstat", "-j", "-i", 1, "-p", w.pid) as every:
            w.go()
            _, seen = read_until(every, pipe_write_rows)
            out, err, rc = text.stop()
            every.stop()
    assert seen and rc == 0
    lines = out.splitlines()
    assert lines[:2] == ["", "                               Caller  Avg Wait    Count   "
                         "Max Wait   Total Wait"]
    # libbpf-tools' times: "15 ns", "1.2 us", "3.4 ms", "1.5 s ", "2.0 m ", "1.0 h "
    t = r"(?:\d+ ns|[0-9.]+ (?:us|ms|s |m |h ))"
    row = rf" +(anon_)?pipe_write\+0x[0-9a-f]+ +{t} +\d+ +{t} +{t}"
    first = next(i for i, line in enumerate(lines) if re.fullmatch(row, line))
    # new_sync_write before 5.11 (VM_SCOPE=all)
    assert re.fullmatch(r" +(vfs_write|new_sync_write)\+0x[0-9a-f]+", lines[first + 1]), lines
    assert re.fullmatch(rf" +Max PID {w.pid}, COMM tk-lockw, Lock no-ksym \(0x[0-9a-f]+\)",
                        lines[first + 3]), lines


# bcc's klockstat's kernel functions: lock calls, then unlocks.
KF_LOCKS = ["mutex_lock", "mutex_lock_interruptible", "mutex_lock_killable", "mutex_trylock",
            "down_read", "down_read_interruptible", "down_read_killable", "down_read_trylock",
            "down_write", "down_write_killable", "down_write_trylock"]
KF_UNLOCKS = ["mutex_unlock", "up_read", "up_write"]


@pytest.mark.kernel
def test_dry_run():
    """--dry-run names the probes of the way chosen: the tracepoints (with
    the lock and unlock functions where kernel functions can be traced),
    or the kernel functions alone: each function this kernel has (entry
    and return of a lock call), none it lacks."""
    r = run("klockstat", "--dry-run", "-j")
    assert r.returncode == 0, r.stderr
    probes = {p["probe"]: p["method"] for p in json_lines(r.stdout) if p["type"] == "probe"}
    tp = {"contention_begin", "contention_end"}
    kf = {f"kf_{f}_{end}" for f in KF_LOCKS if has_ksym(f) for end in ("enter", "exit")} | \
        {f"kf_{f}" for f in KF_UNLOCKS if has_ksym(f)}
    assert {"kf_mutex_lock_enter", "kf_up_write"} <= kf
    assert set(probes) in (tp, tp | kf, kf), probes
    assert all(probes[p] in ("tp_btf", "raw_tp") for p in tp & set(probes)), probes


@pytest.mark.parametrize("args, message", [
    (["-S", "acq_min"], "invalid -S/--sort value 'acq_min': expected acq_max"),
    (["-S", "acq_max,bogus"], "invalid -S/--sort value 'acq_max,bogus'"),
    (["-s", "0"], "-s/--stacks"),
    (["-n", "x"], "-n/--locks"),
    (["-i", "0"], "-i/--interval"),
    (["-P", "-s", "2"], "options -P/--per-thread and -s/--stacks cannot be combined"),
    (["-L", "0xzz"], "invalid -L/--lock value '0xzz'"),
    (["-L", "no_such_lock_tk"], "invalid -L/--lock value 'no_such_lock_tk': no such kernel symbol"),
    (["5"], "unexpected argument '5'"),
    (["-R"], "bcc's option '-R' is not in tracekit"),
])
def test_usage_errors(args, message):
    r = run("klockstat", *args)
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr.startswith("klockstat: ") and r.stderr.count("\n") == 1, r.stderr
    assert message in r.stderr, r.stderr
