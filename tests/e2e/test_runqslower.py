"""runqslower end to end: a victim made to wait on the run queue behind a
spinner, both pinned to one CPU, must be reported once, with its wait and
the spinner as the task it took the CPU from.

The two are SCHED_FIFO at the same priority: the victim, woken by the
test while the spinner runs, cannot preempt it (FIFO never preempts its
own priority) and, once the spinner blocks, is the next task on that CPU
before any normal task (a kworker or an unpinned process that would
otherwise slip in between and be the previous task). The spinner, told to
go, spins until the kernel shows the victim runnable (/proc state R),
then SPIN_MS more, then blocks: the victim's wait is at least SPIN_MS, and
at most the time from the test's wakeup to the victim's answer, which the
test measures. The victim then answers and blocks: it waits nowhere else
(no normal task preempts it), so its one wait is the one line.

A SCHED_OTHER spinner would not do for an exact test: a normal task
woken on that CPU may run between the spinner and the victim, and the
"previous task" would be that one."""
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import Tool, json_lines, loss_record, run

SPIN_MS = 30
CPU = max(os.sched_getaffinity(0))
VICTIM, SPINNER = "rqs-victim", "rqs-spinner"

WORKLOAD = r"""
import os, sys, time
role, cpu, go, out, n, other = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
os.sched_setaffinity(0, {cpu})
os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
with open("/proc/self/comm", "w") as f:
    f.write(role)
status = os.open("/proc/self/status", os.O_RDONLY)
# Says word and this task's voluntary switches so far: the next one is
# the read that follows, which the test waits for.
def say(word):
    text = os.pread(status, 8192, 0).decode()
    nvcsw = text.split("\nvoluntary_ctxt_switches:")[1].split()[0]
    os.write(out, f"{word} {nvcsw}\n".encode())
say("r")
while True:
    os.read(go, 1)
    if role == "rqs-spinner":
        victim = f"/proc/{os.read(go, 16).decode().strip()}/stat"
        os.write(out, b"spinning\n")
        # Until the victim is runnable (queued behind us), then n ms more.
        while open(victim).read().rsplit(")", 1)[1].split()[0] != "R":
            pass
        end = time.monotonic() + n / 1000
        while time.monotonic() < end:
            pass
    say("d")
"""


