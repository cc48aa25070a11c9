"""syscount: exact counts of the syscalls a helper process makes."""
import contextlib
import os
import re
import subprocess
import sys
import time
from collections import Counter

import pytest

from conftest import (Tool, cgroup2_root, cgroup_of, in_syscall, json_lines, loss_record,
                      only_child, run, tool_path)

UNKNOWN_NR = 987     # no syscall has this number: ENOSYS, printed as "987"
OTHER_NR = 100000    # beyond syscount's slots: counted as "[other]"

HELPER_C = r"""
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* worker OK FAIL UNKNOWN OTHER: wait for a byte on stdin; make OK
 * getppid() calls, FAIL openat() calls failing with ENOENT, UNKNOWN
 * calls of syscall %d and OTHER of syscall %d (ENOSYS); write one byte;
 * wait for stdin to close. worker nrs: print the numbers it uses. */
int main(int argc, char **argv)
{
	long n[4] = { 0 }, i;
	char c;

	if (argc == 2 && !strcmp(argv[1], "nrs")) {
		printf("read=%%d write=%%d getppid=%%d openat=%%d\n", SYS_read,
		       SYS_write, SYS_getppid, SYS_openat);
		return 0;
	}
	for (i = 0; i < 4 && i + 1 < argc; i++)
		n[i] = atol(argv[i + 1]);
	if (read(0, &c, 1) != 1)
		return 1;
	for (i = 0; i < n[0]; i++)
		syscall(SYS_getppid);
	for (i = 0; i < n[1]; i++)
		syscall(SYS_openat, AT_FDCWD, "/nonexistent-tracekit/x", O_RDONLY);
	for (i = 0; i < n[2]; i++)
		syscall(%d);
	for (i = 0; i < n[3]; i++)
		syscall(%d);
	if (write(1, "d", 1) != 1)
		return 1;
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
""" % (UNKNOWN_NR, OTHER_NR, UNKNOWN_NR, OTHER_NR)

OK, FAIL, UNKNOWN = 1500, 700, 300
COUNT_HEADER = "SYSCALL                   COUNT"
LATENCY_HEADER = "SYSCALL                   COUNT        TIME (us)"
STRACE_HEADER = "% time     seconds  usecs/call     calls    errors syscall"
STRACE_DASHES = "------ ----------- ----------- --------- --------- ----------------"
METHODS = ["tp_btf", "raw_tp", "tp"]


@pytest.fixture(scope="module")
def helper(tmp_path_factory):
    d = tmp_path_factory.mktemp("syscount")
    src, exe = d / "sc_worker.c", d / "sc_worker"
    src.write_text(HELPER_C)
    subprocess.run(["cc", "-O2", "-Wall", "-Werror", "-o", str(exe), str(src)],
                   check=True)
    out = subprocess.run([str(exe), "nrs"], capture_output=True, text=True,
                         check=True).stdout
    nrs = {k: int(v) for k, v in (kv.split("=") for kv in out.split())}
    return str(exe), nrs


def blocked_in_read(pid, read_nr):
    """Wait until pid sleeps in read(): every syscall it made before has
    returned, so a tracer attached now sees exactly what comes next."""
    if in_syscall(pid, [read_nr], timeout=10):
        return
    pytest.fail(f"worker {pid} never blocked in read()")


# A parent for --ppid: it runs its argv and waits, blocked in wait4.
PARENT = "import subprocess, sys; sys.exit(subprocess.call(sys.argv[1:]))"



