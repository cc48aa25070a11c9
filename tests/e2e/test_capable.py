"""capable end to end: a workload named for the test (progs/cap_target.c)
makes capability checks whose number, capability and verdict the kernel
decides the same way everywhere: fchown() of its own file to another
owner as root (CAP_CHOWN, allowed), setresgid() and setresuid() to nobody
(CAP_SETGID and CAP_SETUID: the checks of a set*id call), fchown() as
nobody (CAP_CHOWN, denied) and a seccomp filter without no_new_privs
(CAP_SYS_ADMIN, denied, a check made not to be audited: shown only with
-v where the options are seen). capable runs with -p on the workload, so
every record must be one of those."""
import errno
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import (FRAME_POINTERS, READY_TIMEOUT, ROOT, Tool, Workload, assert_no_kernel_function_tracing,
                      has_ksym, json_lines, kernel_has, loss_record, require, run, tool_path)
from test_stackcount import LOSS
from test_trace import STACK_PATHS, stack_tuples

NOBODY = 65534
EPERM = -1
SCRIPT = ["chown 3", "drop", "chown 2", "seccomp"]
SYSCALL_FN = {"x86_64": "__x64_sys_fchown",
              "aarch64": "__arm64_sys_fchown"}.get(os.uname().machine)
FIELDS = {"type", "time", "pid", "tid", "uid", "comm", "cap", "name", "audit", "insetid",
          "verdict", "ret", "error"}


def want(options_seen, non_audit):
    """What SCRIPT's checks are, as (cap, name, uid, ret, audit, insetid):
    audit and insetid None where the probe cannot see the options (the
    tracepoint), which then shows every check."""
    def opts(audit, insetid):
        return (audit, insetid) if options_seen else (None, None)
    rows = ([(0, "CAP_CHOWN", 0, 0, *opts(True, False))] * 3 +
            [(6, "CAP_SETGID", 0, 0, *opts(True, True)),
             (7, "CAP_SETUID", 0, 0, *opts(True, True))] +
            [(0, "CAP_CHOWN", NOBODY, EPERM, *opts(True, False))] * 2)
    if non_audit or not options_seen:
        rows.append((21, "CAP_SYS_ADMIN", NOBODY, EPERM, *opts(False, False)))
    return rows


def seen(records):
    return [(r["cap"], r["name"], r["uid"], r["ret"], r["audit"], r["insetid"])
            for r in records if r["type"] == "cap"]


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    path = tmp_path_factory.mktemp("cap_target") / "cap_target"
    subprocess.run(["cc", "-O0", *FRAME_POINTERS, "-I", str(ROOT / "tests/e2e/progs"),
                    "-o", str(path), str(ROOT / "tests/e2e/progs/cap_target.c")], check=True)
    return str(path)


@pytest.fixture
def shm():
    """A directory for the workload's file on /dev/shm: tmpfs, not stacked.
    (pytest's tmp_path is on overlayfs in the VM matrix, where a chown
    makes two checks: the caller's, then the overlay mounter's on the
    upper layer.)"""
    d = tempfile.mkdtemp(prefix="tk-capable-", dir="/dev/shm")
    try:
        yield Path(d)
    finally:
        shutil.rmtree(d)


def workload(target, d, comm="tkcap"):
    return Workload(target, comm, d / "owned")


def play(w, script=SCRIPT):
    """SCRIPT's commands; the fchown() calls must have done as said."""
    replies = [w.send(c) for c in script]
    for i, (cmd, words) in enumerate(zip(script, replies)):
        if cmd.startswith("chown"):
            denied = int(cmd.split()[1]) if "drop" in script[:i] else 0
            assert words == [str(denied)], (cmd, words)
        if cmd == "seccomp":
            assert words == [str(errno.EACCES)], words


