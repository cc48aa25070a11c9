"""opensnoop end to end: a child opens the test's own marker paths with
open, openat and openat2; check what was reported, exactly."""
import json
import os
import platform
import re
import select
import signal
import subprocess
import time
import uuid

import pytest

from conftest import ROOT, Tool, json_lines, loss_record, run

PYTHON = "/usr/bin/python3"
RDONLY = os.O_RDONLY | os.O_CLOEXEC
CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
KINDS = ["open", "openat", "openat2"]
if platform.machine() != "x86_64":
    KINDS.remove("open")  # arm64 has no open(2)

# Open argv[2] with syscall argv[1] and flags argv[3]; print the result,
# errno, the calling thread's id and the pid. "wait": read a line from stdin first;
# "thread": open from a second thread.
CHILD = r"""
import ctypes, os, platform, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
NR = {"x86_64": {"open": 2, "openat": 257, "openat2": 437},
      "aarch64": {"openat": 56, "openat2": 437}}[platform.machine()]
kind, path, flags = sys.argv[1], os.fsencode(sys.argv[2]), int(sys.argv[3])
mode = 0o600 if flags & os.O_CREAT else 0

def do_open():
    if kind == "open":
        fd = libc.syscall(NR["open"], path, flags, mode)
    elif kind == "openat":
        fd = libc.syscall(NR["openat"], -100, path, flags, mode)
    else:
        how = (ctypes.c_uint64 * 3)(flags, mode, 0)
        fd = libc.syscall(NR["openat2"], -100, path, ctypes.byref(how), 24)
    err = ctypes.get_errno() if fd < 0 else 0
    print(fd, err, threading.get_native_id(), os.getpid(), flush=True)

if "wait" in sys.argv[4:]:
    sys.stdin.readline()
if "thread" in sys.argv[4:]:
    t = threading.Thread(target=do_open)
    t.start()
    t.join()
else:
    do_open()
"""


class Opened:
    def __init__(self, out):
        self.fd, self.errno, self.tid, self.pid = map(int, out.split())


def open_in_child(path, flags=RDONLY, kind="openat", *extra):
    """Open path in a new child process: what the open returned, and where."""
    p = subprocess.run([PYTHON, "-c", CHILD, kind, path, str(flags), *extra],
                       capture_output=True, check=True)
    return Opened(p.stdout)


def marker():
    return "tkopen-" + uuid.uuid4().hex[:12]


def opens(records, path=None):
    recs = [r for r in records if r["type"] == "open"]
    return recs if path is None else [r for r in recs if r["path"] == path]


@pytest.fixture
def existing(tmp_path):
    path = tmp_path / marker()
    path.write_text("x")
    return str(path)


@pytest.mark.parametrize("kind", KINDS)
def test_successful_open_exact_record(kind, existing):
    with Tool("opensnoop", "-j") as t:
        child = open_in_child(existing, RDONLY, kind)
        out, err, rc = t.stop()
    assert rc == 0, err
    assert child.fd >= 3 and child.errno == 0
    recs = json_lines(out)
    [r] = opens(recs, existing)
    assert set(r) == {"type", "time", "pid", "tid", "uid", "comm", "syscall",
                      "fd", "ret", "flags", "path", "path_truncated"}
    assert r["pid"] == child.pid and r["tid"] == child.pid
    assert r["uid"] == 0
    assert r["comm"] == "python3"
    assert r["syscall"] == kind
    assert r["fd"] == child.fd and r["ret"] == child.fd
    assert r["flags"] == RDONLY
    assert r["path_truncated"] is False
    assert loss_record(recs) == {"type": "loss", "events_lost": 0, "map_inserts_failed": 0}


@pytest.mark.parametrize("kind", KINDS)
def test_failed_open_reports_enoent(kind, tmp_path):
    missing = str(tmp_path / marker() / "missing")
    with Tool("opensnoop", "-j") as t:
        child = open_in_child(missing, RDONLY, kind)
        out, err, rc = t.stop()
    assert rc == 0, err
    assert child.fd == -1 and child.errno == 2
    [r] = opens(json_lines(out), missing)
    assert r["pid"] == child.pid
    assert r["syscall"] == kind
    assert r["fd"] is None
    assert r["ret"] == -2
    assert r["error"] == "ENOENT"
    assert r["flags"] == RDONLY


