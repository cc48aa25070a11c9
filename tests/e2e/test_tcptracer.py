"""tcptracer end to end: TCP connections the test makes from its own
namespace to a server in another (netns.py), IPv4 and IPv6: each
connection is reported exactly as its connect (C: the client), accept
(A: the server) and two closes (X: the server's, then the client's),
each once, with the pids, comms, addresses, ports and network
namespaces of its ends."""
import os
import re

import pytest

from conftest import Tool, json_lines, loss_record, run
from netns import CLIENT_COMM, SERVER_COMM, Client, Server, one_client_argv, transfer

METHODS = ["tp_btf", "raw_tp", "tp"]
TARGET = {"tp_btf": "inet_sock_set_state", "raw_tp": "inet_sock_set_state",
          "tp": "sock/inet_sock_set_state"}
HEADER = "T  PID    COMM             IP SADDR            DADDR            SPORT  DPORT"
WIDE_HEADER = ("TIME(ns)       TYPE         PID    COMM             IP SADDR            "
               "DADDR            SPORT  DPORT  NETNS")


def netns_ino(ns=None):
    return os.stat(f"/run/netns/{ns.name}" if ns else "/proc/self/ns/net").st_ino


def events(records, ports):
    """The events between these ports (either end), without "time" and
    "ts" (checked), sorted (C and A, and the two X, race each other)."""
    got = []
    for r in records:
        if r.get("type") in ("connect", "accept", "close") and {r["sport"], r["dport"]} <= ports:
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", r.pop("time"))
            assert r.pop("ts") >= 0, r
            got.append(r)
    return sorted(got, key=lambda r: (r["type"], r["pid"]))


def want(netns, s, c, sport, types=("connect", "accept", "close")):
    ip = 6 if ":" in s.addr else 4
    caddr = netns.addr4 if ip == 4 else netns.addr6
    client = {"pid": c.pid, "tid": c.pid, "uid": 0, "comm": CLIENT_COMM, "ip": ip,
              "saddr": caddr, "sport": sport, "daddr": s.addr, "dport": s.port,
              "netns": netns_ino()}
    server = {"pid": s.pid, "tid": s.pid, "uid": 0, "comm": SERVER_COMM, "ip": ip,
              "saddr": s.addr, "sport": s.port, "daddr": caddr, "dport": sport,
              "netns": netns_ino(netns)}
    out = [{"type": "connect", **client}, {"type": "accept", **server},
           {"type": "close", **client}, {"type": "close", **server}]
    return sorted([r for r in out if r["type"] in types], key=lambda r: (r["type"], r["pid"]))


def no_loss(records):
    loss = loss_record(records)
    assert (loss["events_lost"], loss["map_inserts_failed"]) == (0, 0)


@pytest.mark.kernel
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("ip", [4, 6])
def test_connect_accept_close_exactly(netns, method, ip):
    """Two connections on one server: each is C, A, X, X once."""
    with Server(netns, ip) as s, Client() as c:
        with Tool("tcptracer", "-j", "--verbose", env={"TRACEKIT_ATTACH": method}) as t:
            sports = [transfer(netns, s, c, 3000, 400) for _ in range(2)]
            out, err, rc = t.stop()
    assert rc == 0, err
    assert f"tcptracer: probe state: {method} {TARGET[method]}" in err.splitlines(), err
    records = json_lines(out)
    no_loss(records)
    for sport in sports:
        assert events(records, {sport, s.port}) == want(netns, s, c, sport)


@pytest.mark.kernel
def test_filters(netns):
    """-4, -6, -p (the client: its C and X), -N (the server's namespace:
    its A and X): one IPv4 and one IPv6 connection each."""
    for opt in ("-4", "-6", "-p", "-N"):
        with Server(netns, 4) as s4, Server(netns, 6) as s6, Client() as c:
            args = {"-4": ["-4"], "-6": ["-6"], "-p": ["-p", c.pid],
                    "-N": ["-N", netns_ino(netns)]}[opt]
            with Tool("tcptracer", "-j", *args) as t:
                sports = {ip: transfer(netns, s, c, 100, 10) for ip, s in ((4, s4), (6, s6))}
                out, err, rc = t.stop()
        assert rc == 0, err
        records = json_lines(out)
        no_loss(records)
        got = [events(records, {sports[ip], s.port}) for ip, s in ((4, s4), (6, s6))]
        every = [want(netns, s, c, sports[ip]) for ip, s in ((4, s4), (6, s6))]
        if opt == "-4":
            assert got == [every[0], []], opt
            assert {r["ip"] for r in records[:-1]} == {4}
        elif opt == "-6":
            assert got == [[], every[1]], opt
            assert {r["ip"] for r in records[:-1]} == {6}
        else:
            mine = c.pid if opt == "-p" else None
            assert got == [[r for r in e if (r["pid"] == c.pid) == (mine is not None)]
                           for e in every], opt
            assert len(got[0]) == 2 and len(got[1]) == 2, got