METHODS = ["fentry", "kprobe", "tp_btf", "raw_tp", "tp"]
PROBES = {"fentry": {"kf_cap_entry": "fentry", "kf_cap_exit": "fexit"},
          "kprobe": {"kf_cap_entry": "kprobe", "kf_cap_exit": "kretprobe"}}


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.kernel
def test_checks_exactly(method, target, shm):
    """Each method, with and without -v at once: every check with its
    capability, uid, result and options; the non-audit one only with -v
    where the options are seen."""
    if method in PROBES:
        require(method)
    elif not has_ksym("__traceiter_cap_capable"):
        pytest.skip("no capability:cap_capable tracepoint in this kernel (Linux 6.14)")
    env = {"TRACEKIT_ATTACH": method}
    with workload(target, shm) as w, \
            Tool("capable", "-j", "--verbose", "-p", w.pid, env=env) as quiet, \
            Tool("capable", "-j", "-v", "-p", w.pid, env=env) as verbose:
        play(w)
        out_q, err_q, rc_q = quiet.stop()
        out_v, err_v, rc_v = verbose.stop()
    assert (rc_q, rc_v) == (0, 0), err_q + err_v
    probes = dict(re.findall(r"^capable: probe (\S+): (\S+) \S+$", err_q, re.M))
    options_seen = method in PROBES
    assert probes == PROBES.get(method, {"tp_cap": method}), err_q
    for out, non_audit in ((out_q, False), (out_v, True)):
        records = json_lines(out)
        assert loss_record(records) == {"type": "loss", "events_lost": 0,
                                        "map_inserts_failed": 0}
        assert seen(records) == want(options_seen, non_audit)
        for r in records[:-1]:
            assert set(r) == FIELDS, r
            assert (r["pid"], r["tid"], r["comm"]) == (w.pid, w.pid, "tkcap"), r
            assert (r["verdict"], r["error"]) == (("allow", None) if r["ret"] == 0
                                                  else ("deny", "EPERM")), r


@pytest.mark.kernel
def test_stacks(target, shm):
    """-K: the check's kernel stack from cap_capable down to the system
    call; -U: the user stack from the function that made the call."""
    with workload(target, shm) as w, \
            Tool("capable", "-j", "-K", "-U", "-p", w.pid) as t:
        play(w)
        out, err, rc = t.stop()
    assert rc == 0, err
    records = json_lines(out)
    assert loss_record(records) == LOSS, records[-1]
    assert_chown_stacks(records)


def trampolines():
    """The addresses of the BPF trampolines the kernel names now
    ("ADDR t bpf_trampoline_KEY [bpf]")."""
    with open("/proc/kallsyms") as f:
        return {p[0] for p in map(str.split, f)
                if p[-1] == "[bpf]" and p[2].startswith("bpf_trampoline_")}


@pytest.mark.kernel
def test_stacks_through_a_freed_trampoline(target, shm):
    """A stack taken at fentry went through cap_capable's BPF trampoline,
    whose name goes when the trampoline is freed: as closing the probes
    before the drain at exit may do before the stack is read. Here a
    second capable replaces the trampoline while the first, stopped,
    holds the checks unread; once the kernel no longer names the old
    one, the first reads them. Its stacks still start at cap_capable,
    not at the freed trampoline's bare address."""
    require("fentry")
    before = trampolines()
    with workload(target, shm) as w, \
            Tool("capable", "-j", "-K", "-U", "-p", w.pid, env={"TRACEKIT_ATTACH": "fentry"}) as t:
        old = trampolines() - before
        assert old, "fentry attached, but /proc/kallsyms names no new BPF trampoline"
        os.kill(t.proc.pid, signal.SIGSTOP)
        try:
            play(w)
            with Tool("capable", "-p", w.pid, env={"TRACEKIT_ATTACH": "fentry"}) as other:
                deadline = time.monotonic() + READY_TIMEOUT
                while old & trampolines():
                    assert time.monotonic() < deadline, "the replaced trampoline is still named"
                    time.sleep(0.1)
                other_out, other_err, other_rc = other.stop()
        finally:
            os.kill(t.proc.pid, signal.SIGCONT)
        out, err, rc = t.stop()
    assert (rc, other_rc) == (0, 0), err + other_err
    records = json_lines(out)
    assert loss_record(records) == LOSS, records[-1]
    assert_chown_stacks(records[:-1])


def assert_chown_stacks(records):
    """The five chowns' stacks: one pair, from cap_capable down to the
    system call and from the function that made the call."""
    chowns = [r for r in records if r.get("cap") == 0]
    assert len(chowns) == 5, records
    (pair,) = stack_tuples(chowns)
    kernel = [f.split("+")[0] for f in pair[0]]
    assert kernel[0] == "cap_capable" and SYSCALL_FN in kernel, pair
    user = [f.split("+")[0] for f in pair[1]]
    assert user[:2] == ["chown_as_told", "main"], pair


