"""runqlen end to end: spinners the test pins to one CPU.

runqlen counts, per sample, the tasks queued on the CFS run queue of the
task the sample interrupts, less that task. The test filters the samples
to its spinners (-p): a sample counts only when it interrupts one of
them, on their CPU, and reads their run queue. That makes it exact:
- two SCHED_OTHER spinners pinned to one CPU, in one cgroup, are both
  always runnable on that CPU's run queue of their group: every sample
  reads at least 2 tasks, a length of at least 1 (more when another task
  of their group waits there too), and no other CPU has a sample;
- a spinner alone in a CPU cgroup of its own has a run queue of its own
  on its CPU: every sample reads a length of 0, as on an idle CPU.
Unfiltered, on this busy 2-CPU host (and the VM matrix's, where the test
itself and the tool run), no CPU can be made idle, nor can a length on it
be known: those histograms are checked for form only.

How many samples there are depends on the load: the test waits until
the spinners have run SPIN_NS of CPU time under tracing (schedstat), in
which the 99 Hz per-CPU timer fires about 20 times on their CPU; it
asserts at least one."""
import os
import re
import subprocess
import sys

import pytest

from conftest import Tool, json_lines, loss_record, run, wait_on_cpu

CPU = max(os.sched_getaffinity(0))
SPIN_NS = 200 * 1000 * 1000
SPIN = "import os, sys\nos.sched_setaffinity(0, {int(sys.argv[1])})\nprint(flush=True)\nwhile True: pass\n"


class Spinners:
    def __init__(self, n):
        self.procs = [subprocess.Popen([sys.executable, "-c", SPIN, str(CPU)],
                                       stdout=subprocess.PIPE) for _ in range(n)]
        self.pids = [p.pid for p in self.procs]
        # Each says when sched_setaffinity has returned: it is on CPU, in
        # its loop, and never blocks again. Its affinity reads {CPU}
        # before that, while it still waits in the call for the stopper
        # to move it, off every run queue (a sample of the other then
        # read a queue of 0: once in arm64's TCG matrix).
        for p in self.procs:
            assert p.stdout.readline() == b"\n", "a spinner did not start"

    def run_for(self, ns, timeout=60):
        """Until each spinner has run ns more on its CPU."""
        assert wait_on_cpu(self.pids, ns, timeout), "the spinners did not run"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
            p.wait()


def trace(spinners, *args, env=None):
    with Tool("runqlen", *args, "-p", ",".join(map(str, spinners.pids)), env=env) as tool:
        spinners.run_for(SPIN_NS)
        out, err, rc = tool.stop()
    assert rc == 0, err
    return out


def records(out):
    recs = json_lines(out)
    assert loss_record(recs) == {"type": "loss", "events_lost": 0, "map_inserts_failed": 0}
    return recs[:-1]


def per_cpu(recs):
    assert [r["cpu"] for r in recs] == list(range(len(recs))), recs
    return recs


@pytest.mark.kernel
def test_two_spinners_queue_on_their_cpu():
    with Spinners(2) as s:
        recs = per_cpu(records(trace(s, "-j", "-C")))
    for r in recs:
        assert r["type"] == "histogram" and r["unit"] == "runqlen" and r["scale"] == "linear"
        if r["cpu"] != CPU:
            assert r["total"] == 0 and r["buckets"] == [], r
    mine = recs[CPU]
    assert mine["total"] > 0, mine
    assert all(b["low"] == b["high"] >= 1 for b in mine["buckets"]), mine


def test_occupancy_of_two_spinners():
    with Spinners(2) as s:
        recs = per_cpu(records(trace(s, "-j", "-C", "-O")))
    for r in recs:
        assert set(r) == {"type", "time", "cpu", "samples", "queued", "percent"}, r
        if r["cpu"] != CPU:
            assert (r["samples"], r["queued"], r["percent"]) == (0, 0, 0), r
    mine = recs[CPU]
    assert mine["samples"] == mine["queued"] > 0 and mine["percent"] == 100, mine


