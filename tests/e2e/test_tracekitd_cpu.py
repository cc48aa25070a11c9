"""tracekitd's CPU and interrupt collectors (hardirqs, softirqs, cpudist,
runqlen) end to end: one daemon with the four on, scraped before and
after a workload the test makes.

The interrupt counts are bracketed by the kernel's own counters
(/proc/softirqs and /proc/interrupts, procirq.py), read around the two
scrapes with procirq.settle() between: a run the daemon counts between
its scrapes ends after the settle that follows the first read of
/proc/..., so it began after that read or was in progress then and has
ended before the first scrape; either way the kernel counted it in the
window. Hence daemon delta <= kernel delta, exactly. The lower bounds
are the test's own: each echoed datagram is one NET_RX run (as in
test_softirqs.py); the settle before the second scrape lets the last
run end."""
import os
import subprocess
import time

import pytest

import procirq
from conftest import ROOT, Workload, tool_path
from test_cpudist import (BURSTS, CPU, EDGE_US, ON_BUCKET_US, Bursts, prog,  # noqa: F401
                          wait_off_cpu)
from test_softirqs import ECHOES, Echo
from test_tracekitd import Daemon, samples, series, value, write_config

ON = dict(syscalls=False, execs=False, runqlat=False, tcpconnect=False, vfsstat=False,
          tcpstates=False, drops=False, retrans=False,
          hardirqs=True, softirqs=True, cpudist=True, runqlen=True)
FAMILIES = {
    "hardirqs": ["tracekit_hardirq_seconds_total", "tracekit_hardirqs_total"],
    "softirqs": ["tracekit_softirq_seconds_total", "tracekit_softirqs_total"],
    "cpudist": ["tracekit_oncpu_seconds_count"],
    "runqlen": ["tracekit_runqueue_length_count"],
}


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    conf = tmp_path_factory.mktemp("tkd-cpu") / "tracekitd.conf"
    write_config(conf, **ON)
    with Daemon(config=str(conf)) as d:
        yield d


def by_label(s, name, label):
    return {dict(k)[label]: v for k, v in series(s, name).items()}


def delta(before, after, name, label):
    b, a = by_label(before, name, label), by_label(after, name, label)
    return {k: v - b.get(k, 0) for k, v in a.items() if v - b.get(k, 0)}


def bracketed(d, read, work):
    """(kernel delta, daemon before, daemon after) around work()."""
    k0 = read()
    procirq.settle()
    before = samples(d.scrape())
    work()
    procirq.settle()
    after = samples(d.scrape())
    k1 = read()
    return {k: v - k0.get(k, 0) for k, v in k1.items()}, before, after


@pytest.mark.kernel
def test_softirqs_net_rx_between_the_tests_echoes_and_the_kernels(daemon):
    with Echo() as echo:
        kernel, before, after = bracketed(daemon, procirq.softirqs,
                                          lambda: echo.echo(ECHOES))
    runs = delta(before, after, "tracekit_softirqs_total", "vector")
    secs = delta(before, after, "tracekit_softirq_seconds_total", "vector")
    assert runs.get("net_rx", 0) >= 2 * ECHOES, runs
    for vec, n in runs.items():
        assert n <= kernel.get(vec, 0), (vec, runs, kernel)
        assert secs.get(vec, 0) > 0, (vec, runs, secs)   # a run takes some ns
    assert set(runs) <= set(kernel), (runs, kernel)


@pytest.mark.kernel
def test_hardirqs_bounded_by_proc_interrupts(daemon, tmp_path):
    """Runs per handler name never exceed /proc/interrupts' count of its
    line(s); the disk's interrupts of 20 fsyncs, where the test's
    directory is on a PCI disk, appear."""
    disk = procirq.device_irqs(tmp_path)

    def work():
        with open(tmp_path / "f", "wb") as f:
            for _ in range(20):
                f.write(b"x" * 4096)
                f.flush()
                os.fsync(f.fileno())
    kernel, before, after = bracketed(daemon, procirq.interrupts, work)
    runs = delta(before, after, "tracekit_hardirqs_total", "irq")
    secs = delta(before, after, "tracekit_hardirq_seconds_total", "irq")
    for name, n in runs.items():
        if name in kernel:
            assert n <= kernel[name], (name, runs, kernel)
        assert secs.get(name, 0) > 0, (name, runs, secs)
    if disk:
        assert sum(runs.get(a, 0) for a in disk) >= 1, (disk, runs, kernel)


def bucket_runs(s, le_low, le_high):
    b = by_label(s, "tracekit_oncpu_seconds_bucket", "le")
    return b[le_high] - b[le_low]


