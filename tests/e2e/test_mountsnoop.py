"""mountsnoop end to end: a child in a mount namespace of its own makes a
known list of mount calls, old API and new, some failing; the tool must
report exactly those calls, with their arguments and results."""
import json
import os
import re
import shutil
import subprocess
import uuid

import pytest

from conftest import Tool, json_lines, loss_record, run, tool_path

PYTHON = "/usr/bin/python3"

# The child: unshare a mount namespace (its mounts die with it), make the
# calls, print one JSON line per call made (name, result or -errno) and
# a last line with its pid and mount namespace. x86_64 numbers; a call
# the kernel has not (ENOSYS) is listed with its error, and the tool,
# which has no tracepoint for it, must not report it.
CHILD = r"""
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
NR = {"open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431,
      "fsmount": 432, "fspick": 433, "mount_setattr": 442}
d, mark = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
calls = []

def call(name, f, *args):
    ctypes.set_errno(0)
    r = f(*args)
    r = r if r >= 0 else -ctypes.get_errno()
    calls.append((name, r))
    return r

def sysc(name, *args):
    return call(name, libc.syscall, NR[name], *args)

if libc.unshare(0x00020000) != 0:          # CLONE_NEWNS
    sys.exit("unshare failed")
call("mount", libc.mount, None, b"/", None, 0x4000 | 0x40000, None)  # MS_REC|MS_PRIVATE
call("mount", libc.mount, mark, d, b"tmpfs", 2 | 4, b"size=1m,mode=700")
call("umount", libc.umount2, d, 0)
call("mount", libc.mount, b"none", d, b"tkbogusfs", 0, None)
call("umount", libc.umount2, d, 2)        # MNT_DETACH, nothing mounted: EINVAL
fd = sysc("fsopen", b"tmpfs", 1)
sysc("fsconfig", fd, 1, b"size", b"1m", 0)
sysc("fsconfig", fd, 1, b"tkbogus", b"x", 0)
sysc("fsconfig", fd, 6, None, None, 0)
mfd = sysc("fsmount", fd, 1, 0x4 | 0x10)
sysc("move_mount", mfd, b"", -100, d, 4)
sysc("open_tree", -100, d, 1 | 0o2000000)
sysc("fspick", -100, d, 1)
attr = (ctypes.c_uint64 * 4)(1, 0, 0, 0)
sysc("mount_setattr", -100, d, 0, ctypes.byref(attr), 32)
call("umount", libc.umount2, d, 2)
for c in calls:
    print(json.dumps(c))
print(os.getpid(), os.stat("/proc/self/ns/mnt").st_ino, flush=True)
"""

ENOSYS = 38


def expected_calls(d, mark, results):
    """The CALL column of each call the child made, in order, with the
    results it saw; calls the kernel has not (ENOSYS) left out."""
    fmt = [
        'mount(NULL, "/", NULL, MS_REC|MS_PRIVATE, NULL)',
        f'mount("{mark}", "{d}", "tmpfs", MS_NOSUID|MS_NODEV, "size=1m,mode=700")',
        f'umount("{d}", 0x0)',
        f'mount("none", "{d}", "tkbogusfs", 0x0, NULL)',
        f'umount("{d}", MNT_DETACH)',
        'fsopen("tmpfs", FSOPEN_CLOEXEC)',
        'fsconfig({fd}, FSCONFIG_SET_STRING, "size", "1m", 0)',
        'fsconfig({fd}, FSCONFIG_SET_STRING, "tkbogus", "x", 0)',
        'fsconfig({fd}, FSCONFIG_CMD_CREATE, NULL, NULL, 0)',
        'fsmount({fd}, FSMOUNT_CLOEXEC, MOUNT_ATTR_NODEV|MOUNT_ATTR_NOATIME)',
        f'move_mount({{mfd}}, "", AT_FDCWD, "{d}", MOVE_MOUNT_F_EMPTY_PATH)',
        f'open_tree(AT_FDCWD, "{d}", OPEN_TREE_CLONE|OPEN_TREE_CLOEXEC)',
        f'fspick(AT_FDCWD, "{d}", FSPICK_CLOEXEC)',
        f'mount_setattr(AT_FDCWD, "{d}", 0x0, {{{{attr_set=MOUNT_ATTR_RDONLY, '
        'attr_clr=0x0, propagation=0x0, userns_fd=0}}, 32)',
        f'umount("{d}", MNT_DETACH)',
    ]
    fd, mfd = results[5][1], results[9][1]
    names = {0: "0", -2: "-ENOENT", -19: "-ENODEV", -22: "-EINVAL"}
    out = []
    for (name, ret), f in zip(results, fmt, strict=True):
        if ret == -ENOSYS:
            continue
        out.append((name, f.format(fd=fd, mfd=mfd) + " = " + names.get(ret, str(ret))))
    return out


class Child:
    def __init__(self, stdout):
        *calls, last = stdout.splitlines()
        self.results = [tuple(json.loads(c)) for c in calls]
        self.pid, self.mnt_ns = map(int, last.split())


def make_calls(d, mark):
    p = subprocess.run([PYTHON, "-c", CHILD, d, mark], capture_output=True,
                       text=True, check=True)
    return Child(p.stdout)


