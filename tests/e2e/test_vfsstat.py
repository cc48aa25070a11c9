"""vfsstat: exact counts of the VFS calls a helper process makes.

The helper works in a tmpfs of the test's own: on an overlayfs (such as
/tmp in the VM matrix) the upper filesystem's calls would count too."""
import os
import re
import subprocess
import time

import pytest

from conftest import (Tool, assert_no_kernel_function_tracing, cgroup2_root, cgroup_of, in_syscall,
                      json_lines, kernel_has, loss_record, require, run, tool_path)

METHODS = ["fentry", "kprobe"]
# Probe name: kernel function (the syscalls' by the architecture's prefix).
SYS = {"x86_64": "__x64_sys_", "aarch64": "__arm64_sys_"}[os.uname().machine]
PROBES = {"vfs_read": "vfs_read", "vfs_write": "vfs_write", "sys_fsync": SYS + "fsync",
          "sys_fdatasync": SYS + "fdatasync", "vfs_open": "vfs_open",
          "vfs_create": "vfs_create"}
COLUMNS = ["read", "write", "fsync", "open", "create"]
HEADER = "TIME         READ/s  WRITE/s  FSYNC/s   OPEN/s CREATE/s"
ROW = re.compile(r"(\d\d:\d\d:\d\d):  " + r" +(\d+)" * 5)

HELPER_C = r"""
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* vfs_worker R W F O C DIR: for each byte read on stdin, make R pread()s,
 * W pwrite()s, F fsync()s and F fdatasync()s of DIR/data, O open()s of
 * it, C mknod()s of new regular files in DIR, then write one byte to
 * stdout. vfs_worker nr: print the number of read(). */
int main(int argc, char **argv)
{
	long n[5], i, round = 0;
	char path[4096], node[4200], c;
	int fd, j;

	if (argc == 2 && !strcmp(argv[1], "nr")) {
		printf("%d\n", SYS_read);
		return 0;
	}
	if (argc != 7)
		return 2;
	for (j = 0; j < 5; j++)
		n[j] = atol(argv[j + 1]);
	snprintf(path, sizeof(path), "%s/data", argv[6]);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || pwrite(fd, "x", 1, 0) != 1)
		return 1;
	while (read(0, &c, 1) == 1) {
		round++;
		for (i = 0; i < n[0]; i++)
			if (pread(fd, &c, 1, 0) != 1)
				return 1;
		for (i = 0; i < n[1]; i++)
			if (pwrite(fd, &c, 1, 0) != 1)
				return 1;
		for (i = 0; i < n[2]; i++)
			if (fsync(fd) || fdatasync(fd))
				return 1;
		for (i = 0; i < n[3]; i++) {
			int o = open(path, O_RDONLY);

			if (o < 0)
				return 1;
			close(o);
		}
		for (i = 0; i < n[4]; i++) {
			snprintf(node, sizeof(node), "%s/n%d-%ld-%ld", argv[6],
				 (int)getpid(), round, i);
			if (mknod(node, S_IFREG | 0600, 0))
				return 1;
		}
		if (write(1, "d", 1) != 1)
			return 1;
	}
	return 0;
}
"""

# What one round makes: R pread, W pwrite, F fsync + F fdatasync, O open,
# C mknod; plus the write() that says it is done, and the start of the
# read() it then blocks in (vfs_read is entered before it blocks).
R, W, F, O, C = 1500, 700, 40, 300, 25


def expected(rounds=1):
    return {"read": rounds * (R + 1), "write": rounds * (W + 1), "fsync": rounds * 2 * F,
            "open": rounds * O, "create": rounds * C}


@pytest.fixture(scope="module")
def helper(tmp_path_factory):
    d = tmp_path_factory.mktemp("vfsstat")
    src, exe = d / "vfs_worker.c", d / "vfs_worker"
    src.write_text(HELPER_C)
    subprocess.run(["cc", "-O2", "-Wall", "-Werror", "-o", str(exe), str(src)], check=True)
    nr = int(subprocess.run([str(exe), "nr"], capture_output=True, text=True,
                            check=True).stdout)
    return str(exe), nr


@pytest.fixture
def tmpfs(tmp_path):
    d = tmp_path / "fs"
    d.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "tk-vfsstat", str(d)], check=True)
    yield str(d)
    subprocess.run(["umount", str(d)], check=True)


def blocked_in_read(pid, read_nr):
    """Wait until pid sleeps in read(): what it did before is over."""
    if in_syscall(pid, [read_nr], timeout=10):
        return
    pytest.fail(f"worker {pid} never blocked in read()")