@pytest.mark.parametrize("transport", ["ringbuf", "perf"])
@pytest.mark.parametrize("path", sorted(STACK_PATHS))
@pytest.mark.kernel
def test_every_check_has_its_stacks_when_the_maps_cannot_keep_them(target, shm, path, transport):
    """SCRIPT's checks with a one-slot stack map, which keeps the first
    stack taken; the others go to the spill map (an eighth of 16384), or
    by their frames (over per-CPU perf buffers, before each check). Every
    check has its exact stacks, and none is lost."""
    opts, env = STACK_PATHS[path]
    with workload(target, shm) as w, \
            Tool("capable", "-j", "--verbose", "-K", "-U", "-p", w.pid, *opts,
                 env=dict(env, TRACEKIT_TRANSPORT=transport)) as t:
        play(w)
        out, err, rc = t.stop()
    assert rc == 0, err
    records = json_lines(out)
    assert loss_record(records) == LOSS, records[-1]
    checks = records[:-1]
    probes = dict(re.findall(r"^capable: probe (\S+): (\S+) \S+$", err, re.M))
    options_seen = "kf_cap_entry" in probes
    # As many of each as made (in perf buffers, one a CPU, the order is
    # lost when the workload moves).
    assert sorted(seen(checks)) == sorted(want(options_seen, False)), checks
    assert all(r["kstack"] and r["ustack"] for r in checks), checks
    assert_chown_stacks(checks)
    stacks = {tuple(r[k]) for r in checks for k in ("kstack", "ustack")}
    if path == "frames":
        assert (f"capable: {len(stacks) - 1} stacks reached userspace by their frames: the stack "
                "map and the spill map could not keep them; 0 ids were shared by two or more "
                "(their events show [... stack unavailable])\n") in err, (stacks, err)
    else:
        assert ("capable: the stack map has 1 slots, the spill map 2048 "
                "(TRACEKIT_STACK_MAP_SLOTS)\n") in err, err
        assert "by their frames" not in err, err


def test_text_columns(target, shm):
    """bcc's columns, VERDICT after AUDIT as libbpf-tools'; -x adds TID and
    INSETID; -K and -U the frames under each check."""
    with workload(target, shm) as w, \
            Tool("capable", "-p", w.pid) as plain, \
            Tool("capable", "-x", "-K", "-U", "-p", w.pid) as extra:
        play(w, ["chown 1", "drop", "chown 1"])
        out_p, err_p, rc_p = plain.stop()
        out_x, err_x, rc_x = extra.stop()
    assert (rc_p, rc_x) == (0, 0), err_p + err_x
    lines = out_p.splitlines()
    assert lines[0] == "TIME      UID    PID     COMM             CAP  NAME                 AUDIT  VERDICT"
    rows = [l[10:] for l in lines[1:]]
    audit = rows[0].split()[5]
    assert audit in ("1", "N/A"), rows
    assert rows == [f"{u:<6} {w.pid:<7} {'tkcap':<16} {c:<4} {n:<20} {audit:<6} {v}"
                    for u, c, n, v in [(0, 0, "CAP_CHOWN", "allow"), (0, 6, "CAP_SETGID", "allow"),
                                       (0, 7, "CAP_SETUID", "allow"),
                                       (NOBODY, 0, "CAP_CHOWN", "deny")]]
    lines = out_x.splitlines()
    assert lines[0] == ("TIME      UID    PID     TID     COMM             CAP  NAME"
                        "                 AUDIT  VERDICT INSETID")
    rows = [l for l in lines[1:] if not l.startswith("        ")]
    insetid = {"1": ("0", "1"), "N/A": ("N/A", "N/A")}[audit]
    assert [r[10:] for r in rows] == [
        f"{u:<6} {w.pid:<7} {w.pid:<7} {'tkcap':<16} {c:<4} {n:<20} {audit:<6} {v:<7} {i}"
        for u, c, n, v, i in [(0, 0, "CAP_CHOWN", "allow", insetid[0]),
                              (0, 6, "CAP_SETGID", "allow", insetid[1]),
                              (0, 7, "CAP_SETUID", "allow", insetid[1]),
                              (NOBODY, 0, "CAP_CHOWN", "deny", insetid[0])]]
    # Each check's frames follow its line: kernel (cap_capable first), then user.
    blocks = re.split(r"^\d\d:\d\d:\d\d .*\n", out_x.split("\n", 1)[1], flags=re.M)[1:]
    assert len(blocks) == 4, out_x
    for i in (0, 3):
        frames = [l.strip().split("+")[0] for l in blocks[i].splitlines()]
        assert frames[0] == "cap_capable" and SYSCALL_FN in frames, blocks[i]
        assert frames[frames.index(SYSCALL_FN):].count("chown_as_told") == 1, blocks[i]
        assert all(l.startswith("        ") for l in blocks[i].splitlines()), blocks[i]


