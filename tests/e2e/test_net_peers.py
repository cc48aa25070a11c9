"""tcplife and tcptop against libbpf-tools' (Debian's, /usr/sbin), on
the same connection the test makes (netns.py: N KiB up, M KiB down), both
tools running at once: they must agree.

tcplife, here and in the kernel matrix (both use the tracepoint
sock:inet_sock_set_state): libbpf-tools' TX and RX are the kernel's
counters (a SYN and a FIN a byte each), tracekit's the data alone
(README, tcplife): libbpf-tools' TX is tracekit's + 2 on the client (its
SYN and FIN) and + 1 on the server (its FIN), its RX + 1 on both (the
peer's FIN), in KiB with two decimals.

tcptop, in the kernel matrix (libbpf-tools' probes tcp_sendmsg and
tcp_cleanup_rbuf, kernel functions this host cannot trace; the skip says
so): both count the bytes of the send and receive calls, libbpf-tools in
KiB rounded down. libbpf-tools prints an interval by reading its map and
then deleting every key, so bytes counted between the two are lost (one
run in three on 5.10 had no row of the connection with a 1 s interval);
the test gives it one interval that covers the whole run, ended by
SIGINT, which interrupts its sleep and prints before it exits."""
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import Tool, in_syscall, json_lines
from netns import CLIENT_COMM, SERVER_COMM, Client, Server, transfer

PEER = "/usr/sbin"
# sleep(3)'s system calls: libbpf-tools' tools sleep between intervals.
SLEEP_NRS = {"x86_64": [35, 230], "aarch64": [101, 115]}[os.uname().machine]
N, M = 300 * 1024, 70 * 1024