class Worker:
    """The helper, blocked in read() before the tracer starts; go() runs
    one round and returns once it blocks again."""

    def __init__(self, helper, d, counts=(R, W, F, O, C)):
        exe, self.read_nr = helper
        self.proc = subprocess.Popen([exe, *map(str, counts), d], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE)
        self.pid = self.proc.pid
        blocked_in_read(self.pid, self.read_nr)

    def go(self):
        self.proc.stdin.write(b"g")
        self.proc.stdin.flush()
        assert self.proc.stdout.read(1) == b"d"
        blocked_in_read(self.pid, self.read_nr)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.stdin.close()
        assert self.proc.wait(timeout=10) == 0


def probes(stderr):
    """{probe: (method, target)} from -v's "probe NAME: METHOD TARGET" lines."""
    return {m[1]: (m[2], m[3])
            for m in re.finditer(r"^vfsstat: probe (\S+): (\S+) (\S+)$", stderr, re.M)}


def check_method(stderr, method):
    assert probes(stderr) == {p: (method, f) for p, f in PROBES.items()}, stderr


def rows(out):
    """The vfsstat records of a JSON run, checked; and the loss record."""
    records = json_lines(out)
    assert loss_record(records) == {"type": "loss", "events_lost": 0,
                                    "map_inserts_failed": 0}
    rs = records[:-1]
    for i, r in enumerate(rs):
        assert set(r) == {"type", "time", "interval", "seconds", *COLUMNS}, r
        assert r["type"] == "vfsstat" and r["interval"] == i + 1
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", r["time"])
        assert isinstance(r["seconds"], (int, float)) and r["seconds"] > 0
    return rs


def totals(rs):
    return {c: sum(r[c] for r in rs) for c in COLUMNS}


def traced(helper, d, args, method=None, rounds=1, **worker):
    """Run vfsstat ARGS (PID: the worker's) while the worker runs its
    rounds; its records, stderr and the worker."""
    env = {"TRACEKIT_ATTACH": method} if method else None
    with Worker(helper, d, **worker) as w:
        with Tool("vfsstat", *[w.pid if a == "PID" else a for a in args], env=env) as t:
            for _ in range(rounds):
                w.go()
            out, err, rc = t.stop()
    assert rc == 0, err
    return out, err, w


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.kernel
def test_pid_filter_counts_exactly(helper, tmpfs, method):
    require(method)
    out, err, _ = traced(helper, tmpfs, ["-v", "-j", "-p", "PID"], method)
    check_method(err, method)
    assert totals(rows(out)) == expected()


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.kernel
def test_unfiltered_counts_at_least_the_workload(helper, tmpfs, method):
    require(method)
    out, err, _ = traced(helper, tmpfs, ["-v", "-j"], method)
    check_method(err, method)
    got, want = totals(rows(out)), expected()
    assert all(got[c] >= want[c] for c in COLUMNS), (got, want)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.kernel
def test_excluding_filters_count_nothing(helper, tmpfs, method):
    """-p of a sleeping process, -u of another user, -n of another comm:
    nothing of the worker's counts."""
    require(method)
    sleeper = subprocess.Popen(["sleep", "600"])
    try:
        for args in (["-p", sleeper.pid], ["-u", "65534"], ["-n", "no-such-comm"]):
            out, err, _ = traced(helper, tmpfs, ["-v", "-j", *args], method)
            check_method(err, method)
            assert totals(rows(out)) == dict.fromkeys(COLUMNS, 0), args
    finally:
        sleeper.kill()
        sleeper.wait()


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.kernel
def test_including_filters_count_exactly(helper, tmpfs, method):
    """-n (substring of the comm), -u and --tid of the worker."""
    require(method)
    for args in (["-n", "fs_work"], ["-u", "0", "-p", "PID"], ["--tid", "PID"]):
        out, err, _ = traced(helper, tmpfs, ["-v", "-j", *args], method)
        check_method(err, method)
        assert totals(rows(out)) == expected(), args


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.kernel
def test_rounds_across_intervals_add_up(helper, tmpfs, method):
    """Three rounds half a second apart with 1-second intervals: several
    rows, whose counts add up to the three rounds exactly."""
    require(method)
    env = {"TRACEKIT_ATTACH": method}
    with Worker(helper, tmpfs) as w:
        with Tool("vfsstat", "-j", "-p", w.pid, "1", env=env) as t:
            for _ in range(3):
                w.go()
                time.sleep(0.5)
            time.sleep(1.2)
            out, err, rc = t.stop()
    assert rc == 0, err
    rs = rows(out)
    assert len(rs) >= 2
    assert totals(rs) == expected(3)
    # Rows are printed on a schedule of whole intervals from the start,
    # never before their time: a late row (a descheduled tool; 0.18 s
    # under TCG on a loaded host) makes the next one shorter by as much.
    # So each full row ends at its interval's end or later; the last row
    # is cut by SIGINT. (Row seconds are rounded to microseconds.)
    end = 0.0
    for k, r in enumerate(rs[:-1], 1):
        end += r["seconds"]
        assert r["seconds"] > 0 and end >= k - 1e-5 * k, (k, r, rs)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.kernel
