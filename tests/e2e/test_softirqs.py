"""softirqs end to end, against the kernel's own count of softirqs
(/proc/softirqs, which counts each run where irq:softirq_entry fires: see
procirq.py for the bracketing of a run by its reads).

The workload is a UDP echo over a veth pair into a network namespace
(netns.py, IPv4 only, so that nothing else crosses it): the test sends a
datagram and waits for its echo before it sends the next. Each datagram
(ECHOES out, ECHOES back) is handed to the peer by veth's netif_rx, which
raises NET_RX on the sending CPU, and is delivered before the next one is
sent, so no two share a NET_RX run: at least 2 * ECHOES runs (measured on
this host: exactly 2 * ECHOES more in /proc/softirqs). veth raises no
NET_TX: it has no qdisc (noqueue) and frees sent packets at once, so
NET_TX is only asserted against /proc/softirqs (0 here, unless another
device sent something). TIMER: the test waits until /proc/softirqs has
counted one on the CPUs watched, so it must appear."""
import os
import socket
import subprocess
import sys

import pytest

from conftest import Tool, json_lines, loss_record, run
from netns import NetNs
import procirq
import tracefs

ECHOES = 50   # 100 NET_RX runs; few, for the kernel matrix's time under TCG
VECTORS = ["hi", "timer", "net_tx", "net_rx", "block", "irq_poll", "tasklet", "sched",
           "hrtimer", "rcu"]

# The echo server, in the namespace: pinned to CPU argv[2] (-1: not),
# says its port, echoes each datagram until "end".
ECHO = r"""
import os, socket, sys
if int(sys.argv[2]) >= 0:
    os.sched_setaffinity(0, {int(sys.argv[2])})
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 0))
print(s.getsockname()[1], flush=True)
while True:
    data, peer = s.recvfrom(2048)
    if data == b"end":
        break
    s.sendto(data, peer)
"""


class Echo:
    """The namespace, its echo server, and the test's socket to it."""

    def __init__(self, cpu=-1):
        self.ns = NetNs(ipv6=False)
        try:
            self.server = subprocess.Popen(
                self.ns.argv(sys.executable, "-c", ECHO, self.ns.peer4, str(cpu)),
                stdout=subprocess.PIPE, text=True)
            self.port = int(self.server.stdout.readline())
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self.sock.settimeout(30)
        except BaseException:
            self.ns.close()
            raise

    def echo(self, n):
        for i in range(n):
            data = b"tk%d" % i
            self.sock.sendto(data, (self.ns.peer4, self.port))
            assert self.sock.recv(2048) == data

    def close(self):
        self.sock.sendto(b"end", (self.ns.peer4, self.port))
        self.server.wait(timeout=30)
        self.sock.close()
        self.ns.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def vector_name(event):
    """bcc's name of the vector in a softirq_entry event's text
    ("vec=3 [action=NET_RX]": net_rx)."""
    return event.rsplit("action=", 1)[1].rstrip("]").lower()


def counted(args=(), cpu=None, env=None):
    """softirqs -C -j around ECHOES echoes (the test and the server on
    CPU cpu when given); each vector's count checked against
    /proc/softirqs (of CPU cpu, or all). Returns (counts, inner delta,
    stderr)."""
    saved = os.sched_getaffinity(0)
    with Echo(-1 if cpu is None else cpu) as echo:
        try:
            if cpu is not None:
                procirq.pin(cpu)

            def work(inner0):
                echo.echo(ECHOES)
                procirq.wait_grown(read, inner0, "timer")

            def read():
                return procirq.softirqs(cpu)
            agent = tracefs.AgentEvents("irq/softirq_entry", vector_name, cpu)
            counts, inner, outer, err = procirq.bracketed(
                "softirqs", args, read, work, "softirq", env=env, agent=agent)
        finally:
            os.sched_setaffinity(0, saved)
    procirq.assert_bracketed(counts, inner, outer)
    assert counts["net_rx"] >= 2 * ECHOES, counts
    assert inner["net_rx"] >= 2 * ECHOES, inner   # the kernel agrees (less any in PID 1)
    assert counts["timer"] >= 1, counts
    assert set(counts) <= set(VECTORS), counts
    return counts, inner, err


@pytest.mark.parametrize("method", ["tp_btf", "raw_tp"])
@pytest.mark.kernel
def test_counts_are_the_kernels(method):
    _, _, err = counted(["-v"], env={"TRACEKIT_ATTACH": method})
    probes = [l for l in err.splitlines() if l.startswith("softirqs: probe ")]
    # -C counts at the entry and attaches nothing else.
    assert probes == [f"softirqs: probe softirq_entry: {method} softirq_entry"]


def test_cpu_counts_only_that_cpu():
    """-c CPU: the counts lie within that CPU's column of /proc/softirqs,
    which holds every echo (the test and the server run there)."""
    cpu = max(os.sched_getaffinity(0))
    counted(["-c", cpu], cpu=cpu)


def test_json_names_vectors_as_bcc():
    """"vec" is the kernel's number, "softirq" bcc's name of it."""
    with Echo() as echo, Tool("softirqs", "-C", "-j") as tool:
        echo.echo(10)
        out, err, rc = tool.stop()
    assert rc == 0, err
    records = json_lines(out)
    loss_record(records)
    for r in records[:-1]:
        assert set(r) == {"type", "time", "interval", "softirq", "vec", "count"}, r
        assert VECTORS[r["vec"]] == r["softirq"], r