@pytest.fixture
def target(tmp_path):
    d = tmp_path / "mnt"
    d.mkdir()
    return str(d), "tkmnt-" + uuid.uuid4().hex[:12]


@pytest.mark.kernel
def test_exact_calls_json(target):
    d, mark = target
    with Tool("mountsnoop", "-j") as t:
        child = make_calls(d, mark)
        out, err, rc = t.stop()
    assert rc == 0, err
    # The results the child saw: the old API's exactly as chosen.
    assert child.results[:5] == [("mount", 0), ("mount", 0), ("umount", 0),
                                 ("mount", -19), ("umount", -22)]
    recs = json_lines(out)
    mine = [r for r in recs if r["type"] == "mount" and r["pid"] == child.pid]
    assert [(r["syscall"], r["call"]) for r in mine] == [
        (n, c) for n, c in expected_calls(d, mark, child.results)]
    for r in mine:
        assert (r["tid"], r["uid"], r["comm"], r["mnt_ns"]) == (
            child.pid, 0, "python3", child.mnt_ns)
        assert r["ppid"] == os.getpid() and r["pcomm"] != ""
    m = mine[1]
    assert m["args"] == {"source": mark, "target": d, "fstype": "tmpfs",
                         "flags": 6, "data": "size=1m,mode=700"}
    assert (m["ret"], "error" in m) == (0, False)
    bad = mine[3]
    assert (bad["ret"], bad["error"]) == (-19, "ENODEV")
    assert bad["args"]["data"] is None
    assert loss_record(recs) == {"type": "loss", "events_lost": 0, "map_inserts_failed": 0}


@pytest.mark.kernel
def test_new_mount_api_where_the_kernel_has_it(target):
    """fsopen .. fspick came in 5.2, mount_setattr in 5.12: where the child
    got ENOSYS the tool has no tracepoint and says so in -v."""
    d, mark = target
    with Tool("mountsnoop", "-j", "-v") as t:
        child = make_calls(d, mark)
        out, err, rc = t.stop()
    assert rc == 0, err
    missing = {n for n, r in child.results if r == -ENOSYS}
    for n in missing:
        assert f"{n}(): no syscalls:sys_enter_{n} tracepoint on this kernel; not traced" in err
    probes = {l.split()[2].rstrip(":") for l in err.splitlines()
              if l.startswith("mountsnoop: probe ")}
    every = {"mount", "umount", "fsopen", "fsconfig", "fsmount", "move_mount",
             "open_tree", "fspick", "mount_setattr"}
    assert probes == {f"{n}_{w}" for n in every - missing for w in ("enter", "exit")}
    res = dict((n, r) for n, r in child.results)
    if "mount_setattr" not in missing:
        assert res["mount_setattr"] == 0
    recs = [r for r in json_lines(out) if r["type"] == "mount" and r["pid"] == child.pid]
    seen = [r["syscall"] for r in recs]
    assert seen == [n for n, r in child.results if r != -ENOSYS]
    if "fsmount" not in missing:
        [fsm] = [r for r in recs if r["syscall"] == "fsmount"]
        assert fsm["args"] == {"fs_fd": res["fsopen"], "flags": 1, "attr_flags": 0x14}
        assert fsm["ret"] == res["fsmount"] and fsm["ret"] >= 0


def test_text_columns_and_parent(target):
    d, mark = target
    with Tool("mountsnoop", "-P") as t:
        child = make_calls(d, mark)
        out, err, rc = t.stop()
    assert rc == 0, err
    header, *lines = out.splitlines()
    assert header.split() == ["COMM", "PID", "TID", "PCOMM", "PPID", "MNT_NS", "CALL"]
    pcomm = open(f"/proc/{os.getpid()}/comm").read().strip()[:15]
    want = [f"{'python3':<16} {child.pid:<7} {child.pid:<7} {pcomm:<16} {os.getpid():<7} "
            f"{child.mnt_ns:<11} {c}" for _, c in expected_calls(d, mark, child.results)]
    assert [l for l in lines if f" {child.pid} " in l] == want


def test_time_column_letter_t(target):
    """libbpf-tools' -t: a wall-clock TIME column first."""
    d, mark = target
    with Tool("mountsnoop", "-t", "-p", os.getpid()) as t:
        out, err, rc = t.stop()
    assert rc == 0, err
    assert out.split() == ["TIME", "COMM", "PID", "TID", "MNT_NS", "CALL"]


@pytest.mark.kernel
def test_pid_filter_excludes_others(target):
    d, mark = target
    with Tool("mountsnoop", "-j", "-p", os.getpid()) as t:
        make_calls(d, mark)
        out, err, rc = t.stop()
    assert rc == 0, err
    assert json_lines(out) == [{"type": "loss", "events_lost": 0, "map_inserts_failed": 0,
                             "runs_missed": 0}]