def test_create_flags_and_thread_id(tmp_path):
    path = str(tmp_path / marker())
    with Tool("opensnoop", "-j") as t:
        child = open_in_child(path, CREATE, "openat2", "thread")
        out, err, rc = t.stop()
    assert rc == 0, err
    assert child.fd >= 3 and os.path.exists(path)
    [r] = opens(json_lines(out), path)
    assert r["flags"] == CREATE
    assert r["fd"] == child.fd
    assert child.tid != child.pid
    assert (r["pid"], r["tid"]) == (child.pid, child.tid)


def test_text_columns(existing, tmp_path):
    missing = str(tmp_path / marker())
    with Tool("opensnoop") as t:
        ok = open_in_child(existing)
        bad = open_in_child(missing)
        out, err, rc = t.stop()
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == "PID    COMM              FD ERR PATH"
    [ok_line] = [l for l in lines if l.endswith(existing)]
    [bad_line] = [l for l in lines if l.endswith(missing)]
    assert ok_line == f"{ok.pid:<6} {'python3':<16} {ok.fd:3} {0:3} {existing}"
    assert bad_line == f"{bad.pid:<6} {'python3':<16} {-1:3} {2:3} {missing}"


def test_extended_uid_and_time_columns(existing):
    with Tool("opensnoop", "-T", "-t", "-U", "-e", "-P", existing) as t:
        ok = open_in_child(existing, CREATE & ~os.O_EXCL)
        out, err, rc = t.stop()
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["TIME", "TIME(s)", "UID", "PID", "COMM", "FD",
                                "ERR", "FLAGS", "PATH"]
    [line] = lines[1:]
    f = line.split()
    assert len(f[0]) == 8 and f[0][2] == ":" and f[0][5] == ":"
    assert 0 < float(f[1]) < 60
    assert f[2:] == ["0", str(ok.pid), "python3", str(ok.fd), "0",
                     "%08o" % (CREATE & ~os.O_EXCL), existing]
    assert f[7] == "02000101"


def test_failed_only(existing, tmp_path):
    missing = str(tmp_path / marker())
    with Tool("opensnoop", "-j", "-x") as t:
        open_in_child(existing)
        open_in_child(missing)
        out, err, rc = t.stop()
    assert rc == 0, err
    recs = opens(json_lines(out))
    assert [r["path"] for r in recs if r["path"] in (existing, missing)] == [missing]
    # Filtered in BPF: not one successful open of any process comes through.
    assert recs and all(r["ret"] < 0 and r["fd"] is None and "error" in r for r in recs)


def test_path_filter(tmp_path):
    dir_m = marker()
    inside = tmp_path / dir_m
    inside.mkdir()
    a, b = str(inside / "a"), str(inside / "b")
    outside = str(tmp_path / marker())
    open(a, "w").close()
    with Tool("opensnoop", "-j", "--path", dir_m) as t:
        open_in_child(a)
        open_in_child(b)
        open_in_child(outside)
        out, err, rc = t.stop()
    assert rc == 0, err
    recs = opens(json_lines(out))
    assert [(r["path"], r["ret"] >= 0) for r in recs] == [(a, True), (b, False)]


def test_json_escapes_any_path_bytes(tmp_path):
    m = marker()
    name = b"new\nline \"quoted\" back\\slash tab\t bad\xff\xfe " + m.encode()
    path = os.fsencode(tmp_path) + b"/" + name
    fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
    os.close(fd)
    with Tool("opensnoop", "-j", "-P", m) as t:
        child = open_in_child(path)
        out, err, rc = t.stop()
    assert rc == 0, err
    expected = (str(tmp_path) + '/new\nline "quoted" back\\slash tab\t bad\ufffd\ufffd '
                + m)
    [r] = opens(json_lines(out))
    assert r["path"] == expected
    assert r["fd"] == child.fd


