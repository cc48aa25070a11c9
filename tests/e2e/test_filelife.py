"""filelife: the files this test creates and deletes, with their ages.

The test process itself makes the files (os.open with O_CREAT|O_EXCL,
absolute and relative to a directory descriptor), waits, and deletes
them; filelife runs with -p on the test's pid, so every record must be
one of the test's. A file that existed before (opened with O_CREAT but
not made by that open) and one made before tracing began must not be
reported. The age must lie within the interval the test measured around
its create and delete, and be at least the wait between them.

Ways: the kernel functions (fentry, kprobe) where the kernel has them,
and the syscall tracepoints (TRACEKIT_ATTACH=tp) on every kernel."""
import os
import platform
import re
import time

import pytest

from conftest import (Tool, assert_no_kernel_function_tracing, json_lines, kernel_has,
                      loss_record, require, run)

WAIT = 0.2  # seconds between create and delete
COMM = open("/proc/self/comm").read().strip()


def make_and_delete(d):
    """Create, wait, delete the marked files in d; returns {name: (t0, t1)},
    the monotonic times just before each create and just after its delete."""
    old = os.path.join(d, "tk-old-file")          # exists before tracing
    times = {}
    dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    try:
        # Opened with O_CREAT but not made by this open: not a new file.
        os.close(os.open(old, os.O_WRONLY | os.O_CREAT, 0o600))
        t0 = time.monotonic()
        fa = os.open(os.path.join(d, "tk-life-abs"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        fb = os.open("tk-life-rel", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600, dir_fd=dfd)
        os.write(fa, b"x" * 100)
        os.close(fa)
        os.close(fb)
        time.sleep(WAIT)
        os.unlink(os.path.join(d, "tk-life-abs"))
        os.unlink("tk-life-rel", dir_fd=dfd)
        os.unlink(old)
        t1 = time.monotonic()
    finally:
        os.close(dfd)
    times["tk-life-abs"] = times["tk-life-rel"] = (t0, t1)
    return times


def traced(tmp_path, *args, method=None):
    d = str(tmp_path)
    # Made before tracing: its deletion has no known birth.
    open(os.path.join(d, "tk-old-file"), "w").close()
    env = {"TRACEKIT_ATTACH": method} if method else None
    with Tool("filelife", "-p", os.getpid(), *args, env=env) as t:
        times = make_and_delete(d)
        out, err, rc = t.stop()
    assert rc == 0, err
    return out, err, times


def check_records(out, times):
    records = json_lines(out)
    assert loss_record(records) == {"type": "loss", "events_lost": 0,
                                    "map_inserts_failed": 0}
    rs = records[:-1]
    assert sorted(r["file"] for r in rs) == sorted(times), rs
    for r in rs:
        assert set(r) == {"type", "time", "pid", "tid", "uid", "comm", "age_ns", "file"}, r
        assert (r["type"], r["pid"], r["tid"], r["uid"], r["comm"]) == \
            ("filelife", os.getpid(), os.getpid(), os.getuid(), COMM), r
        t0, t1 = times[r["file"]]
        assert WAIT * 1e9 <= r["age_ns"] <= (t1 - t0) * 1e9, (r, t1 - t0)


WAYS = {"tp": "tp", "fentry": "fentry", "kprobe": "kprobe"}
PROBES = {"kf_create": "security_inode_create", "kf_unlink_entry": "vfs_unlink",
          "kf_unlink_exit": "vfs_unlink"}


@pytest.mark.parametrize("method", sorted(WAYS))
@pytest.mark.kernel
def test_reports_the_files_made_and_deleted_with_their_age(tmp_path, method):
    if method != "tp":
        require(method)
    out, err, times = traced(tmp_path, "-j", "-v", method=method)
    check_records(out, times)
    probes = dict(re.findall(r"^filelife: probe (\S+): (\S+) \S+$", err, re.M))
    if method == "tp":
        assert set(probes.values()) == {"tp"} and "tp_unlinkat_enter" in probes, err
        # One exit program for each family of syscalls, on all of theirs.
        n = 2 if platform.machine() == "x86_64" else 1  # arm64 has no unlink(2)
        assert (f"filelife: probe tp_unlinks_exit: tp the unlink syscalls' exits "
                f"({n} tracepoints)") in err.splitlines(), err
        assert "they cannot see mknod(2)" in err
    else:
        ret = "fexit" if method == "fentry" else "kretprobe"
        assert probes == {"kf_create": method, "kf_unlink_entry": method,
                          "kf_unlink_exit": ret}, err


@pytest.mark.kernel
def test_text_columns(tmp_path):
    out, err, times = traced(tmp_path, method="tp")
    lines = out.splitlines()
    assert lines[0] == "TIME     PID     COMM             AGE(s)  FILE"
    rows = sorted(lines[1:], key=lambda l: l.split()[-1])
    assert len(rows) == 2, out
    for row, name in zip(rows, sorted(times)):
        m = re.fullmatch(r"\d\d:\d\d:\d\d (.{7}) (.{16}) (\d+\.\d\d) +(\S+)", row)
        assert m, row
        assert (m[1].strip(), m[2].strip(), m[4]) == (str(os.getpid()), COMM, name), row
        t0, t1 = times[name]
        assert WAIT - 0.005 <= float(m[3]) <= t1 - t0 + 0.005, row


@pytest.mark.kernel
def test_falls_back_to_tracepoints_and_says_what_they_miss():
    """Where the kernel traces no kernel function, -v says why and what
    the tracepoints cannot see; the tool runs on them."""
    if kernel_has("fentry") or kernel_has("kprobe"):
        pytest.skip("this kernel traces kernel functions: no fallback to check")
    r = run("filelife", "-v", "--dry-run")
    assert r.returncode == 0, r.stderr
    assert "filelife: no kernel function tracing (cannot trace kernel function " in r.stderr
    assert "filelife: tracing syscall tracepoints instead; they cannot see mknod(2)" in r.stderr
    assert set(re.findall(r"^probe \S+ (\S+) ", r.stdout, re.M)) == {"tp"}, r.stdout


@pytest.mark.kernel
def test_kernel_functions_only_exits_1_without_them():
    assert_no_kernel_function_tracing("filelife", "security_inode_create", attach="kprobe")


@pytest.mark.parametrize("args,needle", [
    (["-p", "abc"], "--pid"),
    (["5"], "unexpected argument '5'"),
    (["--bogus"], "--bogus"),
    (["-u", "no-such-user-x"], "--uid"),
])
def test_usage_errors_exit_2_one_line(args, needle):
    r = run("filelife", *args)
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("filelife: ") and needle in lines[0] and "--help" in lines[0]