def test_unique_reports_each_check_once(target, shm):
    """--unique: once per process, capability, stacks and verdict."""
    with workload(target, shm) as w, \
            Tool("capable", "-j", "--unique", "-p", w.pid) as bare, \
            Tool("capable", "-j", "--unique", "-K", "-U", "-p", w.pid) as stacks:
        play(w, ["chown 3", "drop", "chown 2", "chown 2"])
        outs = [bare.stop(), stacks.stop()]
    for out, err, rc in outs:
        assert rc == 0, err
        assert [(r["cap"], r["verdict"]) for r in json_lines(out) if r["type"] == "cap"] == \
            [(0, "allow"), (6, "allow"), (7, "allow"), (0, "deny")], out


def test_pid_filter_keeps_only_that_process(target, shm):
    (shm / "a").mkdir()
    (shm / "b").mkdir()
    with workload(target, shm / "a") as a, workload(target, shm / "b") as b, \
            Tool("capable", "-j", "-p", a.pid) as t:
        play(b, ["chown 2"])
        play(a, ["chown 1"])
        play(b, ["chown 2"])
        out, err, rc = t.stop()
    assert rc == 0, err
    assert [(r["pid"], r["cap"]) for r in json_lines(out) if r["type"] == "cap"] == [(a.pid, 0)]


def test_command_is_traced_and_ends_the_tool(target, shm, tmp_path):
    """-- COMMAND: its checks, and the tool ends with it, with its status."""
    out = tmp_path / "out.json"
    r = subprocess.run([tool_path("capable"), "-j", "-o", str(out), "--", target, "tkcap-cmd",
                        str(shm / "owned")], input="chown 2\n", capture_output=True,
                       text=True, timeout=120)
    assert (r.returncode, r.stdout, r.stderr) == (0, "ready\ndone 0\n", "")
    records = json_lines(out.read_text())
    assert [(r["cap"], r["verdict"]) for r in records if r.get("comm") == "tkcap-cmd"] == \
        [(0, "allow")] * 2
    assert records[-1]["type"] == "loss" and records[-1]["events_lost"] == 0


@pytest.mark.kernel
def test_tracepoint_fallback_says_what_it_cannot_see():
    """Where the kernel traces no kernel function, --verbose says why and
    what the tracepoint cannot see; the tool runs on it."""
    if kernel_has("fentry") or kernel_has("kprobe"):
        pytest.skip("this kernel traces kernel functions: no fallback to check")
    if not has_ksym("__traceiter_cap_capable"):
        pytest.skip("no capability:cap_capable tracepoint in this kernel (Linux 6.14)")
    r = run("capable", "--verbose", "--dry-run")
    assert r.returncode == 0, r.stderr
    assert "capable: no kernel function tracing (cannot trace kernel function cap_capable: " \
        in r.stderr
    assert ("capable: tracing tracepoints (capability:cap_capable) instead; they cannot see "
            "a check's options: AUDIT and INSETID are N/A") in r.stderr
    assert re.findall(r"^probe (\S+) (\S+) ", r.stdout, re.M) == [("tp_cap", "tp_btf")]


@pytest.mark.kernel
def test_kernel_functions_only_exits_1_without_them():
    assert_no_kernel_function_tracing("capable", "cap_capable", attach="kprobe")


@pytest.mark.parametrize("args,needle", [
    (["-p", "abc"], "--pid"),
    (["--unique=pid"], "--unique"),
    (["-x", "5"], "unexpected argument '5'"),
    (["--bogus"], "--bogus"),
    (["--stack-storage-size", "8"], "option --stack-storage-size needs -K or -U"),
    (["-K", "--stack-storage-size", "0"], "invalid --stack-storage-size value '0'"),
])
def test_usage_errors_exit_2_one_line(args, needle):
    r = run("capable", *args)
    assert (r.returncode, r.stdout) == (2, ""), r
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("capable: ") and needle in lines[0], r.stderr