def test_text_escapes_control_bytes_one_line(tmp_path):
    m = marker()
    path = os.fsencode(tmp_path) + b"/two\nlines\xff" + m.encode()
    with Tool("opensnoop", "-P", m) as t:
        open_in_child(path)
        out, err, rc = t.stop()
    assert rc == 0, err
    lines = out.splitlines()
    assert len(lines) == 2
    assert lines[1].endswith(f" {tmp_path}/two\\x0alines\\xff{m}")


def test_pid_filter_excludes_others(existing):
    rfd, wfd = os.pipe()
    mine = subprocess.Popen([PYTHON, "-c", CHILD, "openat", existing, str(RDONLY),
                             "wait"], stdin=rfd, stdout=subprocess.PIPE)
    os.close(rfd)
    with Tool("opensnoop", "-j", "-p", mine.pid) as t:
        other = open_in_child(existing)
        os.write(wfd, b"go\n")
        fd = int(mine.stdout.read().split()[0])
        assert mine.wait() == 0 and fd >= 3
        out, err, rc = t.stop()
    os.close(wfd)
    assert rc == 0, err
    assert other.pid != mine.pid
    recs = opens(json_lines(out))
    assert all(r["pid"] == mine.pid for r in recs)
    [r] = opens(recs, existing)
    assert r["fd"] == fd


def test_path_at_limit_and_truncated(tmp_path):
    m = marker()
    base = f"{tmp_path}/{m}/"
    fits = base + "a/" * ((4095 - len(base)) // 2)
    fits += "b" * (4095 - len(fits))  # 4095 bytes: with its NUL, PATH_MAX
    long = fits + "c"                    # 4096: the kernel refuses it
    with Tool("opensnoop", "-j", "-P", m) as t:
        open_in_child(fits)
        open_in_child(long)
        out, err, rc = t.stop()
    assert rc == 0, err
    assert len(fits) == 4095
    a, b = opens(json_lines(out))
    assert (a["path"], a["path_truncated"], a["error"]) == (fits, False, "ENOENT")
    assert (b["path"], b["path_truncated"], b["error"]) == (fits, True, "ENAMETOOLONG")


def test_perf_buffer_transport_same_record(existing):
    with Tool("opensnoop", "-j", "-v", env={"TRACEKIT_TRANSPORT": "perf"}) as t:
        child = open_in_child(existing)
        out, err, rc = t.stop()
    assert rc == 0, err
    assert "event transport: perf buffer" in err
    [r] = opens(json_lines(out), existing)
    assert (r["pid"], r["fd"]) == (child.pid, child.fd)


def test_verbose_lists_the_probes():
    with Tool("opensnoop", "-v") as t:
        out, err, rc = t.stop()
    assert rc == 0
    probes = sorted(l.split()[2].rstrip(":") for l in err.splitlines()
                    if l.startswith("opensnoop: probe "))
    expected = ["openat2_enter", "openat2_exit", "openat_enter", "openat_exit"]
    if "open" in KINDS:
        expected += ["open_enter", "open_exit"]
    assert probes == sorted(expected)


def test_sigterm_ends_cleanly_with_loss_record():
    with Tool("opensnoop", "-j", "-P", marker()) as t:
        out, err, rc = t.stop(signal.SIGTERM)
    assert rc == 0, err
    assert json_lines(out) == [{"type": "loss", "events_lost": 0, "map_inserts_failed": 0}]


def test_duration_ends_by_itself():
    r = run("opensnoop", "-d", "0.5", "-P", marker())
    assert r.returncode == 0, r.stderr
    assert r.stdout == "PID    COMM              FD ERR PATH\n"


@pytest.mark.parametrize("args,needle", [
    (["-p", "abc"], "--pid"),
    (["--pid", "0"], "--pid"),
    (["-d", "0"], "--duration"),
    (["-d", "soon"], "--duration"),
    (["-P", ""], "--path"),
    (["-P"], "-P"),
    (["--bogus"], "--bogus"),
    (["-Z"], "-Z"),
    (["stray"], "stray"),
])
def test_usage_errors_exit_2_one_line(args, needle):
    r = run("opensnoop", *args)
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("opensnoop: ")
    assert needle in lines[0]
    assert "--help" in lines[0]


def test_help_states_limits_and_options():
    r = run("opensnoop", "--help")
    assert r.returncode == 0
    assert "4095 bytes of path" in r.stdout and "Examples:" in r.stdout
    for opt in ("--failed", "--extended-fields", "--print-uid", "--timestamp",
                "--path=SUBSTR", "--json", "--duration"):
        assert opt in r.stdout, opt


def test_burst_delivered_while_running(tmp_path):
    """Most events of a burst are sent without waking the reader
    (TK_EVENTS_WAKE_MS): every one must still reach stdout while the tool
    runs, the last of a burst too, and a lone open after it as well. The
    tool sees only the storm program's opens (-n, in BPF), so no other
    process's event can wake the reader for it. The buffer holds the whole
    burst, so none may be lost."""
    name = "tks-" + uuid.uuid4().hex[:8]
    storm = tmp_path / name
    subprocess.run(["cc", "-O2", "-o", str(storm), str(ROOT / "tests/e2e/progs/storm.c")],
                   check=True)
    paths = {}
    for kind in ("burst", "trickle", "pair", "lone"):
        paths[kind] = tmp_path / f"{kind}-{marker()}"
        paths[kind].write_text("x")

    def opens(kind, n, gap_us=0):
        subprocess.run([str(storm), "open", str(n), str(paths[kind]), str(gap_us)],
                       check=True, capture_output=True)
        return wait_lines(tool.proc.stdout, str(paths[kind]), n)

    tool = Tool("opensnoop", "-j", "-n", name, "--buffer-kb", 65536)
    with tool:
        assert opens("burst", 20000) == 20000
        # The reader catches up between these; each comes within
        # TK_EVENTS_WAKE_MS of the one before.
        assert opens("trickle", 500, 50) == 500
        assert opens("pair", 2, 300) == 2
        time.sleep(0.5)  # idle: the next event must wake the reader
        assert opens("lone", 1) == 1
        out, err, rc = tool.stop()
    assert rc == 0, err
    assert loss_record(json_lines(out))["events_lost"] == 0


def wait_lines(stream, path, want, timeout=60):
    """Read NDJSON open records from a running tool's stdout until want of
    them name path; how many did, within timeout seconds."""
    fd, got, buf = stream.fileno(), 0, b""
    deadline = time.monotonic() + timeout
    while got < want and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], deadline - time.monotonic())
        chunk = os.read(fd, 1 << 16) if ready else b""
        if not chunk:
            break
        buf += chunk
        *lines, buf = buf.split(b"\n")
        got += sum(1 for line in lines if json.loads(line).get("path") == path)
    return got


