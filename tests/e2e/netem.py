"""tc netem on the namespace's end of the veth pair (netns.NetNs): a
delay or a loss on every packet the namespace sends to the test's own
side. Needs tc (iproute2) and sch_netem (a module in Debian's kernels:
the kernel matrix has it, this repository's host kernel has not); the
tests skip saying so where either is missing."""
import json
import shutil
import subprocess
import sys

import pytest


def need_netem():
    if not shutil.which("tc"):
        pytest.skip("tc (iproute2) is not installed")
    subprocess.run(["modprobe", "sch_netem"], capture_output=True)


def netem(ns, *spec, change=False):
    """tc qdisc add (or change) dev PEER_IF root netem SPEC in ns; skips
    where the kernel has no netem."""
    need_netem()
    r = subprocess.run(ns.argv("tc", "qdisc", "change" if change else "add", "dev", ns.peer_if,
                               "root", "netem", *spec), capture_output=True, text=True)
    if r.returncode and not change and "unknown" in r.stderr:
        pytest.skip(f"this kernel has no sch_netem: {r.stderr.strip()}")
    assert r.returncode == 0, f"tc netem {' '.join(spec)}: {r.stderr.strip()}"


def counters(ns):
    """The namespace's own counters by name (nstat -asz: absolute, every
    one, no history file written)."""
    out = subprocess.run(ns.argv("nstat", "-asz", "--json"), check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)["kernel"]


def nstat(ns, name):
    """The namespace's own counter NAME."""
    return counters(ns)[name]


def retrans_counts(ns):
    """(TcpRetransSegs, TcpExtTCPRetransFail) of the namespace. The
    kernel counts a retransmit in TcpRetransSegs before it transmits it
    (__tcp_retransmit_skb), and a transmit that then fails (a full queue
    on the way out: -ENOBUFS) in TCPRetransFail too; tcp:tcp_retransmit_skb
    sees only the ones sent (since 6.16 it fires for failures too, with
    err, which tcpretrans skips). The segments that left the namespace
    are the first less the second."""
    kernel = counters(ns)
    return kernel["TcpRetransSegs"], kernel["TcpExtTCPRetransFail"]


def drop_inbound(ns, ip, port):
    """Drop every TCP packet coming into the namespace for local port
    PORT (its peer's ACKs), with what this repository's host kernel has:
    a u32 filter on clsact ingress redirecting them to a device that is
    down (act_mirred drops them; no act_gact, nftables or iptables here).
    undrop_inbound ends it. The namespace's own sends are untouched and
    succeed, so its retransmits are real ones (a drop on its own output
    would fail them, and the kernel counts a failed retransmit that its
    tracepoint does not see)."""
    subprocess.run(ns.argv("ip", "link", "add", "tkdrop0", "type", "veth", "peer", "name",
                           "tkdrop1"), check=True, capture_output=True)
    subprocess.run(ns.argv("tc", "qdisc", "add", "dev", ns.peer_if, "clsact"), check=True,
                   capture_output=True)
    match = (["protocol", "ip", "u32", "match", "ip", "protocol", "6", "0xff", "match", "ip",
              "dport", str(port), "0xffff"] if ip == 4 else
             ["protocol", "ipv6", "u32", "match", "ip6", "protocol", "6", "0xff", "match",
              "ip6", "dport", str(port), "0xffff"])
    r = subprocess.run(ns.argv("tc", "filter", "add", "dev", ns.peer_if, "ingress", *match,
                               "action", "mirred", "egress", "redirect", "dev", "tkdrop0"),
                       capture_output=True, text=True)
    assert r.returncode == 0, f"tc filter (u32, mirred): {r.stderr.strip()}"


def undrop_inbound(ns):
    subprocess.run(ns.argv("tc", "qdisc", "del", "dev", ns.peer_if, "clsact"), check=True,
                   capture_output=True)
    subprocess.run(ns.argv("ip", "link", "del", "tkdrop0"), check=True, capture_output=True)