@pytest.mark.kernel
def test_time_per_vector():
    """The default (time): each NET_RX run of the echoes is timed (it
    starts and ends while the tool runs), and the total is the time of
    those runs: more than 0, less than the tool ran."""
    with Echo() as echo:
        with Tool("softirqs", "-j") as tool:
            echo.echo(ECHOES)
            out, err, rc = tool.stop()
    assert rc == 0, err
    records = json_lines(out)
    assert loss_record(records) == {"type": "loss", "events_lost": 0,
                                    "map_inserts_failed": 0}
    recs = {r["softirq"]: r for r in records[:-1]}
    net_rx = recs["net_rx"]
    assert set(net_rx) == {"type", "time", "interval", "softirq", "vec", "count", "total_ns"}
    assert net_rx["count"] >= 2 * ECHOES, net_rx
    assert 0 < net_rx["total_ns"] < 60e9, net_rx


def test_histograms():
    """-d: a histogram per vector, its runs (count) all in buckets."""
    with Echo() as echo:
        with Tool("softirqs", "-d", "-j") as tool:
            echo.echo(ECHOES)
            out, err, rc = tool.stop()
    assert rc == 0, err
    records = json_lines(out)
    loss_record(records)
    hists = {r["softirq"]: r for r in records[:-1]}
    for h in hists.values():
        assert h["type"] == "histogram" and h["unit"] == "usecs", h
        assert h["total"] == h["count"] == sum(b["count"] for b in h["buckets"]), h
    assert hists["net_rx"]["count"] >= 2 * ECHOES


def text_rows(out, header):
    """The rows under the last header line of a text run: {name: value}."""
    lines = out.splitlines()
    at = max(i for i, l in enumerate(lines) if l == header)
    rows = {}
    for line in lines[at + 1:]:
        if not line:
            break
        name, value = line.split()
        assert line == f"{name:<16} {value:>11}", line   # bcc's "%-16s %11d"
        rows[name] = int(value)
    return rows


@pytest.mark.parametrize("args,unit", [(["-C"], "count"), ([], "usecs"), (["-N"], "nsecs")])
def test_text_is_bccs(args, unit):
    with Echo() as echo:
        with Tool("softirqs", *args) as tool:
            echo.echo(ECHOES)
            out, err, rc = tool.stop()
    assert rc == 0, err
    header = f"{'SOFTIRQ':<16} {'TOTAL_' + unit:>11}"
    lines = out.splitlines()
    assert lines[0] == ("Tracing soft irq events... Hit Ctrl-C to end." if unit == "count"
                        else "Tracing soft irq event time... Hit Ctrl-C to end.")
    assert lines[1:3] == ["", header], out
    rows = text_rows(out, header)
    assert list(rows.values()) == sorted(rows.values(), reverse=True), out
    assert set(rows) <= set(VECTORS)
    if unit == "count":
        assert rows["net_rx"] >= 2 * ECHOES, out


def test_text_histogram_sections():
    with Echo() as echo:
        with Tool("softirqs", "-d", "-N") as tool:
            echo.echo(20)
            out, err, rc = tool.stop()
    assert rc == 0, err
    sections = [l[len("softirq = "):] for l in out.splitlines() if l.startswith("softirq = ")]
    assert "net_rx" in sections, out
    # bcc's order: by vector number.
    assert sections == sorted(sections, key=VECTORS.index), sections
    assert "     nsecs               : count    distribution" in out.splitlines()


def test_intervals_and_time_lines():
    procirq.assert_intervals("softirqs", "SOFTIRQ")


def test_json_intervals_numbered():
    with Tool("softirqs", "-C", "-j", "1", "2") as tool:
        out, err, rc = tool.wait()
    assert rc == 0, err
    records = json_lines(out)
    loss_record(records)
    assert {r["interval"] for r in records[:-1]} == {1, 2}


@pytest.mark.parametrize("args,message", [
    (["-C", "-d"], "-C/--events counts runs: it does not go with the time options -d/--dist and -N/--nanoseconds"),
    (["-C", "-N"], "-C/--events counts runs: it does not go with the time options -d/--dist and -N/--nanoseconds"),
    (["-c", "x"], "invalid --cpu value 'x': expected an integer from 0 to "),
    (["-c", "100000"], "invalid --cpu value '100000': expected an integer from 0 to "),
    (["-p", "1"], "interrupts are not a task's: the task filters"),
    (["--cgroup", "/"], "interrupts are not a task's: the task filters"),
    (["--", "true"], "interrupts are not a task's: the task filters"),
    (["--print-cgroup"], "interrupts are not a task's: the task filters"),
    (["--timestamp"], "bcc's option '--timestamp' is not in tracekit: use -T or --time"),
    (["1", "2", "3"], "unexpected argument '3'"),
])
def test_usage_errors(args, message):
    r = run("softirqs", *args)
    assert (r.returncode, r.stdout) == (2, ""), r
    assert r.stderr.count("\n") == 1 and r.stderr.startswith(f"softirqs: {message}"), r.stderr


def test_help_says_no_task_filters():
    r = run("softirqs", "--help")
    assert r.returncode == 0
    assert "there are no task filters" in r.stdout
    for opt in ("-C, --events", "-d, --dist", "-N, --nanoseconds", "-c, --cpu=CPU"):
        assert opt in r.stdout, opt
