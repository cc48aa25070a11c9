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


from conftest import (ROOT, Tool, json_lines, loss_record, own_cgroup, run, scratch_cgroup,
                      tool_path)

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


def open_in_child(path, flags=RDONLY, kind="openat", *extra, cgroup=None):
    """Open path in a new child process: what the open returned, and where.
    cgroup: a cgroup v2 directory that the child (a shell) moves itself
    into before it execs Python."""
    argv = [PYTHON, "-c", CHILD, kind, path, str(flags), *extra]
    if cgroup:
        argv = ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', cgroup, *argv]
    p = subprocess.run(argv, capture_output=True, check=True)
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
@pytest.mark.kernel
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


@pytest.mark.kernel
def test_state_spilled_from_task_storage_to_the_hash(existing, tmp_path):
    """Task storage refuses a new slot while another task-storage
    operation runs on the CPU (another BPF user's, preempted); the entry's
    state then goes to the hash (bpf/tk_pending.bpf.h). The test knob
    spills every entry: each open still gives its exact record, the
    failed one too, and nothing is lost."""
    missing = str(tmp_path / marker())
    with Tool("opensnoop", "-j", "-v", env={"TRACEKIT_PENDING_SPILL_ALL": "1"}) as t:
        ok = [open_in_child(existing) for _ in range(3)]
        bad = open_in_child(missing)
        out, err, rc = t.stop()
    assert rc == 0, err
    # Before 5.11 (no task storage for tracing) the hash is all there is.
    if "state in task storage" in err:
        assert "every entry's state spilled to the hash" in err, err
    recs = json_lines(out)
    assert [(r["pid"], r["fd"]) for r in opens(recs, existing)] == [(c.pid, c.fd) for c in ok]
    [r] = opens(recs, missing)
    assert (r["pid"], r["ret"]) == (bad.pid, -2)
    assert loss_record(recs) == {"type": "loss", "events_lost": 0, "map_inserts_failed": 0}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.kernel
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


@pytest.mark.kernel
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
    """-T is bcc's TIME(s); the wall clock is --time."""
    with Tool("opensnoop", "--time", "-T", "-U", "-e", "-P", existing) as t:
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


@pytest.mark.parametrize("opt", ["-T", "--timestamp"])
def test_seconds_since_start_column(opt, existing):
    """bcc's -T: seconds since the tool started, first; no wall clock."""
    with Tool("opensnoop", opt, "-P", existing) as t:
        ok = open_in_child(existing)
        out, err, rc = t.stop()
    assert rc == 0, err
    header, line = out.splitlines()
    assert header == "TIME(s)  PID    COMM              FD ERR PATH"
    secs, rest = line[:9], line[9:]
    assert re.fullmatch(r"\d+\.\d{3} *", secs) and 0 < float(secs) < 60
    assert rest == f"{ok.pid:<6} {'python3':<16} {ok.fd:3} {0:3} {existing}"


# Two threads open argv[1] in turn, the second thread first; the second's
# id is printed before the opens, which wait for a line on stdin.
TWO_THREADS = r"""
import os, sys, threading
go, done = threading.Event(), threading.Event()
def second():
    print(threading.get_native_id(), flush=True)
    go.wait()
    os.close(os.open(sys.argv[1], os.O_RDONLY))
    done.set()
t = threading.Thread(target=second)
t.start()
sys.stdin.readline()
go.set()
done.wait()
os.close(os.open(sys.argv[1], os.O_RDONLY))
t.join()
print(threading.get_native_id(), os.getpid(), flush=True)
"""


