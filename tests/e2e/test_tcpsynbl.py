"""tcpsynbl end to end: a listener in a namespace (netns.py) with backlog
B that never accepts, and K <= B + 1 connects from the test's namespace:
its histogram counts exactly K handshakes, the backlog each found being
0, 1, ..., K - 1 (the kernel queues up to B + 1 connections)."""
import os
import socket
import sys
import time

import pytest

from conftest import Tool, json_lines, loss_record, run
from netns import Peer

METHODS = ["tp_btf", "raw_tp", "tp"]

# A listener: listens on ADDR port 0 with backlog B, says "ready PID
# PORT", never accepts, and ends when its stdin closes.
LISTENER = r"""
import os, socket, sys
addr, backlog = sys.argv[1], int(sys.argv[2])
ls = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET)
ls.bind((addr, 0))
ls.listen(backlog)
print("ready", os.getpid(), ls.getsockname()[1], flush=True)
sys.stdin.read()
"""


class Listener(Peer):
    def __init__(self, ns, ip, backlog):
        self.addr = ns.peer4 if ip == 4 else ns.peer6
        self.ns = ns
        super().__init__(ns.argv(sys.executable, "-c", LISTENER, self.addr, str(backlog)))
        self.port = int(self.rest[0])
        self.socks = []

    def queued(self):
        """Connections in its accept queue: ss's Recv-Q of a listener."""
        out = self.ns.run("ss", "-Hltn", f"sport = :{self.port}")
        (line,) = out.splitlines()
        return int(line.split()[1])

    def connect(self, k, timeout=30):
        """k connects, one at a time: each returns once the listener has
        queued it. The handshake's last ACK is handled after the client's
        connect returns, maybe on the other CPU: two handshakes under way
        at once can both find the same backlog (seen on 6.1 under TCG:
        0, 1, 1, 3, 4), so the next connect waits for the last child."""
        for _ in range(k):
            s = socket.create_connection((self.addr, self.port), timeout=timeout)
            self.socks.append(s)
            deadline = time.monotonic() + timeout
            while self.queued() != len(self.socks):
                assert time.monotonic() < deadline, (self.queued(), len(self.socks))
                time.sleep(0.01)

    def close(self):
        for s in self.socks:
            s.close()
        super().close()


def buckets(k):
    """The log2 buckets of the backlogs 0..k-1 (bucket 0 holds 0 and 1)."""
    out = {}
    for v in range(k):
        low = 0 if v < 2 else 1 << (v.bit_length() - 1)
        high = 1 if v < 2 else (low << 1) - 1
        out[(low, high)] = out.get((low, high), 0) + 1
    return [{"low": lo, "high": hi, "count": n} for (lo, hi), n in sorted(out.items())]


def netns_inode(ns):
    return os.stat(f"/run/netns/{ns.name}").st_ino


def hists(records, port):
    got = [r for r in records if r.get("type") == "histogram" and r["port"] == port]
    for r in got:
        assert r.pop("unit") == "backlog" and r.pop("scale") == "log2", r
        for k in ("time", "p50", "p90", "p99"):
            r.pop(k)
    return got


def no_loss(records):
    loss = loss_record(records)
    assert (loss["events_lost"], loss["map_inserts_failed"]) == (0, 0)


@pytest.mark.kernel
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("ip", [4, 6])
def test_exact_backlogs(netns, method, ip):
    """B = 4, K = 5 (the queue full): backlogs 0..4; a second listener
    (B = 8, K = 3) has its own histogram."""
    with Listener(netns, ip, 4) as a, Listener(netns, ip, 8) as b:
        with Tool("tcpsynbl", "-j", "-v", env={"TRACEKIT_ATTACH": method}) as t:
            a.connect(5)
            b.connect(3)
            out, err, rc = t.stop()
    assert rc == 0, err
    assert any(line.startswith(f"tcpsynbl: probe state: {method} ")
               for line in err.splitlines()), err
    records = json_lines(out)
    no_loss(records)
    ino = netns_inode(netns)
    assert hists(records, a.port) == [{"type": "histogram", "port": a.port, "ip": ip,
                                       "backlog_max": 4, "netns": ino, "buckets": buckets(5),
                                       "total": 5}]
    assert hists(records, b.port) == [{"type": "histogram", "port": b.port, "ip": ip,
                                       "backlog_max": 8, "netns": ino, "buckets": buckets(3),
                                       "total": 3}]


@pytest.mark.kernel
def test_ipv4_ipv6_filter(netns):
    for opt, keep in (("-4", 4), ("-6", 6)):
        with Listener(netns, 4, 2) as l4, Listener(netns, 6, 2) as l6:
            with Tool("tcpsynbl", "-j", opt) as t:
                l4.connect(2)
                l6.connect(3)
                out, err, rc = t.stop()
        assert rc == 0, err
        records = json_lines(out)
        no_loss(records)
        assert {r["ip"] for r in records[:-1]} == {keep}, opt
        kept, gone = (l4, l6) if keep == 4 else (l6, l4)
        assert [r["total"] for r in hists(records, kept.port)] == [2 if keep == 4 else 3]
        assert hists(records, gone.port) == []


@pytest.mark.kernel
def test_text(netns):
    """bcc's header line over each histogram (with the port, and the
    namespace when not the tool's own), bcc's star bars."""
    with Listener(netns, 4, 4) as a:
        with Tool("tcpsynbl") as t:
            a.connect(5)
            out, err, rc = t.stop()
    assert rc == 0, err
    lines = out.splitlines()
    i = lines.index(f"backlog_max = 4, port = {a.port}, netns = {netns_inode(netns)}")
    assert lines[0] == "Tracing SYN backlog size. Ctrl-C to end."
    assert lines[i + 1:i + 5] == [
        "     backlog             : count    distribution",
        "         0 -> 1          : 2        |****************************************|",
        "         2 -> 3          : 2        |****************************************|",
        "         4 -> 7          : 1        |********************                    |",
    ], out


@pytest.mark.parametrize("args,words", [
    (["-4", "-6"], ["--ipv4", "--ipv6"]),
    (["-L", "80"], ["'-L'"]),
    (["x"], ["'x'"]),
    (["-p", "1"], ["task filters"]),
    (["--", "true"], ["task filters"]),
])
def test_usage_errors(args, words):
    r = run("tcpsynbl", *args)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("tcpsynbl: "), r.stderr
    for w in words:
        assert w in r.stderr, r.stderr