def test_text_rates(helper, tmpfs, method):
    """bcc's layout; one row, cut short by SIGINT: the rates are the
    counts over the time the row covers, which lies between the time the
    tracer was ready and stopped, and the time it was started and ended."""
    require(method)
    env = {"TRACEKIT_ATTACH": method}
    with Worker(helper, tmpfs) as w:
        t0 = time.monotonic()
        t = Tool("vfsstat", "-p", w.pid, "100", env=env).start()
        t1 = time.monotonic()
        w.go()
        time.sleep(0.5)
        t2 = time.monotonic()
        out, err, rc = t.stop()
        t3 = time.monotonic()
    assert rc == 0, err
    assert err == ""
    lines = out.splitlines()
    assert lines[0] == HEADER
    assert len(lines) == 2, out
    assert len(lines[1]) == len(HEADER)
    m = ROW.fullmatch(lines[1])
    assert m, lines[1]
    assert_rates(m.groups()[1:], expected(), t3 - t0, t2 - t1)


def assert_rates(rates, counts, longest, shortest):
    """The rates of a row cut short by SIGINT are its counts over the time
    it covers: at most longest (the tool's start to its end), at least
    shortest (from ready to the signal)."""
    rates = dict(zip(COLUMNS, map(int, rates)))
    for c, n in counts.items():
        assert n / longest - 1 <= rates[c] <= n / shortest + 1, (c, rates, longest, shortest)


@pytest.mark.kernel
def test_interval_and_count_end_by_themselves():
    if not kernel_has("fentry"):
        require("kprobe")
    with Tool("vfsstat", "-j", "1", "2") as t:
        start = time.monotonic()
        out, err, rc = t.wait(timeout=30)
        elapsed = time.monotonic() - start
    assert rc == 0, err
    rs = rows(out)
    assert len(rs) == 2
    # On their schedule or later (test_rounds_across_intervals_add_up):
    # no upper bound a loaded TCG guest could pass; ending by itself
    # within wait()'s 30 s is the test.
    assert rs[0]["seconds"] >= 1 - 1e-5 and rs[0]["seconds"] + rs[1]["seconds"] >= 2 - 2e-5, rs
    assert elapsed > 1.8
    with Tool("vfsstat", "1", "2") as t:
        out, err, rc = t.wait(timeout=30)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == HEADER and len(lines) == 3, out
    assert all(ROW.fullmatch(l) for l in lines[1:]), out


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.kernel
def test_dry_run_names_the_method(method):
    require(method)
    r = run("vfsstat", "--dry-run", env={"TRACEKIT_ATTACH": method})
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [f"probe {p} {method} {f}" for p, f in PROBES.items()]


@pytest.mark.parametrize("attach", [None, "kprobe"])
@pytest.mark.kernel
def test_no_kernel_function_tracing_fails_in_one_line(attach):
    assert_no_kernel_function_tracing("vfsstat", "vfs_read", attach=attach)


def test_help():
    r = run("vfsstat", "--help")
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout.startswith("Usage: vfsstat [OPTION...] [interval [count]] [-- COMMAND [ARG...]]\n")
    for word in ["vfs_read", "vfs_write", "vfs_open", "vfs_create", "fsync(2)", "fdatasync(2)"]:
        assert word in r.stdout


@pytest.mark.parametrize("args,words", [
    (["0"], ["interval", "'0'"]),
    (["x"], ["interval", "'x'"]),
    (["1", "0"], ["count", "'0'"]),
    (["1", "2", "3"], ["'3'"]),
    (["-p", "x"], ["--pid", "'x'"]),
    (["-n", ""], ["--name"]),
    (["--bogus"], ["'--bogus'"]),
    (["-Q"], ["'-Q'"]),
])
def test_usage_errors(args, words):
    r = run("vfsstat", *args)
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.endswith("\n"), r.stderr
    assert r.stderr.startswith("vfsstat: ")
    for w in words:
        assert w in r.stderr, r.stderr


# --print-cgroup: worker A in a cgroup the test makes, worker B outside it
# (in the test's own), with other counts.
B_COUNTS = (200, 100, 10, 50, 5)


def b_expected():
    r, w, f, o, c = B_COUNTS
    return {"read": r + 1, "write": w + 1, "fsync": 2 * f, "open": o, "create": c}