def test_sigint_during_storm_ends_it(tmp_path):
    """A storm the reader cannot keep up with must not keep the tool from
    ending on SIGINT: libbpf reads the ring until it is empty, which such
    a storm never lets happen. The tool's stdout is read slowly here (a
    slow terminal), so it cannot keep up; after SIGINT it must stop
    reading, detach, drain what is left of its 64 KiB ring and end."""
    storm = tmp_path / "storm"
    subprocess.run(["cc", "-O2", "-o", str(storm), str(ROOT / "tests/e2e/progs/storm.c")],
                   check=True)
    path = tmp_path / marker()
    path.write_text("x")
    tool = Tool("opensnoop", "--buffer-kb", 64)
    with tool:
        load = subprocess.Popen([str(storm), "open", "1000000000", str(path)],
                                stdout=subprocess.DEVNULL)
        try:
            fd, out = tool.proc.stdout.fileno(), b""
            deadline = time.monotonic() + 1
            while time.monotonic() < deadline:  # 4 KiB every 10 ms
                out += os.read(fd, 4096)
                time.sleep(0.01)
            tool.proc.send_signal(signal.SIGINT)
            deadline = time.monotonic() + 60
            while tool.proc.poll() is None and time.monotonic() < deadline:
                out += os.read(fd, 4096)
                time.sleep(0.01)
            ended = tool.proc.poll() is not None
        finally:
            load.kill()
            load.wait()
        out += tool.proc.stdout.read()
        err = tool.proc.stderr.read().decode()
    assert ended, "still running 60 s after SIGINT, with the storm going on"
    assert tool.proc.returncode == 0, err
    assert str(path).encode() in out
    assert re.search(r"opensnoop: lost \d+ events: the ring buffer was full", err), err