@pytest.mark.parametrize("opt", ["-t", "--tid"])
@pytest.mark.kernel
def test_tid_filter_only_that_thread(opt, existing):
    """bcc's -t TID: of one process's two threads opening the same file,
    only the named one is reported; in text the first column is TID."""
    child = subprocess.Popen([PYTHON, "-c", TWO_THREADS, existing],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    tid = int(child.stdout.readline())
    with Tool("opensnoop", opt, tid, "-P", existing) as t:
        child.stdin.write("go\n")
        child.stdin.flush()
        main_tid, pid = map(int, child.stdout.readline().split())
        assert child.wait() == 0
        out, err, rc = t.stop()
    assert rc == 0, err
    assert main_tid == pid and tid != pid
    header, *lines = out.splitlines()
    assert header == "TID    COMM              FD ERR PATH"
    assert [l.split() for l in lines] == [[str(tid), "python3", "3", "0", existing]]


def test_tid_filter_json(existing):
    child = subprocess.Popen([PYTHON, "-c", TWO_THREADS, existing],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    tid = int(child.stdout.readline())
    with Tool("opensnoop", "-j", "-t", tid) as t:
        child.stdin.write("go\n")
        child.stdin.flush()
        _, pid = map(int, child.stdout.readline().split())
        assert child.wait() == 0
        out, err, rc = t.stop()
    assert rc == 0, err
    recs = opens(json_lines(out))
    assert [(r["pid"], r["tid"], r["path"]) for r in recs] == [(pid, tid, existing)]


WR_CREATE = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC
RDWR = os.O_RDWR | os.O_CLOEXEC
APPEND = os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC


@pytest.mark.parametrize("filters,wanted", [
    (["O_WRONLY", "O_CREAT"], ["wr_create", "append"]),  # bcc's example
    (["O_RDWR"], ["rdwr"]),
    (["O_CREAT"], ["wr_create"]),
    (["O_RDONLY"], ["rdonly"]),          # the read-only access mode
    (["O_RDONLY", "O_APPEND"], ["rdonly", "append"]),
])
def test_flag_filter(filters, wanted, tmp_path):
    """-f FLAG (repeatable): opens whose flags have any of the bits; the
    same file opened four ways, each by its own process, with each
    syscall (openat2's flags are read from its struct open_how)."""
    m = marker()
    path = str(tmp_path / m)
    open(path, "w").close()
    how = {"rdonly": RDONLY, "wr_create": WR_CREATE, "rdwr": RDWR,
           "append": APPEND}
    kind = {"rdonly": "openat2", "wr_create": "openat", "rdwr": KINDS[0],
            "append": "openat2"}
    args = [a for f in filters for a in ("-f", f)]
    with Tool("opensnoop", "-j", *args, "-P", m) as t:
        pids = {name: open_in_child(path, flags, kind[name]).pid
                for name, flags in how.items()}
        out, err, rc = t.stop()
    assert rc == 0, err
    recs = opens(json_lines(out))
    assert [(r["pid"], r["flags"]) for r in recs] == [
        (pids[name], how[name]) for name in how if name in wanted]


@pytest.mark.kernel
def test_flag_filter_in_bpf_for_every_process(existing):
    """The filter is applied in BPF to every open of the system: with
    O_RDONLY not one record of a writing open comes through."""
    with Tool("opensnoop", "-j", "-f", "O_RDONLY") as t:
        reader = open_in_child(existing, RDONLY)
        open_in_child(existing, APPEND)
        out, err, rc = t.stop()
    assert rc == 0, err
    recs = opens(json_lines(out))
    assert [r["pid"] for r in opens(recs, existing)] == [reader.pid]
    assert all(r["flags"] & os.O_ACCMODE == os.O_RDONLY for r in recs)


# -F workload: runs in a mount namespace of its own (unshare -m), so the
# mounts it makes go away with it. argv[1]: JSON list of steps:
#   ["tmpfs", dir] ["bind", src, dst] ["mkdir", dir] ["chdir", dir]
#   ["nest", name, n]: mkdir name and chdir into it, n times
#   ["chroot", dir]
#   ["open", kind, dir, name, flags, n]: open name n times with kind
#     (open, openat, openat2) relative to dir: a path opened as a dirfd,
#     an int (an fd as is), or null (AT_FDCWD)
# Prints its pid, then one JSON list of every fd returned (-errno if not).
AT_CHILD = r"""
import ctypes, json, os, platform, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
NR = {"x86_64": {"open": 2, "openat": 257, "openat2": 437},
      "aarch64": {"openat": 56, "openat2": 437}}[platform.machine()]

def sys_open(kind, dfd, name, flags):
    mode = 0o600 if flags & os.O_CREAT else 0
    if kind == "open":
        fd = libc.syscall(NR["open"], name, flags, mode)
    elif kind == "openat":
        fd = libc.syscall(NR["openat"], dfd, name, flags, mode)
    else:
        how = (ctypes.c_uint64 * 3)(flags, mode, 0)
        fd = libc.syscall(NR["openat2"], dfd, name, ctypes.byref(how), 24)
    return fd if fd >= 0 else -ctypes.get_errno()

fds = []
for step in json.loads(sys.argv[1]):
    op, args = step[0], step[1:]
    if op == "tmpfs":
        subprocess.run(["mount", "-t", "tmpfs", "tk-opensnoop", args[0]], check=True)
    elif op == "bind":
        subprocess.run(["mount", "--bind", args[0], args[1]], check=True)
    elif op == "mkdir":
        os.makedirs(args[0])
    elif op == "chdir":
        os.chdir(args[0])
    elif op == "nest":
        for _ in range(args[1]):
            os.makedirs(args[0], exist_ok=True)
            os.chdir(args[0])
    elif op == "chroot":
        os.chroot(args[0])
    elif op == "open":
        kind, d, name, flags, n = args
        if d is None:
            dfd = -100
        elif isinstance(d, int):
            dfd = d
        else:
            dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
        for _ in range(n):
            fd = sys_open(kind, dfd, os.fsencode(name), flags)
            fds.append(fd)
            if fd >= 0:
                os.close(fd)
print(os.getpid(), json.dumps(fds), flush=True)
"""


def at_child(steps):
    """Run the -F workload; its pid and the fds its opens returned."""
    p = subprocess.run(["unshare", "-m", "--propagation", "private", PYTHON, "-c",
                        AT_CHILD, json.dumps(steps)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    pid, fds = p.stdout.split(" ", 1)
    return int(pid), json.loads(fds)


def full_path_run(steps, *args):
    """Trace the workload with -F, keeping only opens of names with the
    marker (-P, which sees the full path)."""
    m = marker()
    steps = [[s[0], *(a.replace("MARK", m) if isinstance(a, str) else a
                      for a in s[1:])] for s in steps]
    with Tool("opensnoop", "-F", "-P", m, *args) as t:
        pid, fds = at_child(steps)
        out, err, rc = t.stop()
    assert rc == 0, err
    return m, pid, fds, out


@pytest.mark.kernel
def test_full_path_cwd_across_a_mount(tmp_path):
    """A relative name opened N times from a cwd inside a tmpfs mounted on
    a directory of the test's: each open is reported with the whole path,
    walked up through the mount point."""
    top = tmp_path / "top"
    top.mkdir()
    work = f"{top}/mnt/a/b"
    kinds = KINDS
    steps = [["mkdir", f"{top}/mnt"], ["tmpfs", f"{top}/mnt"], ["mkdir", work],
             ["chdir", work]]
    steps += [["open", k, None, "MARK-rel", CREATE & ~os.O_EXCL, 3] for k in kinds]
    m, pid, fds, out = full_path_run(steps, "-j")
    assert all(fd >= 3 for fd in fds) and len(fds) == 3 * len(kinds)
    recs = opens(json_lines(out))
    assert [(r["pid"], r["syscall"], r["fd"], r["path"], r["path_prefix_missing"])
            for r in recs] == [(pid, k, fd, f"{work}/{m}-rel", False)
                               for k, fd in zip([k for k in kinds for _ in range(3)], fds)]


@pytest.mark.kernel
def test_full_path_bind_mount_named_by_its_mount_point(tmp_path):
    """A bind mount's files are named by where they are mounted, not by
    where the directory lives: the walk follows the mount, not d_parent
    alone (which would give .../src/inner)."""
    src, dst = tmp_path / "src", tmp_path / "dst"
    (src / "inner").mkdir(parents=True)
    dst.mkdir()
    steps = [["bind", str(src), str(dst)], ["chdir", f"{dst}/inner"],
             ["open", "openat", None, "MARK", CREATE & ~os.O_EXCL, 1]]
    m, pid, fds, out = full_path_run(steps)
    header, *lines = out.splitlines()
    assert header == "PID    COMM              FD ERR PATH"
    assert lines == [f"{pid:<6} {'python3':<16} {fds[0]:3} {0:3} {dst}/inner/{m}"]


@pytest.mark.parametrize("kind", ["openat", "openat2"])
@pytest.mark.kernel
def test_full_path_through_a_dirfd(kind, tmp_path):
    """openat's dirfd, not the cwd, is what a relative name is relative
    to; an absolute name is left as it is; a name relative to an fd that
    is not open is left as passed (and fails EBADF)."""
    cwd, other = tmp_path / "cwd", tmp_path / "other"
    cwd.mkdir()
    (other / "d").mkdir(parents=True)
    (other / "d" / "f").write_text("x")
    steps = [["chdir", str(cwd)], ["mkdir", f"{other}/d/MARK"],
             ["open", kind, f"{other}/d", "MARK/n", CREATE & ~os.O_EXCL, 2],
             ["open", kind, f"{other}/d", f"{tmp_path}/MARK-abs", CREATE & ~os.O_EXCL, 1],
             ["open", kind, 1000, "MARK-badfd", RDONLY, 1]]
    m, pid, fds, out = full_path_run(steps, "-j")
    assert all(fd >= 3 for fd in fds[:3]) and fds[3] == -9
    recs = opens(json_lines(out))
    assert [(r["pid"], r["ret"], r["path"]) for r in recs] == [
        (pid, fds[0], f"{other}/d/{m}/n"), (pid, fds[1], f"{other}/d/{m}/n"),
        (pid, fds[2], f"{tmp_path}/{m}-abs"), (pid, -9, f"{m}-badfd")]
    assert not any(r["path_prefix_missing"] for r in recs)


@pytest.mark.kernel
def test_full_path_stops_at_the_callers_root(tmp_path):
    """In a chroot the path is the caller's view, as the kernel's d_path."""
    root = tmp_path / "root"
    (root / "in" / "side").mkdir(parents=True)
    steps = [["chroot", str(root)], ["chdir", "/in/side"],
             ["open", "openat", None, "MARK", CREATE & ~os.O_EXCL, 1],
             ["open", "openat", "/in", "MARK-at", CREATE & ~os.O_EXCL, 1],
             ["chdir", "/"], ["open", "openat", None, "MARK-top", CREATE & ~os.O_EXCL, 1]]
    m, pid, fds, out = full_path_run(steps, "-j")
    assert [r["path"] for r in opens(json_lines(out))] == [
        f"/in/side/{m}", f"/in/{m}-at", f"/{m}-top"]
    assert (root / f"{m}-top").exists()


@pytest.mark.kernel
def test_full_path_marks_a_walk_cut_at_its_depth(tmp_path):
    """70 directories deep: the walk stops after 64 names; the path
    starts with '...' (JSON: path_prefix_missing)."""
    steps = [["chdir", str(tmp_path)], ["nest", "a", 70],
             ["open", "openat", None, "MARK", CREATE & ~os.O_EXCL, 1]]
    m, pid, fds, out = full_path_run(steps, "-j")
    [r] = opens(json_lines(out))
    assert r["path"] == "/a" * 64 + f"/{m}"
    assert (r["path_prefix_missing"], r["path_truncated"]) == (True, False)
    m, pid, fds, out = full_path_run(steps)
    assert out.splitlines()[1].endswith(" ..." + "/a" * 64 + f"/{m}")


@pytest.mark.kernel
def test_full_path_marks_a_walk_cut_at_its_length(tmp_path):
    """20 names of 250 bytes (5020 bytes: longer than PATH_MAX): the walk
    keeps the last 16 that fit in 4095 bytes and marks the cut."""
    name = "d" * 250
    steps = [["chdir", str(tmp_path)], ["nest", name, 20],
             ["open", "openat", None, "MARK", CREATE & ~os.O_EXCL, 1]]
    m, pid, fds, out = full_path_run(steps, "-j")
    [r] = opens(json_lines(out))
    assert fds[0] >= 3
    assert r["path"] == f"/{name}" * 16 + f"/{m}"
    assert (r["path_prefix_missing"], r["path_truncated"]) == (True, False)


@pytest.mark.kernel
def test_full_path_cut_at_path_max(tmp_path):
    """A relative name that fits PATH_MAX but not after its directory:
    the full path is cut at 4095 bytes and marked, as any long path."""
    rel = "MARK/" + "x/" * 2030  # 4080 bytes with the marker: the kernel takes it
    steps = [["chdir", str(tmp_path)],
             ["open", "openat", None, rel, RDONLY, 1]]
    m, pid, fds, out = full_path_run(steps, "-j")
    [r] = opens(json_lines(out))
    assert fds == [-2]
    full = f"{tmp_path}/{rel.replace('MARK', m)}"
    assert len(full) > 4095
    assert r["path"] == full[:4095]
    assert (r["path_truncated"], r["path_prefix_missing"]) == (True, False)
    m, pid, fds, out = full_path_run(steps)
    full = f"{tmp_path}/{rel.replace('MARK', m)}"
    assert out.splitlines()[1] == f"{pid:<6} {'python3':<16} {-1:3} {2:3} {full[:4095]}..."


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


@pytest.mark.kernel
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


@pytest.mark.kernel
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
    lines = [l for l in err.splitlines() if l.startswith("opensnoop: probe ")]
    probes = sorted(l.split()[2].rstrip(":") for l in lines)
    # An enter program per syscall; one exit program on all their exits.
    expected = ["openat2_enter", "openat_enter", "open_exit"]
    if "open" in KINDS:
        expected += ["open_enter"]
    assert probes == sorted(expected)
    n = 3 if "open" in KINDS else 2
    assert f"opensnoop: probe open_exit: tp the open syscalls' exits ({n} tracepoints)" in lines


def test_sigterm_ends_cleanly_with_loss_record():
    with Tool("opensnoop", "-j", "-P", marker()) as t:
        out, err, rc = t.stop(signal.SIGTERM)
    assert rc == 0, err
    assert json_lines(out) == [{"type": "loss", "events_lost": 0, "map_inserts_failed": 0,
                             "runs_missed": 0}]


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
    (["-t", "abc"], "--tid value 'abc'"),
    (["-t", "0"], "--tid value '0'"),
    (["-t", "1,x"], "--tid value '1,x'"),
    (["-t"], "-t"),
    (["--tid", "x"], "--tid value 'x'"),
    (["-f", "O_BOGUS"], "--flag-filter value 'O_BOGUS': expected an open flag name such as O_WRONLY"),
    (["-f", "wronly"], "--flag-filter value 'wronly'"),
    (["-f", "O_WRONLY", "-f", ""], "--flag-filter value ''"),
    (["-f"], "-f"),
    # bcc's options that tracekit has not say what to use instead.
    (["-b", "64"], "bcc's option '-b' is not in tracekit: use --buffer-kb KB"),
    (["--buffer-pages=64"], "bcc's option '--buffer-pages' is not in tracekit: use --buffer-kb KB"),
    (["--cgroupmap", "/sys/fs/bpf/m"], "bcc's option '--cgroupmap' is not in tracekit: filter by cgroup directory with --cgroup PATH"),
    (["--mntnsmap", "/sys/fs/bpf/m"], "bcc's option '--mntnsmap' is not in tracekit"),
    (["--ebpf"], "bcc's option '--ebpf' is not in tracekit"),
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
                "--path=SUBSTR", "--json", "--duration", "-t, --tid=TID",
                "-F, --full-path", "-f, --flag-filter=FLAG", "      --time "):
        assert opt in r.stdout, opt
    # The letters' choice is documented: bcc's -T, the wall clock as --time.
    assert "-T is bcc's seconds since start" in r.stdout
    assert "wall-clock column (-T in other tools) is\n--time here" in r.stdout
    assert "O_RDONLY has no bit" in r.stdout


@pytest.mark.kernel
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


def workload_cgroup():
    """A cgroup v2 directory of the test's own (conftest.scratch_cgroup)."""
    return scratch_cgroup(f"tk-opensnoop-{os.getpid()}")


def test_print_cgroup_text_column(existing):
    """--print-cgroup: CGROUP, the opener's cgroup v2 path, is the column
    before PATH (after -e's FLAGS)."""
    with workload_cgroup() as cg:
        with Tool("opensnoop", "--print-cgroup", "-e", "-P", existing) as t:
            ok = open_in_child(existing, cgroup=cg)
            out, err, rc = t.stop()
    assert rc == 0, err
    path = f"/{cg.name}"
    header, line = out.splitlines()
    assert header == "PID    COMM              FD ERR FLAGS    CGROUP                   PATH"
    assert line == f"{ok.pid:<6} {'python3':<16} {ok.fd:3} {0:3} {RDONLY:08o} {path:<24} {existing}"
    assert header.index("CGROUP") == line.index(path)


@pytest.mark.kernel
def test_print_cgroup_json_follows_the_task(existing):
    """"cgroup" in each record is the cgroup the opener was in at that
    open: the shell's opens before it moved itself are in the test's own
    cgroup, Python's after it exec'd in the new one."""
    with workload_cgroup() as cg:
        with Tool("opensnoop", "-j", "--print-cgroup") as t:
            child = open_in_child(existing, cgroup=cg)
            out, err, rc = t.stop()
    assert rc == 0, err
    recs = json_lines(out)
    [r] = opens(recs, existing)
    del r["time"]
    assert r == {"type": "open", "pid": child.pid, "tid": child.pid, "uid": 0,
                 "comm": "python3", "syscall": "openat", "fd": child.fd, "ret": child.fd,
                 "flags": RDONLY, "cgroup": f"/{cg.name}", "path": existing,
                 "path_truncated": False}
    assert {(r["comm"], r["cgroup"]) for r in opens(recs) if r["pid"] == child.pid} == {
        ("sh", own_cgroup()), ("python3", f"/{cg.name}")}
    assert loss_record(recs) == {"type": "loss", "events_lost": 0, "map_inserts_failed": 0}


def test_print_cgroup_names_the_commands_cgroup(existing, tmp_path):
    """-- COMMAND: COMMAND's opens are in tracekit-opensnoop-PID, beside
    the cgroup the tool was started in."""
    out = tmp_path / "out.json"
    p = subprocess.Popen([tool_path("opensnoop"), "-j", "--print-cgroup", "-o", out,
                          "-P", existing, "--", PYTHON, "-c", CHILD, "openat", existing,
                          str(RDONLY)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stdout, err = p.communicate(timeout=120)
    assert (p.returncode, err) == (0, b"")
    child = Opened(stdout)
    recs = json_lines(out.read_text())
    assert [(r["pid"], r["fd"], r["path"], r["cgroup"]) for r in opens(recs)] == [
        (child.pid, child.fd, existing, own_cgroup().rstrip("/") + f"/tracekit-opensnoop-{p.pid}")]
    assert loss_record(recs)["events_lost"] == 0


@pytest.mark.kernel
def test_empty_path_is_empty_not_unreadable():
    """open("") fails with ENOENT; its path is "" on every kernel, though
    bpf_probe_read_user_str returns 0 for "" on 5.10, 6.1 and 6.12
    (bpf/tk_user_str.bpf.h)."""
    with Tool("opensnoop", "-j", "-x") as t:
        child = open_in_child("", RDONLY, "openat")
        out, err, rc = t.stop()
    assert rc == 0, err
    assert (child.fd, child.errno) == (-1, 2)
    recs = [r for r in opens(json_lines(out)) if r["pid"] == child.pid]
    assert [(r["path"], r["error"]) for r in recs if r["path"] in ("", None)] == [("", "ENOENT")]
