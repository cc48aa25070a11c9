"""statsnoop end to end: a child makes each stat-family call on a marked
existing file and a marked missing one; the tool must report exactly
those calls with their paths and results."""
import json
import os
import re
import shutil
import subprocess
import uuid

import pytest

from conftest import Tool, json_lines, loss_record, run, syscall_numbers, tool_path

PYTHON = "/usr/bin/python3"

# Each call on argv[1] (exists) and argv[2] (missing) that this
# architecture has (arm64 has no stat or lstat: NUMBERS); argv[3] maps
# each name to its number. Prints "name path result" per call (result: 0
# or -errno), then the pid and the fd.
CHILD = r"""
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
ok, missing = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
nr = json.loads(sys.argv[3])
buf = ctypes.create_string_buffer(512)
def call(name, path, *args):
    if name not in nr:
        return
    ctypes.set_errno(0)
    r = libc.syscall(nr[name], *args)
    print(name, path, r if r >= 0 else -ctypes.get_errno())
for p in (ok, missing):
    s = p.decode()
    call("newstat", s, p, buf)
    call("newlstat", s, p, buf)
    call("newfstatat", s, -100, p, buf, 0)
    call("statx", s, -100, p, 0, 0xfff, buf)
    call("statfs", s, p, buf)
fd = os.open(ok, os.O_RDONLY)
call("newfstat", sys.argv[1], fd, buf)
call("newfstatat", sys.argv[1], fd, b"", buf, 0x1000)   # AT_EMPTY_PATH
print(os.getpid(), fd, flush=True)
"""

# statsnoop's name of each call (the kernel's) -> the C library's.
LIBC_NAMES = {"newstat": "stat", "newlstat": "lstat", "newfstatat": "newfstatat",
              "statx": "statx", "statfs": "statfs", "newfstat": "fstat"}
NUMBERS = {n: syscall_numbers()[c] for n, c in LIBC_NAMES.items() if c in syscall_numbers()}
# The calls made on each path (x86_64: 5, arm64: 3), in the child's order.
PATH_CALLS = [n for n in ("newstat", "newlstat", "newfstatat", "statx", "statfs") if n in NUMBERS]


def child_argv(ok, missing):
    return [PYTHON, "-c", CHILD, ok, missing, json.dumps(NUMBERS)]


class Child:
    def __init__(self, stdout):
        *calls, last = stdout.splitlines()
        self.calls = [(n, p, int(r)) for n, p, r in (c.split() for c in calls)]
        self.pid, self.fd = map(int, last.split())


def stat_calls(ok, missing):
    p = subprocess.run(child_argv(ok, missing), capture_output=True, text=True, check=True)
    return Child(p.stdout)


@pytest.fixture
def paths(tmp_path):
    mark = "tkstat-" + uuid.uuid4().hex[:12]
    ok = tmp_path / mark
    ok.write_text("x")
    return str(ok), str(tmp_path / (mark + "-missing"))


def marked(recs, ok):
    return [r for r in recs if r["type"] == "stat" and r["path"] and ok in r["path"]]


@pytest.mark.kernel
def test_exact_calls_json(paths):
    ok, missing = paths
    with Tool("statsnoop", "-j") as t:
        child = stat_calls(ok, missing)
        out, err, rc = t.stop()
    assert rc == 0, err
    # What the child saw: every call on the file works, on the missing
    # one fails with ENOENT.
    assert [r for _, p, r in child.calls if p == missing] == [-2] * len(PATH_CALLS)
    assert [r for _, p, r in child.calls if p == ok] == [0] * (len(PATH_CALLS) + 2)
    recs = json_lines(out)
    got = [(r["pid"], r["tid"], r["comm"], r["syscall"], r["path"], r["ret"], r.get("error"))
           for r in marked(recs, ok)]
    assert got == [(child.pid, child.pid, "python3", n, p, r, "ENOENT" if r else None)
                   for n, p, r in child.calls]
    fst = [r for r in marked(recs, ok) if r["fd_path"]]
    assert [(r["syscall"], r.get("fd"), r.get("dirfd")) for r in fst] == [
        ("newfstat", child.fd, None), ("newfstatat", None, child.fd)]
    assert loss_record(recs) == {"type": "loss", "events_lost": 0, "map_inserts_failed": 0}


def test_text_columns_sysname(paths):
    ok, missing = paths
    with Tool("statsnoop", "-s") as t:
        child = stat_calls(ok, missing)
        out, err, rc = t.stop()
    assert rc == 0, err
    header, *lines = out.splitlines()
    assert header == "PID     COMM               FD ERR SYSCALL      PATH"
    want = [f"{child.pid:<7} {'python3':<16} {(-1 if r else 0):4} {-r:3} {n:<12} {p}"
            for n, p, r in child.calls]
    assert [l for l in lines if ok in l] == want