# A connection whose steps the test makes one at a time, the namespace's
# end sending: SENDER (in the namespace, named tkserver) listens and
# says "ready PID PORT"; "accept" accepts one connection ("done PEERPORT"),
# "send N" sends N bytes ("done" once they are all in the kernel's
# buffer), "close" reads until the peer's FIN and closes ("done").
# RECEIVER (named tkclient, "ready PID"): "connect ADDR PORT" ("done
# SPORT"), "recv N" reads N bytes ("done"), "close" shuts down its side,
# reads until the peer's FIN, closes ("done").
SENDER = r"""
import ctypes, os, socket, sys
ctypes.CDLL(None).prctl(15, b"tkserver", 0, 0, 0)
addr = sys.argv[1]
ls = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET)
ls.bind((addr, 0))
ls.listen(8)
print("ready", os.getpid(), ls.getsockname()[1], flush=True)
s = None
for line in sys.stdin:
    cmd = line.split()
    if cmd[0] == "accept":
        s, peer = ls.accept()
        print("done", peer[1], flush=True)
    elif cmd[0] == "send":
        s.sendall(b"s" * int(cmd[1]))
        print("done", flush=True)
    elif cmd[0] == "close":
        while s.recv(65536):
            pass
        s.close()
        print("done", flush=True)
"""

RECEIVER = r"""
import ctypes, os, socket, sys
ctypes.CDLL(None).prctl(15, b"tkclient", 0, 0, 0)
print("ready", os.getpid(), flush=True)
s = None
for line in sys.stdin:
    cmd = line.split()
    if cmd[0] == "connect":
        s = socket.socket(socket.AF_INET6 if ":" in cmd[1] else socket.AF_INET)
        s.connect((cmd[1], int(cmd[2])))
        print("done", s.getsockname()[1], flush=True)
    elif cmd[0] == "recv":
        n, got = int(cmd[1]), 0
        while got < n:
            got += len(s.recv(min(n - got, 1 << 20)))
        print("done", flush=True)
    elif cmd[0] == "close":
        s.shutdown(socket.SHUT_WR)
        while s.recv(65536):
            pass
        s.close()
        print("done", flush=True)
"""


class Flow:
    """One connection from a receiver here to a sender in ns, made step by
    step: connect(), then send(n) (the sender's n bytes, received whole;
    n at most its socket buffer's size), close(). sport/dport: the receiver's and the sender's ports."""

    def __init__(self, ns, ip):
        from netns import Peer
        self.ns = ns
        self.addr = ns.peer4 if ip == 4 else ns.peer6
        self.caddr = ns.addr4 if ip == 4 else ns.addr6
        self.ip = ip
        self.sender = Peer(ns.argv(sys.executable, "-c", SENDER, self.addr))
        self.port = int(self.sender.rest[0])
        self.receiver = Peer([sys.executable, "-c", RECEIVER])

    def _start(self, peer, line):
        peer.proc.stdin.write(line + "\n")
        peer.proc.stdin.flush()

    def _done(self, peer):
        words = peer.proc.stdout.readline().split()
        assert words[:1] == ["done"], words
        return words[1:]

    def connect(self):
        self._start(self.sender, "accept")
        (sport,) = self.receiver.ask(f"connect {self.addr} {self.port}")
        self.sport = int(sport)
        assert self._done(self.sender) == [sport]
        return self.sport

    def send(self, n, wait=True):
        """The sender sends n bytes (returning once they are in its
        socket's buffer); with wait, until the receiver has them all,
        else received() waits for that."""
        self._start(self.receiver, f"recv {n}")
        self.sender.ask(f"send {n}")
        if wait:
            self.received()

    def received(self):
        self._done(self.receiver)

    def close(self):
        from netns import wait_closed
        self._start(self.sender, "close")
        self.receiver.ask("close")
        self._done(self.sender)
        wait_closed(self.ns, self.port, self.sport)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.sender.close()
        self.receiver.close()