class Worker:
    """The helper, started and blocked before the tracer starts. go() lets
    it make its syscalls and returns once it blocks again: inside the
    traced window it makes the end of one read(), the calls asked for, one
    write(), and the start of a read() that ends after the tracer.
    with_parent: run it under a parent of its own (parent_pid), whose
    only child it is."""

    def __init__(self, helper, ok=OK, fail=FAIL, unknown=UNKNOWN, other=0,
                 with_parent=False):
        exe, self.nrs = helper
        argv = [exe, str(ok), str(fail), str(unknown), str(other)]
        if with_parent:
            argv = [sys.executable, "-c", PARENT] + argv
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.pid = only_child(self.proc.pid) if with_parent else self.proc.pid
        self.parent_pid = self.proc.pid
        blocked_in_read(self.pid, self.nrs["read"])

    def go(self):
        self.proc.stdin.write(b"g")
        self.proc.stdin.flush()
        assert self.proc.stdout.read(1) == b"d"
        blocked_in_read(self.pid, self.nrs["read"])

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def traced(helper, *args, env=None, **worker):
    """Run syscount while the worker makes its syscalls; its output."""
    with Worker(helper, **worker) as w:
        with Tool("syscount", *[a if a != "PID" else w.pid for a in args], env=env) as t:
            w.go()
            out, err, rc = t.stop()
    assert rc == 0, err
    return out, err, w


def table(header, rows):
    """libbpf-tools' layout: "%-22s %8s"."""
    return header + "\n" + "".join(f"{name:<22} {count:>8}\n" for name, count in rows)


# (name, count, errors) of the worker's syscalls in counting mode, in
# syscount's order: by count, then by number.
def counted(nrs):
    rows = [("getppid", OK, 0), ("openat", FAIL, FAIL), (str(UNKNOWN_NR), UNKNOWN, UNKNOWN),
            ("read", 1, 0), ("write", 1, 0)]
    nr = dict(nrs, **{str(UNKNOWN_NR): UNKNOWN_NR})
    return sorted(rows, key=lambda r: (-r[1], nr[r[0]])), nr


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.kernel
def test_counts_text(helper, method):
    out, err, w = traced(helper, "-p", "PID", env={"TRACEKIT_ATTACH": method})
    rows, _ = counted(w.nrs)
    assert out == table(COUNT_HEADER, [(n, c) for n, c, _ in rows])
    assert err == ""


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.kernel
def test_counts_json(helper, method):
    out, err, w = traced(helper, "-j", "-p", "PID", env={"TRACEKIT_ATTACH": method})
    rows, nr = counted(w.nrs)
    records = json_lines(out)
    assert records[:-1] == [{"type": "syscall", "syscall": n, "nr": nr[n], "count": c,
                             "errors": e} for n, c, e in rows]
    assert loss_record(records) == {"type": "loss", "events_lost": 0,
                                    "map_inserts_failed": 0}
    assert err == ""


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.kernel
def test_unfiltered_counts_unknown_and_other_numbers(helper, method):
    """No filter: the lean program. Nothing else on the machine calls
    these two numbers, so their counts are exact."""
    out, _, _ = traced(helper, "-j", "-T", "100000", env={"TRACEKIT_ATTACH": method},
                       ok=0, fail=0, unknown=UNKNOWN, other=250)
    rows = {r["syscall"]: r for r in json_lines(out) if r["type"] == "syscall"}
    assert rows[str(UNKNOWN_NR)] == {"type": "syscall", "syscall": str(UNKNOWN_NR),
                                     "nr": UNKNOWN_NR, "count": UNKNOWN, "errors": UNKNOWN}
    assert rows["[other]"] == {"type": "syscall", "syscall": "[other]", "nr": None,
                               "count": 250, "errors": 250}


@pytest.mark.kernel
def test_failures_only(helper):
    out, _, _ = traced(helper, "-x", "-p", "PID")
    assert out == table(COUNT_HEADER, [("openat", FAIL), (str(UNKNOWN_NR), UNKNOWN)])


@pytest.mark.parametrize("value", ["ENOENT", "enoent", "2"])
@pytest.mark.kernel
def test_errno_filter(helper, value):
    out, _, w = traced(helper, "-j", "-e", value, "-p", "PID")
    records = json_lines(out)
    assert records[:-1] == [{"type": "syscall", "syscall": "openat",
                             "nr": w.nrs["openat"], "count": FAIL, "errors": FAIL}]
    loss_record(records)


def test_errno_filter_other_errno(helper):
    out, _, _ = traced(helper, "-e", "ENOSYS", "-p", "PID")
    assert out == table(COUNT_HEADER, [(str(UNKNOWN_NR), UNKNOWN)])
    out, _, _ = traced(helper, "-e", "EACCES", "-p", "PID")
    assert out == COUNT_HEADER + "\n"