class Peer:
    """A libbpf-tools tool, line-buffered, its stdout read as it comes;
    started() once its header is out (it prints it after attaching)."""

    def __init__(self, name, *args):
        path = os.path.join(PEER, name)
        if not os.access(path, os.X_OK):
            pytest.skip(f"{path} is missing: make deps installs libbpf-tools")
        self.name = name
        self.proc = subprocess.Popen(["stdbuf", "-oL", path, *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.lines = []

    def started(self, header):
        while True:
            line = self.proc.stdout.readline()
            if not line:
                err = self.proc.stderr.read()
                self.proc.wait()
                why = [l.strip() for l in err.splitlines() if l.strip()][-2:]
                pytest.skip(f"libbpf-tools' {self.name} cannot attach on this kernel: "
                            + (" / ".join(why) or f"exit {self.proc.returncode}"))
            self.lines.append(line)
            if line.startswith(header):
                return self

    def asleep(self):
        """Once it sleeps in its first interval (after attaching and
        taking SIGINT: everything before the loop is done)."""
        if not in_syscall(self.proc.pid, SLEEP_NRS):
            self.proc.kill()
            _, err = self.proc.communicate()
            why = [l.strip() for l in err.splitlines() if l.strip()][-2:]
            pytest.skip(f"libbpf-tools' {self.name} cannot attach on this kernel: "
                        + (" / ".join(why) or f"exit {self.proc.returncode}"))
        return self

    def until(self, pattern, times=1, timeout=60):
        """Read until `times` lines match pattern; all lines so far."""
        deadline = time.monotonic() + timeout
        while sum(bool(re.search(pattern, l)) for l in self.lines) < times:
            assert time.monotonic() < deadline, "".join(self.lines)
            line = self.proc.stdout.readline()
            assert line, "".join(self.lines) + self.proc.stderr.read()
            self.lines.append(line)
        return self.lines

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        try:
            out, _ = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
        self.lines += out.splitlines(keepends=True)
        return self.lines


@pytest.mark.kernel
def test_tcptop_agrees_with_libbpf_tools(netns):
    """Per connection end, libbpf-tools' RX_KB and TX_KB are tracekit's
    bytes in KiB, rounded down; tracekit's are exactly what was sent."""
    with Server(netns, 4) as s, Client() as c:
        # One interval of an hour: SIGINT ends it (module docstring).
        peer = Peer("tcptop", "-C", "-r", "10240", "3600").asleep()
        try:
            with Tool("tcptop", "-j", "-C", "1") as t:
                sport = transfer(netns, s, c, N, M)
                out, err, rc = t.stop()
        finally:
            lines = peer.stop()
    assert rc == 0, err
    assert peer.proc.returncode == 0, lines
    tk = {}
    for r in json_lines(out):
        if r.get("type") == "tcptop" and {r["sport"], r["dport"]} == {sport, s.port}:
            k = (r["pid"], r["sport"])
            tk[k] = (tk.get(k, (0, 0))[0] + r["rx_bytes"], tk.get(k, (0, 0))[1] + r["tx_bytes"])
    assert tk == {(c.pid, sport): (M, N), (s.pid, s.port): (N, M)}, tk
    lt = {}
    for line in lines:
        w = line.split()
        if len(w) == 6 and w[0].isdigit() and {w[2].rsplit(":", 1)[1], w[3].rsplit(":", 1)[1]} \
                == {str(sport), str(s.port)}:
            k = (int(w[0]), int(w[2].rsplit(":", 1)[1]))
            assert k not in lt, lines   # one interval: one row per end
            lt[k] = (int(w[4]), int(w[5]))
    assert lt == {k: (rx // 1024, tx // 1024) for k, (rx, tx) in tk.items()}, (lt, lines)


@pytest.mark.kernel
def test_tcplife_agrees_with_libbpf_tools(netns):
    """The same connection in both, each end: libbpf-tools' KiB are
    tracekit's bytes plus the SYN and FIN its counters hold."""
    with Server(netns, 4) as s, Client() as c:
        peer = Peer("tcplife").started("PID")
        try:
            with Tool("tcplife", "-j") as t:
                sport = transfer(netns, s, c, N, M)
                peer.until(rf"^{s.pid}\s.*\s{s.port}\s+\S+\s+{sport}\s")   # the server's line
                peer.until(rf"^{c.pid}\s.*\s{sport}\s+\S+\s+{s.port}\s")   # the client's
                out, err, rc = t.stop()
        finally:
            lines = peer.stop()
    assert rc == 0, err
    tk = {r["pid"]: (r["tx_bytes"], r["rx_bytes"]) for r in json_lines(out)
          if r.get("type") == "connection" and {r["sport"], r["dport"]} == {sport, s.port}}
    assert tk == {c.pid: (N, M), s.pid: (M, N)}, tk
    lt = {}
    for line in lines:
        w = line.split()
        if len(w) >= 9 and w[0].isdigit() and {w[3], w[5]} == {str(sport), str(s.port)}:
            lt[int(w[0])] = (w[1], float(w[6]), float(w[7]))
    extra = {c.pid: (2, 1), s.pid: (1, 1)}   # SYN and FIN in the kernel's counters
    # libbpf-tools (as bcc) also prints the second child the kernel makes
    # when two of a handshake's ACKs race on two CPUs (6.1 under TCG), at
    # once closed from SYN_RECV: 0 bytes, the softirq's task. tracekit
    # leaves it out (README, tcplife); nothing else may differ.
    ghosts = {p: v for p, v in lt.items() if p not in tk}
    assert all(v[1:] == (0.0, 0.0) for v in ghosts.values()), (lt, lines)
    lt = {p: v for p, v in lt.items() if p in tk}
    assert set(lt) == set(tk), (lt, lines)
    for pid, (tx, rx) in tk.items():
        comm, lt_tx, lt_rx = lt[pid]
        assert comm == (CLIENT_COMM if pid == c.pid else SERVER_COMM)
        assert (lt_tx, lt_rx) == (round((tx + extra[pid][0]) / 1024, 2),
                                  round((rx + extra[pid][1]) / 1024, 2)), (pid, lt[pid], tk[pid])