@pytest.mark.kernel
def test_failed_only(paths):
    ok, missing = paths
    with Tool("statsnoop", "-x", "-j") as t:
        child = stat_calls(ok, missing)
        out, err, rc = t.stop()
    assert rc == 0, err
    got = [(r["syscall"], r["path"], r["ret"]) for r in marked(json_lines(out), ok)]
    assert got == [(n, p, r) for n, p, r in child.calls if r < 0]
    assert len(got) == len(PATH_CALLS)


def test_timestamp_column(paths):
    """bcc's -t: TIME(s), seconds since the first call shown."""
    ok, missing = paths
    with Tool("statsnoop", "-t", "-n", "python3") as t:
        child = stat_calls(ok, missing)
        out, err, rc = t.stop()
    assert rc == 0, err
    header, *lines = out.splitlines()
    assert header.startswith("TIME(s)       PID     COMM")
    mine = [l for l in lines if ok in l]
    assert len(mine) == len(child.calls)
    times = [float(l[:14]) for l in lines]
    assert times[0] == 0 and times == sorted(times)


@pytest.mark.kernel
def test_pid_filter_excludes_others(paths):
    ok, missing = paths
    with Tool("statsnoop", "-j", "-p", os.getpid()) as t:
        stat_calls(ok, missing)
        out, err, rc = t.stop()
    assert rc == 0, err
    assert marked(json_lines(out), ok) == []


def test_command_traces_only_it(paths, tmp_path):
    ok, missing = paths
    out = tmp_path / "out.json"
    p = subprocess.run([tool_path("statsnoop"), "-j", "-o", out, "--", *child_argv(ok, missing)],
                       capture_output=True, text=True, timeout=120)
    assert (p.returncode, p.stderr) == (0, "")
    child = Child(p.stdout)
    recs = json_lines(out.read_text())
    assert {r["pid"] for r in recs if r["type"] == "stat"} == {child.pid}
    assert [(r["syscall"], r["path"], r["ret"]) for r in marked(recs, ok)] == child.calls


STRACE_NAMES = {"stat": "newstat", "lstat": "newlstat", "fstat": "newfstat"}


@pytest.mark.skipif(not shutil.which("strace"), reason="strace is not installed")
def test_same_calls_as_strace(paths, tmp_path):
    """strace sees the child's calls too: from its first call on the
    marked file, the same calls with the same results (strace names stat,
    lstat and fstat by their libc names, and an fd where statsnoop has
    the fd's path)."""
    ok, missing = paths
    log = tmp_path / "strace.log"
    with Tool("statsnoop", "-j") as t:
        p = subprocess.run(["strace", "-qq", "-e", "signal=none", "-e",
                            "trace=" + ",".join(LIBC_NAMES[n] for n in NUMBERS), "-o", log,
                            *child_argv(ok, missing)],
                           capture_output=True, text=True, check=True)
        out, err, rc = t.stop()
    assert rc == 0, err
    child = Child(p.stdout)
    lines = log.read_text().splitlines()
    first = next(i for i, l in enumerate(lines) if ok in l)
    traced = []
    for l in lines[first:]:
        m = re.match(r'(\w+)\((?:AT_FDCWD, )?(?:"([^"]*)"|(\d+)), .*\) += (-1 (E[A-Z]+))?', l)
        name = STRACE_NAMES.get(m[1], m[1])
        path = m[2] if m[2] else (ok if int(m[3] or -1) == child.fd else m[2])
        traced.append((name, path, "-" + m[5] if m[5] else "0"))
    recs = [r for r in json_lines(out) if r["type"] == "stat" and r["pid"] == child.pid]
    first = next(i for i, r in enumerate(recs) if r["path"] == ok)
    mine = [(r["syscall"], r["path"], "-" + r["error"] if r["ret"] else "0")
            for r in recs[first:]]
    # newfstatat(fd, "") has the fd's path in statsnoop, "" in strace
    traced = [(n, ok if (n, p) == ("newfstatat", "") else p, r) for n, p, r in traced]
    assert mine == traced
    assert len(mine) == 2 * len(PATH_CALLS) + 2


@pytest.mark.parametrize("args,needle", [
    (["-p", "abc"], "--pid"),
    (["-t", "1"], "'1'"),
    (["-d", "0"], "--duration"),
    (["--bogus"], "--bogus"),
    (["--tid", "x"], "--tid value 'x'"),
    (["--ebpf"], "bcc's option '--ebpf' is not in tracekit"),
])
def test_usage_errors_exit_2_one_line(args, needle):
    r = run("statsnoop", *args)
    assert (r.returncode, r.stdout) == (2, "")
    [line] = r.stderr.splitlines()
    assert line.startswith("statsnoop: ") and needle in line and "--help" in line


def test_help_names_the_set():
    r = run("statsnoop", "--help")
    assert r.returncode == 0
    for s in ("statfs, newstat (stat), newlstat (lstat)", "newfstatat and statx",
              "-x, --failed", "-s, --sysname", "-t, --timestamp", "AT_EMPTY_PATH"):
        assert s in r.stdout, s