def test_top(helper):
    out, _, _ = traced(helper, "-T", "2", "-p", "PID")
    assert out == table(COUNT_HEADER, [("getppid", OK), ("openat", FAIL)])


def test_time_option_stays_long(helper):
    out, _, _ = traced(helper, "--time", "--top", "1", "-p", "PID")
    lines = out.splitlines()
    assert re.fullmatch(r"\[\d\d:\d\d:\d\d\]", lines[0])
    assert lines[1:] == [COUNT_HEADER, f"{'getppid':<22} {OK:>8}"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.kernel
def test_per_process(helper, method):
    total = OK + FAIL + UNKNOWN + 2
    out, err, w = traced(helper, "-P", "-p", "PID", env={"TRACEKIT_ATTACH": method})
    assert out == ("PID    COMM               COUNT\n"
                   f"{w.pid:<6} {'sc_worker':<15} {total:>8}\n")
    assert err == ""
    out, _, w = traced(helper, "-P", "-j", "-p", "PID")
    records = json_lines(out)
    assert records[:-1] == [{"type": "process", "pid": w.pid, "comm": "sc_worker",
                             "count": total, "errors": FAIL + UNKNOWN}]
    loss_record(records)


@pytest.mark.parametrize("option", ["-p", "--ppid", "-c"])
@pytest.mark.kernel
def test_pid_list_and_ppid(helper, option):
    """-p takes bcc's list (1,2,3); --ppid (bcc's -c) only the children
    of a process. Three workers make different counts; those left out
    must not show."""
    with Worker(helper, ok=100, fail=0, unknown=0) as a, \
         Worker(helper, ok=200, fail=0, unknown=0) as b, \
         Worker(helper, ok=400, fail=0, unknown=0, with_parent=True) as c:
        if option == "-p":
            value, wanted = f"{a.pid},{c.pid}", [(c, 402), (a, 102)]
        else:
            value, wanted = c.parent_pid, [(c, 402)]
        with Tool("syscount", "-P", "-j", option, value) as t:
            for w in (a, b, c):
                w.go()
            out, err, rc = t.stop()
    assert rc == 0, err
    records = json_lines(out)
    assert records[:-1] == [{"type": "process", "pid": w.pid, "comm": "sc_worker",
                             "count": n, "errors": 0} for w, n in wanted]
    loss_record(records)


@pytest.mark.parametrize("option", ["-t", "--tid"])
@pytest.mark.kernel
def test_tid_letter(helper, option):
    """bcc's -t TID: the worker's one thread, not another worker."""
    with Worker(helper, ok=100, fail=0, unknown=0) as a, \
         Worker(helper, ok=200, fail=0, unknown=0) as b:
        with Tool("syscount", "-P", "-j", option, b.pid) as t:
            a.go()
            b.go()
            out, err, rc = t.stop()
    assert rc == 0, err
    records = json_lines(out)
    assert records[:-1] == [{"type": "process", "pid": b.pid, "comm": "sc_worker",
                             "count": 202, "errors": 0}]


def test_cgroup_keeps_its_long_name(helper):
    """-c is bcc's --ppid; the cgroup filter stays as --cgroup: a worker
    moved into a cgroup of the test's own counts, one outside does not."""
    path = os.path.join(cgroup2_root(), f"tk-syscount-test-{os.getpid()}")
    os.mkdir(path)
    try:
        with Worker(helper, ok=100, fail=0, unknown=0) as a, \
             Worker(helper, ok=200, fail=0, unknown=0) as b:
            with open(os.path.join(path, "cgroup.procs"), "w") as f:
                f.write(str(a.pid))
            with Tool("syscount", "-P", "-j", "--cgroup", path) as t:
                a.go()
                b.go()
                out, err, rc = t.stop()
    finally:
        os.rmdir(path)
    assert rc == 0, err
    records = json_lines(out)
    assert records[:-1] == [{"type": "process", "pid": a.pid, "comm": "sc_worker",
                             "count": 102, "errors": 0}]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.kernel
def test_syscall_filter_by_name_and_number(helper, method):
    """--syscall NAME[,NAME]: only those are counted, by name or number."""
    env = {"TRACEKIT_ATTACH": method}
    out, err, w = traced(helper, "--syscall", "getppid,openat", "-p", "PID", env=env)
    assert out == table(COUNT_HEADER, [("getppid", OK), ("openat", FAIL)])
    assert err == ""
    out, err, w = traced(helper, "-j", "--syscall", f"{UNKNOWN_NR},write", "-p", "PID",
                         env=env)
    records = json_lines(out)
    assert records[:-1] == [
        {"type": "syscall", "syscall": str(UNKNOWN_NR), "nr": UNKNOWN_NR,
         "count": UNKNOWN, "errors": UNKNOWN},
        {"type": "syscall", "syscall": "write", "nr": w.nrs["write"], "count": 1,
         "errors": 0}]
    loss_record(records)


def test_syscall_filter_everyone_and_with_latency(helper):
    """No task filter: the BPF filter alone leaves one row, exact since
    only the worker calls that number; with -L the entry is filtered too."""
    out, _, _ = traced(helper, "--syscall", str(UNKNOWN_NR))
    assert out == table(COUNT_HEADER, [(str(UNKNOWN_NR), UNKNOWN)])
    out, _, _ = traced(helper, "-L", "--syscall", f"openat,{UNKNOWN_NR}", "-p", "PID")
    rows = latency_rows(out, LATENCY_HEADER)
    assert {(n, c) for n, c, _ in rows} == {("openat", FAIL), (str(UNKNOWN_NR), UNKNOWN)}


def latency_rows(out, header):
    lines = out.splitlines()
    assert lines[0] == header
    rows = []
    for line in lines[1:]:
        m = re.fullmatch(r"(\S+) +(\d+) +(\d+\.\d{3})", line)
        assert m and len(line) == len(header), line
        rows.append((m[1], int(m[2]), float(m[3])))
    times = [r[2] for r in rows]
    assert times == sorted(times, reverse=True)  # by time
    assert all(t > 0 for t in times)
    return rows


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.kernel
def test_latency(helper, method):
    """Only syscalls whose entry was seen count: not the read() that was
    in progress when tracing began."""
    out, err, _ = traced(helper, "-L", "-p", "PID", env={"TRACEKIT_ATTACH": method})
    rows = latency_rows(out, LATENCY_HEADER)
    assert {(n, c) for n, c, _ in rows} == {("getppid", OK), ("openat", FAIL),
                                           (str(UNKNOWN_NR), UNKNOWN), ("write", 1)}
    assert err == ""


def test_latency_ms_and_json(helper):
    out, _, _ = traced(helper, "-L", "-m", "-p", "PID")
    rows = latency_rows(out, LATENCY_HEADER.replace("(us)", "(ms)"))
    assert {(n, c) for n, c, _ in rows} == {("getppid", OK), ("openat", FAIL),
                                           (str(UNKNOWN_NR), UNKNOWN), ("write", 1)}
    out, _, w = traced(helper, "-L", "-j", "-p", "PID")
    records = json_lines(out)
    loss_record(records)
    got = {r["syscall"]: r for r in records[:-1]}
    assert set(got) == {"getppid", "openat", str(UNKNOWN_NR), "write"}
    for name, count, errors in [("getppid", OK, 0), ("openat", FAIL, FAIL), ("write", 1, 0)]:
        r = got[name]
        assert (r["type"], r["nr"], r["count"], r["errors"]) == ("syscall", w.nrs[name],
                                                                 count, errors)
        assert isinstance(r["total_ns"], int) and r["total_ns"] > 0


def summary_table(lines, whole=True):
    """strace -c's table, from its header to its total line, checked: the
    column widths, rows by time, and (whole: no -T) percentages and
    seconds that add up. Its rows and its total as (syscall, calls,
    errors, % time, seconds)."""
    assert lines[:2] == [STRACE_HEADER, STRACE_DASHES]
    assert lines[-2] == STRACE_DASHES
    row = re.compile(r"( *\d+\.\d\d) ( *\d+\.\d{6}) ( *\d+) ( *\d+) ( *\d*) (\S+)")
    parsed = []
    for line in lines[2:-2] + lines[-1:]:
        m = row.fullmatch(line)
        assert m and [len(g) for g in m.groups()[:5]] == [6, 11, 11, 9, 9], line
        parsed.append((m[6], int(m[4]), int(m[5].strip() or 0), float(m[1]), float(m[2])))
    total = parsed.pop()
    assert total[0] == "total" and total[3] == 100.0
    assert [p[4] for p in parsed] == sorted((p[4] for p in parsed), reverse=True)
    if whole:
        assert abs(sum(p[3] for p in parsed) - 100) < 0.02 * len(parsed)
        assert abs(sum(p[4] for p in parsed) - total[4]) < 2e-6 * len(parsed)
    return parsed, total


def test_summary(helper):
    out, err, _ = traced(helper, "-S", "-p", "PID")
    parsed, total = summary_table(out.splitlines())
    assert {p[:3] for p in parsed} == {("getppid", OK, 0), ("openat", FAIL, FAIL),
                                      (str(UNKNOWN_NR), UNKNOWN, UNKNOWN), ("write", 1, 0)}
    assert total[:4] == ("total", OK + FAIL + UNKNOWN + 1, FAIL + UNKNOWN, 100.0)
    assert err == ""


def test_interval_json_ends_by_itself(helper):
    with Worker(helper) as w:
        t = Tool("syscount", "-j", "-i", "1", "-d", "2", "-p", w.pid).start()
        start = time.monotonic()
        w.go()
        out, err, rc = t.wait(timeout=30)
        elapsed = time.monotonic() - start
    assert rc == 0, err
    assert elapsed < 5
    records = json_lines(out)
    loss_record(records)
    rows, _ = counted(w.nrs)
    sums = {}
    for r in records[:-1]:
        assert r["type"] == "syscall" and r["interval"] in (1, 2), r
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", r["time"])
        sums[r["syscall"]] = sums.get(r["syscall"], 0) + r["count"]
    assert sums == {n: c for n, c, _ in rows}


@pytest.mark.parametrize("args", [["-i", "1", "-d", "2"], ["1", "2"]])
def test_interval_text_blocks(helper, args):
    with Worker(helper) as w:
        t = Tool("syscount", "-p", w.pid, *args).start()
        w.go()
        out, err, rc = t.wait(timeout=30)
    assert rc == 0, err
    blocks = out.split("\n\n")
    assert blocks[-1] == ""  # each block ends with a blank line
    assert len(blocks) == 3, out
    for b in blocks[:2]:
        lines = b.splitlines()
        assert re.fullmatch(r"\[\d\d:\d\d:\d\d\]", lines[0])
        assert lines[1] == COUNT_HEADER
    rows, _ = counted(w.nrs)
    total = {}
    for b in blocks[:2]:
        for line in b.splitlines()[2:]:
            name, count = line.split()
            total[name] = total.get(name, 0) + int(count)
    assert total == {n: c for n, c, _ in rows}


def test_list(helper):
    _, nrs = helper
    r = run("syscount", "-l")
    assert r.returncode == 0 and r.stderr == ""
    lines = r.stdout.splitlines()
    assert f"{nrs['openat']:3d}: openat" in lines
    assert f"{nrs['read']:3d}: read" in lines
    assert len(lines) == len(set(lines)) > 300


@pytest.mark.parametrize("args,words", [
    (["-e", "ENOPE"], ["--errno", "'ENOPE'"]),
    (["-e", "0"], ["--errno", "'0'"]),
    (["-T", "0"], ["--top", "'0'"]),
    (["--top", "x"], ["--top", "'x'"]),
    (["--bogus"], ["'--bogus'"]),
    (["-Q"], ["'-Q'"]),
    (["-i", "x"], ["--interval", "'x'"]),
    (["-i", "-1"], ["--interval", "'-1'"]),
    (["0"], ["interval", "'0'"]),
    (["1", "0"], ["count", "'0'"]),
    (["-S", "-P"], ["--summary", "--process"]),
    (["--syscall", "nosuchcall"], ["--syscall", "'nosuchcall'", "syscount -l"]),
    (["--syscall", "read,,write"], ["--syscall", "'read,,write'", "syscount -l"]),
    (["--syscall", ""], ["--syscall", "''"]),
    (["--syscall", "1022"], ["--syscall", "'1022'"]),
    (["--syscall"], ["'--syscall'", "needs a value"]),
    (["-c", "x"], ["--ppid", "'x'"]),
    (["-c", "0"], ["--ppid", "'0'"]),
    (["-c", "/sys/fs/cgroup"], ["--ppid", "'/sys/fs/cgroup'", "--cgroup PATH"]),
    (["-t", "x"], ["--tid", "'x'"]),
    (["-t"], ["'-t'", "needs a value"]),
])
def test_usage_errors(args, words):
    r = run("syscount", *args)
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.endswith("\n"), r.stderr
    assert r.stderr.startswith("syscount: ")
    for w in words:
        assert w in r.stderr, r.stderr


# --print-cgroup. Worker A runs in a cgroup the test makes and makes the
# usual calls; worker B, outside it, makes fewer (so that no two rows
# tie but read()'s and write()'s).
B_OK, B_UNKNOWN = 200, 50


@contextlib.contextmanager
def made_cgroup(tag):
    """A cgroup v2 of the test's own, removed at the end; its directory
    and its path as --print-cgroup shows it."""
    name = f"tk-syscount-print-cgroup-{os.getpid()}-{tag}"
    path = os.path.join(cgroup2_root(), name)
    os.mkdir(path)
    try:
        yield path, "/" + name
    finally:
        os.rmdir(path)


def move_to(cgroup_dir, pid):
    with open(os.path.join(cgroup_dir, "cgroup.procs"), "w") as f:
        f.write(str(pid))


def cgroup_id(path):
    """The id BPF sees: the inode number of the cgroup's directory."""
    return os.stat(cgroup2_root() + path.rstrip("/")).st_ino


def traced_in_cgroup(helper, *args, env=None, b_apart=False, wait=False):
    """Run syscount ARGS (PIDS: both workers') while A, moved into a cgroup
    of the test's, and B make their calls; b_apart: B in a second one,
    else in the test's own; wait: until syscount ends by itself. Its
    output, and A's and B's (pid, cgroup path)."""
    with made_cgroup("a") as (cg_dir, cg), made_cgroup("b") as (b_dir, _), \
         Worker(helper) as a, Worker(helper, ok=B_OK, fail=0, unknown=B_UNKNOWN) as b:
        move_to(cg_dir, a.pid)
        if b_apart:
            move_to(b_dir, b.pid)
        assert cgroup_of(a.pid) == cg
        pids = f"{a.pid},{b.pid}"
        with Tool("syscount", *[pids if x == "PIDS" else x for x in args], env=env) as t:
            a.go()
            b.go()
            out, err, rc = t.wait() if wait else t.stop()
        workers = [(a.pid, cg), (b.pid, cgroup_of(b.pid))]
        ids = {path: cgroup_id(path) for _, path in workers}
    assert rc == 0, err
    return out, err, workers, ids


def rows_by_cgroup(nrs, workers, ids):
    """(cgroup, syscall, count, errors) of A's and B's calls, in
    syscount's order: by count, then by number, then by cgroup id."""
    (_, cg_a), (_, cg_b) = workers
    a = [("getppid", OK, 0), ("openat", FAIL, FAIL), (str(UNKNOWN_NR), UNKNOWN, UNKNOWN)]
    b = [("getppid", B_OK, 0), (str(UNKNOWN_NR), B_UNKNOWN, B_UNKNOWN)]
    both = [("read", 1, 0), ("write", 1, 0)]
    rows = [(cg_a, *r) for r in a + both] + [(cg_b, *r) for r in b + both]
    nr = dict(nrs, **{str(UNKNOWN_NR): UNKNOWN_NR})
    return sorted(rows, key=lambda r: (-r[2], nr[r[1]], ids[r[0]])), nr


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.kernel
def test_print_cgroup_counts_by_cgroup_and_syscall(helper, method):
    """A CGROUP column last: each cgroup's own exact counts."""
    out, err, workers, ids = traced_in_cgroup(helper, "--print-cgroup", "-p", "PIDS",
                                              env={"TRACEKIT_ATTACH": method})
    rows, _ = rows_by_cgroup(helper[1], workers, ids)
    assert out == (COUNT_HEADER + " CGROUP\n" +
                   "".join(f"{n:<22} {c:>8} {cg}\n" for cg, n, c, _ in rows))
    assert err == ""


def test_print_cgroup_json_and_top(helper):
    out, err, workers, ids = traced_in_cgroup(helper, "-j", "--print-cgroup", "-p", "PIDS")
    rows, nr = rows_by_cgroup(helper[1], workers, ids)
    records = json_lines(out)
    assert records[:-1] == [{"type": "syscall", "cgroup": cg, "syscall": n, "nr": nr[n],
                             "count": c, "errors": e} for cg, n, c, e in rows]
    assert loss_record(records) == {"type": "loss", "events_lost": 0,
                                    "map_inserts_failed": 0}
    assert err == ""
    out, _, workers, ids = traced_in_cgroup(helper, "-T", "4", "--print-cgroup", "-p", "PIDS")
    rows, _ = rows_by_cgroup(helper[1], workers, ids)
    assert out == (COUNT_HEADER + " CGROUP\n" +
                   "".join(f"{n:<22} {c:>8} {cg}\n" for cg, n, c, _ in rows[:4]))


def test_print_cgroup_without_task_filter(helper):
    """No -p: every task of the machine, counted by cgroup. Other runs of
    these tests may call this number too, but not in these cgroups."""
    out, _, workers, _ = traced_in_cgroup(helper, "-j", "--print-cgroup",
                                          "--syscall", str(UNKNOWN_NR), b_apart=True)
    (_, cg_a), (_, cg_b) = workers
    assert [r for r in json_lines(out)[:-1] if r["cgroup"] in (cg_a, cg_b)] == [
        {"type": "syscall", "cgroup": cg, "syscall": str(UNKNOWN_NR), "nr": UNKNOWN_NR,
         "count": n, "errors": n} for cg, n in [(cg_a, UNKNOWN), (cg_b, B_UNKNOWN)]]


def test_print_cgroup_per_process(helper):
    out, err, workers, _ = traced_in_cgroup(helper, "-P", "--print-cgroup", "-p", "PIDS")
    (pid_a, cg_a), (pid_b, cg_b) = workers
    total_a, total_b = OK + FAIL + UNKNOWN + 2, B_OK + B_UNKNOWN + 2
    assert out == ("PID    COMM               COUNT CGROUP\n"
                   f"{pid_a:<6} {'sc_worker':<15} {total_a:>8} {cg_a}\n"
                   f"{pid_b:<6} {'sc_worker':<15} {total_b:>8} {cg_b}\n")
    assert err == ""
    out, _, workers, _ = traced_in_cgroup(helper, "-P", "-j", "--print-cgroup", "-p", "PIDS")
    (pid_a, cg_a), (pid_b, cg_b) = workers
    assert json_lines(out)[:-1] == [
        {"type": "process", "cgroup": cg_a, "pid": pid_a, "comm": "sc_worker",
         "count": total_a, "errors": FAIL + UNKNOWN},
        {"type": "process", "cgroup": cg_b, "pid": pid_b, "comm": "sc_worker",
         "count": total_b, "errors": B_UNKNOWN}]


def test_print_cgroup_latency(helper):
    """-L: the read() in progress when tracing began is not counted."""
    out, err, workers, ids = traced_in_cgroup(helper, "-L", "--print-cgroup", "-p", "PIDS")
    rows, _ = rows_by_cgroup(helper[1], workers, ids)
    lines = out.splitlines()
    assert lines[0] == LATENCY_HEADER + " CGROUP"
    got = []
    for line in lines[1:]:
        m = re.fullmatch(r"(\S+) +(\d+) +(\d+\.\d{3}) (\S+)", line)
        assert m and len(line) == len(LATENCY_HEADER) + 1 + len(m[4]), line
        got.append((m[4], m[1], int(m[2]), float(m[3])))
    assert sorted(g[:3] for g in got) == sorted(r[:3] for r in rows if r[1] != "read")
    times = [g[3] for g in got]
    assert times == sorted(times, reverse=True) and all(t > 0 for t in times)
    assert err == ""


def test_print_cgroup_summary_table_per_cgroup(helper):
    """-S: strace -c's table for each cgroup, under "cgroup = PATH", the
    one with the most time first; -T limits each table."""
    out, err, workers, _ = traced_in_cgroup(helper, "-S", "--print-cgroup", "-p", "PIDS")
    (_, cg_a), (_, cg_b) = workers
    tables = {}
    for section in out.split("\n\n"):
        title, *lines = section.splitlines()
        assert title.startswith("cgroup = ")
        tables[title[len("cgroup = "):]] = summary_table(lines)
    assert list(tables) == sorted(tables, key=lambda cg: -tables[cg][1][4])
    (rows_a, total_a), (rows_b, total_b) = tables[cg_a], tables[cg_b]
    assert {r[:3] for r in rows_a} == {("getppid", OK, 0), ("openat", FAIL, FAIL),
                                       (str(UNKNOWN_NR), UNKNOWN, UNKNOWN), ("write", 1, 0)}
    assert total_a[1:3] == (OK + FAIL + UNKNOWN + 1, FAIL + UNKNOWN)
    assert {r[:3] for r in rows_b} == {("getppid", B_OK, 0),
                                       (str(UNKNOWN_NR), B_UNKNOWN, B_UNKNOWN), ("write", 1, 0)}
    assert total_b[1:3] == (B_OK + B_UNKNOWN + 1, B_UNKNOWN)
    assert err == ""
    out, _, workers, _ = traced_in_cgroup(helper, "-S", "-T", "1", "--print-cgroup",
                                          "-p", "PIDS")
    for section in out.split("\n\n"):
        rows, _ = summary_table(section.splitlines()[1:], whole=False)
        assert len(rows) == 1
    assert len(out.split("\n\n")) == 2


def test_print_cgroup_names_the_command_cgroup(helper):
    """-- COMMAND runs in tracekit-syscount-PID, beside the cgroup the tool
    was started in: every row is there."""
    exe, _ = helper
    p = subprocess.Popen([tool_path("syscount"), "-j", "-T", "1000", "--print-cgroup", "--",
                          "sh", "-c", f"echo g | {exe} 0 0 {UNKNOWN} 0 >/dev/null"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate(timeout=120)
    assert (p.returncode, err) == (0, "")
    expected = cgroup_of(os.getpid()).rstrip("/") + f"/tracekit-syscount-{p.pid}"
    records = json_lines(out)[:-1]
    assert {r["cgroup"] for r in records} == {expected}
    assert [r["count"] for r in records if r["syscall"] == str(UNKNOWN_NR)] == [UNKNOWN]


def test_print_cgroup_intervals_add_up(helper):
    """Three intervals: the calls all fall in the first ones, and keys
    without calls are deleted from the map between intervals; the
    records of each (cgroup, syscall) add up to its calls exactly."""
    out, err, workers, ids = traced_in_cgroup(helper, "-j", "--print-cgroup", "-p", "PIDS",
                                              "1", "3", wait=True)
    rows, _ = rows_by_cgroup(helper[1], workers, ids)
    records = json_lines(out)
    assert loss_record(records)["map_inserts_failed"] == 0
    sums = Counter()
    for r in records[:-1]:
        assert r["interval"] in (1, 2, 3) and r["count"] > 0, r
        sums[r["cgroup"], r["syscall"]] += r["count"]
    assert sums == {(cg, n): c for cg, n, c, _ in rows}
    assert err == ""