@pytest.mark.kernel
def test_command(netns):
    """-- COMMAND: its connect and close only, not the server's end."""
    with Server(netns, 4) as s:
        s.proc.stdin.write("1234 56\n")
        s.proc.stdin.flush()
        t = Tool("tcptracer", "-j", "--", *one_client_argv(s, 1234, 56)).start()
        out, err, rc = t.wait()
        assert rc == 0, err
        assert s.proc.stdout.readline() == "done\n"
    records = json_lines(out)
    no_loss(records)
    got = [(r["type"], r["comm"], r["daddr"], r["dport"]) for r in records[:-1]]
    assert got == [("connect", CLIENT_COMM, s.addr, s.port),
                   ("close", CLIENT_COMM, s.addr, s.port)], got


@pytest.mark.kernel
def test_text_columns(netns):
    """bcc's columns, IPv6 in brackets; -v -t: TIME(ns), TYPE as a word,
    NETNS."""
    for args in ([], ["-v", "-t"]):
        with Server(netns, 6) as s, Client() as c:
            with Tool("tcptracer", "-p", c.pid, *args) as t:
                sport = transfer(netns, s, c, 10, 10)
                out, err, rc = t.stop()
        assert rc == 0, err
        lines = out.splitlines()
        assert len(lines) == 3, out
        ca, sa = f"[{netns.addr6}]", f"[{s.addr}]"
        if not args:
            assert lines[0] == HEADER
            for line, t in zip(lines[1:], "CX"):
                assert line == (f"{t:<2} {c.pid:<6} {CLIENT_COMM:<16} 6  {ca:<16} {sa:<16} "
                                f"{sport:<6} {s.port}"), line
        else:
            assert lines[0] == WIDE_HEADER
            for i, (line, t) in enumerate(zip(lines[1:], ("connect", "close"))):
                m = re.fullmatch(r"(\d+) +" + re.escape(
                    f"{t:<12} {c.pid:<6} {CLIENT_COMM:<16} 6  {ca:<16} {sa:<16} "
                    f"{sport:<6} {s.port:<6} {netns_ino()}"), line)
                assert m, line
                assert (int(m[1]) == 0) == (i == 0), line


@pytest.mark.parametrize("args,words", [
    (["-4", "-6"], ["--ipv4", "--ipv6"]),
    (["-N", "x"], ["--netns", "'x'"]),
    (["-N", "0"], ["--netns", "'0'"]),
    (["-p", "x"], ["'x'"]),
    (["--cgroupmap", "/x"], ["'--cgroupmap'", "--cgroup"]),
    (["-L", "80"], ["'-L'"]),
    (["7"], ["'7'"]),
])
def test_usage_errors(args, words):
    r = run("tcptracer", *args)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("tcptracer: "), r.stderr
    for w in words:
        assert w in r.stderr, r.stderr


@pytest.mark.kernel
def test_close_of_the_last_descriptor_only(netns):
    """A connection's socket with two descriptors (dup): closing the first
    is no close of the connection; closing the second is its X."""
    from netns import wait_closed
    from sockops import COMM, SockOps
    with Server(netns, 4) as s, SockOps() as h:
        s.proc.stdin.write("5 5\n")
        s.proc.stdin.flush()
        with Tool("tcptracer", "-j", "-p", h.pid) as t:
            h.do(f"import os; c = socket.create_connection(('{s.addr}', {s.port})); "
                 f"c.sendall(b'x' * 5); r = c.recv(5)")
            sport = h.port("c")
            h.do("d = os.dup(c.fileno()); c.close()")
            h.do("e = socket.socket(fileno=d); e.shutdown(socket.SHUT_WR); "
                 "r = e.recv(10)")
            assert s.proc.stdout.readline() == "done\n"
            h.do("e.close()")
            wait_closed(netns, s.port, sport)
            out, err, rc = t.stop()
    assert rc == 0, err
    records = json_lines(out)
    no_loss(records)
    got = [(r["type"], r["pid"], r["comm"], r["sport"], r["dport"]) for r in records[:-1]]
    assert got == [("connect", h.pid, COMM, sport, s.port),
                   ("close", h.pid, COMM, sport, s.port)], got