def traced_in_cgroup(helper, tmpfs, args, method=None):
    """Run vfsstat ARGS (PIDS: both workers') while A, moved into a cgroup
    of the test's, and B run a round each, in directories of their own.
    Its output, stderr, A's and B's cgroup paths, their cgroup ids, and
    the longest and shortest time that the tool can have counted for:
    from before its start to after its end, from ready to SIGINT."""
    name = f"tk-vfsstat-print-cgroup-{os.getpid()}"
    cg_dir = os.path.join(cgroup2_root(), name)
    env = {"TRACEKIT_ATTACH": method} if method else None
    for d in ("a", "b"):
        os.mkdir(os.path.join(tmpfs, d))
    os.mkdir(cg_dir)
    try:
        with Worker(helper, os.path.join(tmpfs, "a")) as a, \
             Worker(helper, os.path.join(tmpfs, "b"), counts=B_COUNTS) as b:
            with open(os.path.join(cg_dir, "cgroup.procs"), "w") as f:
                f.write(str(a.pid))
            paths = [cgroup_of(a.pid), cgroup_of(b.pid)]
            assert paths[0] == "/" + name
            ids = [os.stat(cgroup2_root() + p.rstrip("/")).st_ino for p in paths]
            pids = f"{a.pid},{b.pid}"
            t0 = time.monotonic()
            with Tool("vfsstat", *[pids if x == "PIDS" else x for x in args], env=env) as t:
                t1 = time.monotonic()
                a.go()
                b.go()
                t2 = time.monotonic()
                out, err, rc = t.stop()
            t3 = time.monotonic()
    finally:
        os.rmdir(cg_dir)
    assert rc == 0, err
    return out, err, paths, ids, (t3 - t0, t2 - t1)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.kernel
def test_print_cgroup_counts_each_cgroup_exactly(helper, tmpfs, method):
    """JSON: a record per cgroup per interval (with calls), "cgroup" its
    path; each cgroup's records add up to its worker's calls."""
    require(method)
    out, err, (cg_a, cg_b), _, _ = traced_in_cgroup(
        helper, tmpfs, ["-v", "-j", "--print-cgroup", "-p", "PIDS"], method)
    check_method(err, method)
    records = json_lines(out)
    assert loss_record(records) == {"type": "loss", "events_lost": 0,
                                    "map_inserts_failed": 0}
    sums = {}
    for r in records[:-1]:
        assert set(r) == {"type", "time", "interval", "seconds", "cgroup", *COLUMNS}, r
        assert r["type"] == "vfsstat" and any(r[c] for c in COLUMNS), r
        got = sums.setdefault(r["cgroup"], dict.fromkeys(COLUMNS, 0))
        for c in COLUMNS:
            got[c] += r[c]
    assert sums == {cg_a: expected(), cg_b: b_expected()}


@pytest.mark.kernel
def test_print_cgroup_text_column(helper, tmpfs):
    """Text: one interval cut short by SIGINT, a row per cgroup in the
    order of their ids, the path in a last column CGROUP; the rates are
    each cgroup's own counts over the time the row covers."""
    if not kernel_has("fentry"):
        require("kprobe")
    out, err, paths, ids, (longest, shortest) = traced_in_cgroup(
        helper, tmpfs, ["--print-cgroup", "-p", "PIDS", "100"])
    assert err == ""
    lines = out.splitlines()
    assert lines[0] == HEADER + " CGROUP"
    rows = sorted(zip(ids, paths, (expected(), b_expected())))
    assert [l[len(HEADER) + 1:] for l in lines[1:]] == [path for _, path, _ in rows]
    for line, (_, _, counts) in zip(lines[1:], rows):
        m = ROW.fullmatch(line[:len(HEADER)])
        assert m and line[len(HEADER)] == " ", line
        assert_rates(m.groups()[1:], counts, longest, shortest)


@pytest.mark.kernel
def test_print_cgroup_names_the_command_cgroup(helper, tmpfs):
    """-- COMMAND runs in tracekit-vfsstat-PID, beside the cgroup the tool
    was started in: every record is of it."""
    if not kernel_has("fentry"):
        require("kprobe")
    exe, _ = helper
    p = subprocess.Popen([tool_path("vfsstat"), "-j", "--print-cgroup", "100", "--",
                          "sh", "-c", f"printf g | {exe} 30 20 1 10 2 {tmpfs} >/dev/null"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate(timeout=120)
    assert (p.returncode, err) == (0, "")
    expected_cg = cgroup_of(os.getpid()).rstrip("/") + f"/tracekit-vfsstat-{p.pid}"
    records = json_lines(out)[:-1]
    assert [r["cgroup"] for r in records] == [expected_cg]
    # One round (one byte on stdin): an fsync, an fdatasync, two mknods;
    # sh and printf make none of these.
    assert (records[0]["fsync"], records[0]["create"]) == (2, 2)