def test_text_histogram_and_occupancy():
    with Spinners(2) as s:
        out = trace(s)
        occ = trace(s, "-O")
        occ_cpus = trace(s, "-O", "-C")
    lines = out.split("\n")
    assert lines[:2] == ["", "     runqlen       : count     distribution"], out
    assert lines[-1] == "" and len(lines) > 3, out
    for line in lines[2:-1]:
        assert re.fullmatch(r"        (\d+) +: (\d+) +\|\**\ *\|", line), line
        assert int(line.split()[0]) >= 1, out
    assert occ == "\nrunqocc: 100.00%\n", occ
    rows = occ_cpus.split("\n")
    assert rows[0] == "" and rows[-1] == "", occ_cpus
    assert [r[:17] for r in rows[1:-1]] == [f"runqocc, CPU {c:<3} " for c in range(len(rows) - 2)]
    assert rows[1 + CPU].endswith(" 100.00%"), occ_cpus


def cpu_cgroup():
    """A directory where a CPU cgroup can be made: cgroup v1's cpu
    hierarchy, or cgroup v2's root when it offers the cpu controller."""
    if os.path.exists("/sys/fs/cgroup/cpu/tasks"):
        return "/sys/fs/cgroup/cpu", "tasks"
    with open("/proc/mounts") as f:
        v2 = [l.split()[1] for l in f if l.split()[2] == "cgroup2"]
    for root in v2:
        with open(os.path.join(root, "cgroup.controllers")) as f:
            if "cpu" in f.read().split():
                with open(os.path.join(root, "cgroup.subtree_control"), "w") as f:
                    f.write("+cpu")
                return root, "cgroup.procs"
    pytest.skip("no CPU controller (cgroup v1 cpu, or cgroup v2 offering cpu) to give a "
                "spinner a run queue of its own")


def test_spinner_alone_on_its_run_queue_reads_zero():
    root, procs = cpu_cgroup()
    path = os.path.join(root, f"tk-runqlen-{os.getpid()}")
    os.mkdir(path)
    try:
        with Spinners(1) as s:
            with open(os.path.join(path, procs), "w") as f:
                f.write(str(s.pids[0]))
            recs = records(trace(s, "-j"))
    finally:
        os.rmdir(path)
    (h,) = recs
    assert "cpu" not in h
    assert h["total"] > 0 and h["buckets"] == [{"low": 0, "high": 0, "count": h["total"]}], h


def test_unfiltered_per_cpu_form_and_interval():
    """Every CPU, 1 s twice with a time line: the form only (module doc)."""
    res = run("runqlen", "-C", "-T", "1", "2", timeout=60)
    assert res.returncode == 0 and res.stderr == "", res.stderr
    ncpu = os.cpu_count()
    parts = re.split(r"\n(\d\d:\d\d:\d\d)\n", res.stdout)
    assert parts[0] == "" and len(parts) == 5, res.stdout
    for body in parts[2::2]:
        assert re.findall(r"^cpu = (\d+)$", body, re.M) == [str(c) for c in range(ncpu)], body


@pytest.mark.parametrize("args, message", [
    (["-f", "0"], "invalid -f/--frequency value '0': expected an integer from 1 to"),
    (["-f", "x"], "invalid -f/--frequency value 'x': expected an integer from 1 to"),
    (["0"], "invalid interval value '0': expected an integer from 1 to 2147483647"),
    (["1", "2", "3"], "unexpected argument '3' after [interval [count]]"),
    (["-H"], "bcc's option '-H' is not in tracekit: the length is the sampled task's CFS run "
             "queue's, as bcc's default"),
    (["-x"], "unknown option '-x'"),
    (["--print-cgroup"], "--print-cgroup is not offered by runqlen: filter by cgroup with --cgroup PATH"),
])
def test_usage_errors(args, message):
    res = run("runqlen", *args)
    assert (res.returncode, res.stdout) == (2, "")
    assert res.stderr.startswith(f"runqlen: {message}") and \
        res.stderr.endswith("; see 'runqlen --help'\n") and res.stderr.count("\n") == 1, res.stderr
