"""solisten end to end: listen() calls a helper process of the test makes
(sockops.py), IPv4 and IPv6: each with the backlog it passed, the
address and port the socket listens on (the kernel's pick for an
unbound socket), a second listen() that only changes the backlog, and a
failed one with its error; each exactly once, and nothing for a unix
socket."""
import os
import re

import pytest

from conftest import Tool, json_lines, loss_record, run
from sockops import COMM, SockOps

HEADER = "PID     COMM         RET PROTO  BACKLOG  PORT  ADDR"
# Python's errno.errorcode names 95 so.
EOPNOTSUPP = ("EOPNOTSUPP", "ENOTSUP")
NETNS_HEADER = "TIME(s)   PID     COMM         RET NETNS        PROTO  BACKLOG  PORT  ADDR"


def listens(records):
    """The listen records, without "time", "ts" (checked), "tid" and
    "uid" (checked)."""
    got = []
    for r in records[:-1]:
        assert r["type"] == "listen", r
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", r.pop("time"))
        assert r.pop("ts") >= 0
        assert (r.pop("tid"), r.pop("uid")) == (r["pid"], 0), r
        got.append(r)
    return got


def rec(pid, ip, addr, port, backlog, proto="TCP", error=None, netns=None):
    return {"type": "listen", "pid": pid, "comm": COMM,
            "ret": -{"EOPNOTSUPP": 95, "EINVAL": 22}[error] if error else 0, "error": error,
            "proto": f"{proto}v{ip}", "ip": ip, "backlog": backlog, "addr": addr, "port": port,
            "netns": netns or os.stat("/proc/self/ns/net").st_ino}


def no_loss(records):
    loss = loss_record(records)
    assert (loss["events_lost"], loss["map_inserts_failed"]) == (0, 0)


@pytest.mark.kernel
@pytest.mark.parametrize("ip", [4, 6])
def test_listens_exactly(ip):
    """A bound socket listens with backlog 7, then again with 13 (the
    backlog changes, the state does not); an unbound one listens (the
    kernel picks its port); a UDP socket's listen fails; a unix socket's
    is not reported."""
    fam, lo, any_ = (("AF_INET", "127.0.0.1", "0.0.0.0") if ip == 4
                     else ("AF_INET6", "::1", "::"))
    with SockOps() as h:
        with Tool("solisten", "-j", "-p", h.pid) as t:
            h.do(f"a = socket.socket(socket.{fam}); a.bind(('{lo}', 0)); a.listen(7)")
            h.do("a.listen(13)")
            h.do(f"b = socket.socket(socket.{fam}); b.listen(0)")
            assert h.do(f"u = socket.socket(socket.{fam}, socket.SOCK_DGRAM); "
                        f"u.bind(('{lo}', 0)); u.listen(5)") in EOPNOTSUPP
            h.do("x = socket.socket(socket.AF_UNIX); x.bind('\\0tk-solisten'); x.listen(3)")
            out, err, rc = t.stop()
        pa, pb, pu = h.port("a"), h.port("b"), h.port("u")
    assert rc == 0, err
    records = json_lines(out)
    no_loss(records)
    assert listens(records) == [rec(h.pid, ip, lo, pa, 7), rec(h.pid, ip, lo, pa, 13),
                                rec(h.pid, ip, any_, pb, 0),
                                rec(h.pid, ip, lo, pu, 5, proto="UDP", error="EOPNOTSUPP")]


@pytest.mark.kernel
def test_filters(netns):
    """-4, -6, and -n: a listen in the test's namespace and one in
    another (netns.py's), only the other's kept."""
    with SockOps() as h, SockOps(netns.argv()) as n:
        for args in (["-4"], ["-6"], ["-n", os.stat(f"/run/netns/{netns.name}").st_ino]):
            with Tool("solisten", "-j", *args) as t:
                for peer in (h, n):
                    peer.do("a = socket.socket(); a.bind(('127.0.0.1', 0)); a.listen(4); "
                            "b = socket.socket(socket.AF_INET6); b.bind(('::1', 0)); b.listen(6)")
                out, err, rc = t.stop()
            for peer in (h, n):
                peer.do("a.close(); b.close()")
            assert rc == 0, err
            records = json_lines(out)
            no_loss(records)
            got = [(r["pid"], r["ip"], r["backlog"]) for r in listens(records)
                   if r["pid"] in (h.pid, n.pid)]
            expect = {"-4": [(h.pid, 4, 4), (n.pid, 4, 4)], "-6": [(h.pid, 6, 6), (n.pid, 6, 6)],
                      "-n": [(n.pid, 4, 4), (n.pid, 6, 6)]}[args[0]]
            assert got == expect, args
            if args[0] == "-n":
                assert {r["netns"] for r in records[:-1]} == {args[1]}


@pytest.mark.kernel
def test_text_columns():
    """bcc's columns (with libbpf-tools' RET); -t --show-netns: TIME(s)
    and NETNS."""
    netns = os.stat("/proc/self/ns/net").st_ino
    with SockOps() as h:
        for args in ([], ["-t", "--show-netns"]):
            with Tool("solisten", "-p", h.pid, *args) as t:
                h.do("s = socket.socket(socket.AF_INET6); s.bind(('::1', 0)); s.listen(9)")
                assert h.do("u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
                            "u.listen(2)") in EOPNOTSUPP
                out, err, rc = t.stop()
            port = h.port("s")
            h.do("s.close(); u.close()")
            assert rc == 0, err
            lines = out.splitlines()
            if not args:
                assert lines == [HEADER, f"{h.pid:<7} {COMM:<12} 0   TCPv6  9        {port:<5} ::1",
                                 f"{h.pid:<7} {COMM:<12} -95 UDPv4  2        0     0.0.0.0"], out
            else:
                assert lines[0] == NETNS_HEADER and len(lines) == 3, out
                assert re.fullmatch(r"0\.000000  " + re.escape(
                    f"{h.pid:<7} {COMM:<12} 0   {netns:<12} TCPv6  9        {port:<5} ::1"),
                    lines[1]), lines[1]


@pytest.mark.parametrize("args,words", [
    (["-n", "x"], ["--netns", "'x'"]),
    (["-4", "-6"], ["--ipv4", "--ipv6"]),
    (["-p", "x"], ["'x'"]),
    (["--show-netns=1"], ["--show-netns"]),
    (["7"], ["'7'"]),
])
def test_usage_errors(args, words):
    r = run("solisten", *args)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("solisten: "), r.stderr
    for w in words:
        assert w in r.stderr, r.stderr