@pytest.mark.kernel
def test_cpudist_bursts_land_in_their_bucket(daemon, prog):  # noqa: F811
    """test_cpudist's pinned SCHED_FIFO workload: each clean burst (not
    preempted, not stretched past the bucket, not hidden by the agent:
    test_cpudist's module doc) is one run of 8192..16383 us. The daemon
    counts every task's runs, so this bucket and the count are bounded
    below only."""
    lo, hi = (f"{(1 << ON_BUCKET_US) / 1e6:.10g}", f"{(2 << ON_BUCKET_US) / 1e6:.10g}")
    with Workload(prog, CPU) as wl:
        wait_off_cpu(wl.pid, int(wl.send("burst 1 1 0")[-1]))
        before = samples(daemon.scrape())
        b = Bursts(wl)
        after = samples(daemon.scrape())
    clean = sum(w + EDGE_US < (2 << ON_BUCKET_US) and not p
                for w, p in zip(b.walls, b.preempted))
    assert bucket_runs(after, lo, hi) - bucket_runs(before, lo, hi) >= clean - b.hidden, vars(b)
    count = "tracekit_oncpu_seconds_count"
    assert value(after, count) - value(before, count) >= b.switches - b.hidden, vars(b)
    # Every burst's 10 ms of CPU time is in some run the daemon saw, less
    # the runs hidden (each at most a burst's wall time and edges).
    total = value(after, "tracekit_oncpu_seconds_sum") - value(before, "tracekit_oncpu_seconds_sum")
    assert total >= BURSTS * 0.010 - b.hidden * (max(b.walls) + EDGE_US) / 1e6, (total, vars(b))


SPIN = "import os, sys\nos.sched_setaffinity(0, {int(sys.argv[1])})\nprint(flush=True)\nwhile 1: pass\n"


@pytest.mark.kernel
def test_runqlen_samples_a_queue_the_test_makes(daemon):
    """Two spinning tasks on one CPU: one runs, one waits, so samples of
    length 1 or more appear (sampling is 99 Hz on each CPU: the test
    polls the scrape until they do, 30 s at most)."""
    name = "tracekit_runqueue_length"
    before = samples(daemon.scrape())
    cpu = max(os.sched_getaffinity(0))
    spinners = [subprocess.Popen(["python3", "-c", SPIN, str(cpu)], stdout=subprocess.PIPE,
                                 text=True) for _ in range(2)]
    try:
        for p in spinners:
            p.stdout.readline()   # pinned and spinning
        deadline = time.monotonic() + 30

        def queued(s):
            b = by_label(s, f"{name}_bucket", "le")
            return b.get("+Inf", 0) - b.get("0", 0)
        while True:
            after = samples(daemon.scrape())
            if queued(after) > queued(before) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
    finally:
        for p in spinners:
            p.kill()
            p.wait()
    assert queued(after) > queued(before), series(after, f"{name}_bucket")
    assert value(after, f"{name}_count") > value(before, f"{name}_count")
    buckets = by_label(after, f"{name}_bucket", "le")
    assert list(buckets) == ["0", "1", "2", "3", "4", "6", "8", "12", "16", "24", "30", "+Inf"]
    counts = list(buckets.values())
    assert counts == sorted(counts) and counts[-1] == value(after, f"{name}_count")


def test_promtool_accepts_the_new_collectors(daemon):
    text = daemon.scrape()
    s = samples(text)
    up = by_label(s, "tracekit_collector_up", "collector")
    assert all(up.get(c) == 1 for c in FAMILIES), up
    for names in FAMILIES.values():
        for n in names:
            assert f"\n{n}" in text, n
    res = subprocess.run(["promtool", "check", "metrics"], input=text,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_switched_off_collectors_are_absent(tmp_path):
    conf = tmp_path / "c.conf"
    write_config(conf, syscalls=True, hardirqs=False, softirqs=False, cpudist=False,
                 runqlen=False)
    with Daemon(config=str(conf)) as d:
        text = d.scrape()
    up = by_label(samples(text), "tracekit_collector_up", "collector")
    assert "syscalls" in up and not set(FAMILIES) & set(up), up
    for names in FAMILIES.values():
        for n in names:
            assert n not in text, n


def test_defaults_of_the_new_collectors(tmp_path):
    """cpudist is off unless enabled; hardirqs, softirqs, runqlen on."""
    conf = tmp_path / "c.conf"
    conf.write_text("[collectors]\n")
    for config in (str(conf), str(ROOT / "tools/tracekitd.conf")):
        res = subprocess.run([tool_path("tracekitd"), "--config", config, "--check-config"],
                             capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
        names = res.stdout.split("collectors: ")[1].rstrip(")\n").split()
        assert {"hardirqs", "softirqs", "runqlen"} <= set(names), names
        assert "cpudist" not in names, names


@pytest.mark.parametrize("content,line", [
    ("[collectors]\nrunqlength = yes\n", ":2: unknown collector 'runqlength' ("),
    ("[collectors]\ncpudist = maybe\n", ":2: cpudist: bad value 'maybe' (yes or no)"),
])
def test_unknown_keys_stay_errors(tmp_path, content, line):
    conf = tmp_path / "bad.conf"
    conf.write_text(content)
    res = subprocess.run([tool_path("tracekitd"), "--config", str(conf), "--check-config"],
                         capture_output=True, text=True, timeout=30)
    assert res.returncode == 1
    assert res.stderr.count("\n") == 1 and res.stderr.startswith(f"tracekitd: {conf}{line}"), \
        res.stderr