def test_command_traces_only_it(target, tmp_path):
    """-- COMMAND: its calls, exactly, and the tool ends with it."""
    d, mark = target
    out = tmp_path / "out.json"
    p = subprocess.run([tool_path("mountsnoop"), "-j", "-o", out, "--", PYTHON, "-c",
                        CHILD, d, mark], capture_output=True, text=True, timeout=120)
    assert (p.returncode, p.stderr) == (0, "")
    child = Child(p.stdout)
    recs = json_lines(out.read_text())
    assert [(r["pid"], r["syscall"], r["call"]) for r in recs if r["type"] == "mount"] == [
        (child.pid, n, c) for n, c in expected_calls(d, mark, child.results)]
    assert loss_record(recs)["events_lost"] == 0


STRACED = "mount,umount2,fsopen,fsconfig,fsmount,move_mount,open_tree,fspick,mount_setattr"


def normal(call):
    """A call as strace and mountsnoop both print it: umount2 by its
    kernel name, no flags as 0, one space before =, -1 ERRNO (text) as -ERRNO, no comments."""
    call = re.sub(r"^umount2\(", "umount(", call)
    call = re.sub(r"\b0x0\b", "0", call)
    call = re.sub(r" /\* .*? \*/", "", call)
    call = re.sub(r"\) +=", ") =", call)    # strace's alignment
    return re.sub(r"\) += -1 (E[A-Z]+) \(.*\)$", r") = -\1", call)


@pytest.mark.skipif(not shutil.which("strace"), reason="strace is not installed")
def test_same_calls_as_strace(target, tmp_path):
    """strace answers the same question for the child: every call, its
    arguments and its result, alike once spelled alike."""
    d, mark = target
    log = tmp_path / "strace.log"
    with Tool("mountsnoop", "-j") as t:
        p = subprocess.run(["strace", "-qq", "-e", "signal=none", "-e", f"trace={STRACED}",
                            "-o", log, PYTHON, "-c", CHILD, d, mark],
                           capture_output=True, text=True, check=True)
        out, err, rc = t.stop()
    assert rc == 0, err
    child = Child(p.stdout)
    traced = [normal(l) for l in log.read_text().splitlines()]
    mine = [normal(r["call"]) for r in json_lines(out)
            if r["type"] == "mount" and r["pid"] == child.pid]
    assert mine == [c for c in traced if "ENOSYS" not in c]
    assert len(mine) >= 5


# mount a tmpfs on argv[1] and unmount it, in a namespace of its own.
MOUNT_ONCE = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
assert libc.unshare(0x00020000) == 0
d = os.fsencode(sys.argv[1])
libc.mount(None, b"/", None, 0x4000 | 0x40000, None)
assert libc.mount(b"tkesc", d, b"tmpfs", 0, b"mode=700") == 0
assert libc.umount2(d, 0) == 0
print(os.getpid(), flush=True)
"""


def test_strings_escaped_one_line(tmp_path):
    """A target with a quote, a backslash, a newline, a tab and UTF-8:
    C escapes in the text (one line per call), the bytes in JSON."""
    d = tmp_path / 'a"b\\c\nd\te\u00e9'
    d.mkdir()
    with Tool("mountsnoop") as t, Tool("mountsnoop", "-j") as tj:
        pid = int(subprocess.run([PYTHON, "-c", MOUNT_ONCE, d], capture_output=True,
                                 text=True, check=True).stdout)
        out, err, rc = t.stop()
        jout, jerr, jrc = tj.stop()
    assert (rc, jrc) == (0, 0), err + jerr
    quoted = '"' + str(tmp_path) + '/a\\"b\\\\c\\nd\\te\\xc3\\xa9"'
    assert [l.split(None, 4)[4] for l in out.splitlines()[1:] if f" {pid} " in l] == [
        'mount(NULL, "/", NULL, MS_REC|MS_PRIVATE, NULL) = 0',
        f'mount("tkesc", {quoted}, "tmpfs", 0x0, "mode=700") = 0',
        f'umount({quoted}, 0x0) = 0']
    targets = [r["args"]["target"] for r in json_lines(jout)
               if r["type"] == "mount" and r["pid"] == pid]
    assert targets == ["/", str(d), str(d)]


@pytest.mark.parametrize("args,needle", [
    (["-p", "abc"], "--pid"),
    (["-x"], "-x"),
    (["-d", "0"], "--duration"),
    (["stray"], "stray"),
    (["--tid", "0"], "--tid value '0'"),
    (["--cgroupmap", "/sys/fs/bpf/m"], "bcc's option '--cgroupmap' is not in tracekit"),
    (["--mntnsmap", "/sys/fs/bpf/m"], "bcc's option '--mntnsmap' is not in tracekit"),
])
def test_usage_errors_exit_2_one_line(args, needle):
    r = run("mountsnoop", *args)
    assert (r.returncode, r.stdout) == (2, "")
    [line] = r.stderr.splitlines()
    assert line.startswith("mountsnoop: ") and needle in line and "--help" in line


def test_help_names_calls_and_options():
    r = run("mountsnoop", "--help")
    assert r.returncode == 0
    for s in ("fsopen(), fsconfig()", "mount_setattr", "-P, --parent-process",
              "4095 bytes", "Examples:"):
        assert s in r.stdout, s
    assert run("mountsnoop", "--parent_process", "-d", "0.1").returncode == 0
