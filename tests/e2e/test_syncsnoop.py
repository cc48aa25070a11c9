"""syncsnoop end to end: a child named for the test makes each sync
call once (and one fsync of a bad fd); the tool must report exactly
those calls, with their arguments and results."""
import json
import os
import re
import shutil
import subprocess
import time
import uuid

import pytest

from conftest import Tool, json_lines, loss_record, run, syscall_numbers, tool_path

PYTHON = "/usr/bin/python3"

# Names itself argv[2] (prctl PR_SET_NAME), then makes each call on
# argv[1] (numbered by argv[3], this architecture's NUMBERS); prints
# "name result" per call, then its pid, the fd and the mapping's address.
CHILD = r"""
import ctypes, json, mmap, os, sys
libc = ctypes.CDLL(None, use_errno=True)
nr = json.loads(sys.argv[3])
libc.prctl(15, sys.argv[2].encode(), 0, 0, 0)
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 4096)
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
def call(name, *args):
    ctypes.set_errno(0)
    r = libc.syscall(nr[name], *[ctypes.c_long(a) for a in args])
    print(name, r if r >= 0 else -ctypes.get_errno())
call("sync")
call("fsync", fd)
call("fdatasync", fd)
call("msync", addr, 4096, 4)                    # MS_SYNC
call("sync_file_range", fd, 0, 4096, 2)         # SYNC_FILE_RANGE_WRITE
call("syncfs", fd)
call("fsync", 9999)                             # EBADF
print(os.getpid(), fd, addr, flush=True)
"""


NUMBERS = {n: syscall_numbers()[n]
           for n in ("sync", "fsync", "fdatasync", "msync", "sync_file_range", "syncfs")}


class Child:
    def __init__(self, stdout):
        *calls, last = stdout.splitlines()
        self.calls = [(n, int(r)) for n, r in (c.split() for c in calls)]
        self.pid, self.fd, self.addr = map(int, last.split())


@pytest.fixture
def target(tmp_path):
    f = tmp_path / "data"
    f.write_bytes(b"x" * 4096)
    return str(f), "tksync-" + uuid.uuid4().hex[:8]


def sync_calls(path, name, *tool):
    p = subprocess.run([*tool, PYTHON, "-c", CHILD, path, name, json.dumps(NUMBERS)], capture_output=True,
                       text=True, check=True)
    return Child(p.stdout)


def expected(child):
    fd, addr = child.fd, child.addr
    return [
        ("sync", {}, 0, None),
        ("fsync", {"fd": fd}, 0, None),
        ("fdatasync", {"fd": fd}, 0, None),
        ("msync", {"addr": addr, "len": 4096, "flags": 4, "flag_names": "MS_SYNC"}, 0, None),
        ("sync_file_range", {"fd": fd, "offset": 0, "nbytes": 4096, "flags": 2,
                             "flag_names": "SYNC_FILE_RANGE_WRITE"}, 0, None),
        ("syncfs", {"fd": fd}, 0, None),
        ("fsync", {"fd": 9999}, -9, "EBADF"),
    ]


@pytest.mark.kernel
def test_exact_calls_json(target):
    path, name = target
    with Tool("syncsnoop", "-j") as t:
        child = sync_calls(path, name)
        out, err, rc = t.stop()
    assert rc == 0, err
    assert child.calls == [(n, r) for n, _, r, _ in expected(child)]
    recs = json_lines(out)
    mine = [r for r in recs if r["type"] == "sync" and r["pid"] == child.pid]
    assert [(r["syscall"], r["args"], r["ret"], r.get("error")) for r in mine] == expected(child)
    for r in mine:
        assert (r["tid"], r["uid"], r["comm"]) == (child.pid, 0, name)
        assert r["lat_ns"] > 0
    assert loss_record(recs) == {"type": "loss", "events_lost": 0, "map_inserts_failed": 0}


def test_text_columns_and_name_filter(target):
    """bcc's columns; TIME(s) is the monotonic clock at the call's entry."""
    path, name = target
    before = time.monotonic()
    with Tool("syncsnoop", "-n", name) as t:
        child = sync_calls(path, name)
        out, err, rc = t.stop()
    after = time.monotonic()
    assert rc == 0, err
    header, *lines = out.splitlines()
    assert header == f"{'TIME(s)':<18} {'COMM':<16} CALL"
    assert [l[19:] for l in lines] == [f"{name:<16} {n}" for n, _ in child.calls]
    times = [float(l[:18]) for l in lines]
    assert before <= times[0] and times == sorted(times) and times[-1] <= after


@pytest.mark.kernel
def test_pid_filter_excludes_others(target):
    path, name = target
    with Tool("syncsnoop", "-j", "-p", os.getpid()) as t:
        sync_calls(path, name)
        out, err, rc = t.stop()
    assert rc == 0, err
    assert json_lines(out) == [{"type": "loss", "events_lost": 0, "map_inserts_failed": 0,
                             "runs_missed": 0}]


def test_command_traces_only_it(target, tmp_path):
    path, name = target
    out = tmp_path / "out.json"
    child = sync_calls(path, name, tool_path("syncsnoop"), "-j", "-o", out, "--")
    recs = json_lines(out.read_text())
    assert [(r["pid"], r["syscall"], r["ret"]) for r in recs if r["type"] == "sync"] == [
        (child.pid, n, r) for n, r in child.calls]


@pytest.mark.skipif(not shutil.which("strace"), reason="strace is not installed")
def test_same_calls_as_strace(target, tmp_path):
    """strace sees the same calls with the same first argument and result."""
    path, name = target
    log = tmp_path / "strace.log"
    with Tool("syncsnoop", "-j", "-n", name) as t:
        child = sync_calls(path, name, "strace", "-qq", "-e", "signal=none", "-o", log, "-e",
                           "trace=sync,fsync,fdatasync,msync,sync_file_range,syncfs")
        out, err, rc = t.stop()
    assert rc == 0, err
    traced = []
    for line in log.read_text().splitlines():
        m = re.match(r"(\w+)\(([^,)]*).*\) += (0|-1 (E[A-Z]+))", line)
        traced.append((m[1], m[2], m[4]))
    got = [(r["syscall"], str(next(iter(r["args"].values()), "")), r.get("error"))
           for r in json_lines(out) if r["type"] == "sync"]
    # strace prints msync's address in hex
    got = [(n, hex(int(a)) if n == "msync" else a, e) for n, a, e in got]
    assert got == traced and len(got) == 7


@pytest.mark.parametrize("args,needle", [
    (["-p", "abc"], "--pid"),
    (["-x"], "-x"),
    (["-d", "x"], "--duration"),
    (["stray"], "stray"),
    (["--exec", "ls"], "use -- COMMAND"),
])
def test_usage_errors_exit_2_one_line(args, needle):
    r = run("syncsnoop", *args)
    assert (r.returncode, r.stdout) == (2, "")
    [line] = r.stderr.splitlines()
    assert line.startswith("syncsnoop: ") and needle in line and "--help" in line


def test_help_names_the_calls():
    r = run("syncsnoop", "--help")
    assert r.returncode == 0
    assert "sync, fsync, fdatasync, msync,\nsync_file_range and syncfs" in r.stdout