class Task:
    """One of the pair, blocked in a read of its go pipe when idle."""

    def __init__(self, role):
        go_r, self.go_w = os.pipe()
        out_r, out_w = os.pipe()
        self.proc = subprocess.Popen(
            [sys.executable, "-c", WORKLOAD, role, str(CPU), str(go_r), str(out_w),
             str(SPIN_MS), ""], pass_fds=(go_r, out_w), start_new_session=True)
        os.close(go_r)
        os.close(out_w)
        self.pid = self.proc.pid
        self.out = os.fdopen(out_r, "rb", buffering=0)
        self.off_cpu(self.expect("r"))

    def expect(self, want):
        word, *rest = self.out.readline().decode().split()
        assert word == want, (word, want)
        return int(rest[0]) if rest else None

    def voluntary_switches(self):
        with open(f"/proc/{self.pid}/status") as f:
            return int([l for l in f if l.startswith("voluntary_ctxt_switches:")][0].split()[1])

    def off_cpu(self, nvcsw, timeout=10):
        """Until it has switched out in the read after its word."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.voluntary_switches() > nvcsw:
                return
            time.sleep(0.001)
        raise AssertionError(f"{self.pid} did not block in its read")

    def close(self):
        os.killpg(self.pid, signal.SIGKILL)
        self.proc.wait()
        os.close(self.go_w)
        self.out.close()


def make_wait(spinner, victim):
    """The victim's wait behind the spinner; (at least, at most) its
    length in ns (module doc)."""
    os.write(spinner.go_w, b"g")
    os.write(spinner.go_w, f"{victim.pid}\n".encode())
    assert spinner.out.readline() == b"spinning\n"
    t0 = time.monotonic_ns()
    os.write(victim.go_w, b"g")
    nvcsw = victim.expect("d")
    most = time.monotonic_ns() - t0
    victim.off_cpu(nvcsw)
    spinner.off_cpu(spinner.expect("d"))
    return SPIN_MS * 1000000, most


def trace(*args, env=None, filter_by="-p"):
    """runqslower ARGS over one wait of the victim; (out, victim pid,
    spinner pid, wait bounds). filter_by: the option given the victim's
    id (None: none)."""
    spinner, victim = Task(SPINNER), Task(VICTIM)
    try:
        ids = [filter_by, victim.pid] if filter_by else []
        with Tool("runqslower", *args, *ids, env=env) as tool:
            bounds = make_wait(spinner, victim)
            out, err, rc = tool.stop()
    finally:
        spinner.close()
        victim.close()
    assert rc == 0, err
    return out, victim.pid, spinner.pid, bounds


def records(out):
    recs = json_lines(out)
    assert loss_record(recs) == {"type": "loss", "events_lost": 0, "map_inserts_failed": 0}
    return recs[:-1]


@pytest.mark.parametrize("method", ["tp_btf", "raw_tp"])
@pytest.mark.kernel
def test_wait_behind_spinner_json(method):
    out, victim, spinner, (least, most) = trace("-j", "-v", env={"TRACEKIT_ATTACH": method})
    (r,) = records(out)
    assert set(r) == {"type", "time", "pid", "tid", "comm", "lat_ns", "prev_pid", "prev_tid",
                      "prev_comm"}
    assert (r["type"], r["pid"], r["tid"], r["comm"]) == ("runqslower", victim, victim, VICTIM)
    assert (r["prev_pid"], r["prev_tid"], r["prev_comm"]) == (spinner, spinner, SPINNER)
    assert least <= r["lat_ns"] <= most, (r, least, most)


def test_text_previous_columns_are_bccs():
    out, victim, spinner, (least, most) = trace("-P")
    head, cols, line, end = out.split("\n")
    assert (head, end) == ("Tracing run queue latency higher than 10000 us", "")
    assert cols == "TIME     COMM             TID           LAT(us) PREV COMM        PREV TID"
    assert line[:8].count(":") == 2 and line[8] == " ", line
    assert line[9:] == f"{VICTIM:<16} {victim:<6} {line[33:47]} {SPINNER:<16} {spinner:<6}", line
    assert least // 1000 <= int(line[33:47]) <= most // 1000, line


def test_text_without_previous():
    out, victim, _, (least, most) = trace()
    head, cols, line, end = out.split("\n")
    assert cols == "TIME     COMM             TID           LAT(us)"
    assert line[9:] == f"{VICTIM:<16} {victim:<6} {line[33:47]}", line
    assert least // 1000 <= int(line[33:47]) <= most // 1000, line


def test_tid_filter_and_threshold():
    """-t TID (bcc's letter for --tid); min_us 0 reports every wait, and a
    threshold above the wait none."""
    out, victim, spinner, _ = trace("-j", "0", filter_by="-t")
    recs = records(out)
    assert {r["tid"] for r in recs} == {victim}
    assert [r["prev_tid"] for r in recs if r["lat_ns"] >= SPIN_MS * 1000000] == [spinner]
    out, _, _, (_, most) = trace("-j", str(10 * 1000 * 1000))
    assert records(out) == []


def test_comm_filter_judges_task_when_it_leaves_the_cpu():
    """-n: the victim, asleep when tracing began, is judged only as it
    leaves a CPU: its first wakeup is not seen (the runqlat rule)."""
    out, _, _, _ = trace("-j", "-n", VICTIM, filter_by=None)
    assert records(out) == []


@pytest.mark.parametrize("args, message", [
    (["abc"], "invalid min_us value 'abc': expected an integer from 0 to 1000000000"),
    (["-1"], "unknown option '-1'"),
    (["1", "2"], "unexpected argument '2' after min_us"),
    (["--print-cgroup"], "--print-cgroup is not offered by runqslower: filter by cgroup with --cgroup PATH"),
    (["-t"], "option '-t' needs a value"),
    (["-P=1"], "unknown option '-='"),
    (["--previous=1"], "option '--previous' takes no value"),
])
def test_usage_errors(args, message):
    res = run("runqslower", *args)
    assert (res.returncode, res.stdout) == (2, "")
    assert res.stderr == f"runqslower: {message}; see 'runqslower --help'\n"
