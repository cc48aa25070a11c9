"""tcpconnlat end to end: connects the test makes from its own namespace
to a server in another (netns.py) are reported once each, with the
connecting process and the connection's addresses; the threshold, the
task and family filters keep what they name; with netem delaying the
namespace's packets (its SYN-ACK among them) by D, the latency is at
least D (kernel matrix: netem is a module there)."""
import re

import pytest

from conftest import Tool, json_lines, loss_record, run
from netem import netem
from netns import CLIENT_COMM, Client, Server, one_client_argv, transfer

METHODS = ["tp_btf", "raw_tp", "tp"]
TARGET = {"tp_btf": "inet_sock_set_state", "raw_tp": "inet_sock_set_state",
          "tp": "sock/inet_sock_set_state"}
HEADER = "PID     COMM         IP SADDR            DADDR            DPORT LAT(ms)"
LPORT_HEADER = ("TIME(s)   PID     COMM         IP SADDR            LPORT  DADDR            "
                "DPORT LAT(ms)")


def connects(out, s):
    """The records of connects to server s (checked for their loss
    record, "time", "ts" and "latency_ns", which are taken out)."""
    records = json_lines(out)
    loss = loss_record(records)
    assert (loss["events_lost"], loss["map_inserts_failed"]) == (0, 0)
    got = []
    for r in records[:-1]:
        assert r["type"] == "connect", r
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", r.pop("time"))
        assert r.pop("ts") >= 0 and r["latency_ns"] > 0, r
        if (r["daddr"], r["dport"]) == (s.addr, s.port):
            got.append(r)
    return got


def want(netns, s, c, sport):
    ip = 6 if ":" in s.addr else 4
    return {"type": "connect", "pid": c.pid, "tid": c.pid, "uid": 0, "comm": CLIENT_COMM,
            "ip": ip, "saddr": netns.addr4 if ip == 4 else netns.addr6, "sport": sport,
            "daddr": s.addr, "dport": s.port}


def without_latency(recs):
    return [{k: v for k, v in r.items() if k != "latency_ns"} for r in recs]


@pytest.mark.kernel
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("ip", [4, 6])
def test_connect_once_with_its_process(netns, method, ip):
    """Two connects to the server: each once, with the client's pid and
    comm and both ends' addresses and ports."""
    with Server(netns, ip) as s, Client() as c:
        with Tool("tcpconnlat", "-j", "-v", env={"TRACEKIT_ATTACH": method}) as t:
            sports = [transfer(netns, s, c, 100, 10) for _ in range(2)]
            out, err, rc = t.stop()
    assert rc == 0, err
    assert f"tcpconnlat: probe state: {method} {TARGET[method]}" in err.splitlines(), err
    assert without_latency(connects(out, s)) == [want(netns, s, c, p) for p in sports]


@pytest.mark.kernel
def test_filters_keep_what_they_name(netns):
    """-4, -6, -p (the client; the server's pid: none), and the
    threshold: 0 keeps both, 100000 ms neither."""
    cases = [(["-4"], {4}), (["-6"], {6}), (["-p", "CLIENT"], {4, 6}),
             (["-p", "SERVER"], set()), (["0"], {4, 6}), (["100000"], set()),
             (["-6", "0.001"], {6})]
    for args, ips in cases:
        with Server(netns, 4) as s4, Server(netns, 6) as s6, Client() as c:
            args = [{"CLIENT": c.pid, "SERVER": s4.pid}.get(a, a) for a in args]
            with Tool("tcpconnlat", "-j", *args) as t:
                sports = {ip: transfer(netns, s, c, 10, 10) for ip, s in ((4, s4), (6, s6))}
                out, err, rc = t.stop()
        assert rc == 0, err
        got = without_latency(connects(out, s4) + connects(out, s6))
        assert got == [want(netns, s, c, sports[ip]) for ip, s in ((4, s4), (6, s6))
                       if ip in ips], args


@pytest.mark.kernel
def test_command(netns):
    """-- COMMAND: its connect only."""
    with Server(netns, 6) as s:
        s.proc.stdin.write("12 34\n")
        s.proc.stdin.flush()
        t = Tool("tcpconnlat", "-j", "--", *one_client_argv(s, 12, 34)).start()
        out, err, rc = t.wait()
        assert rc == 0, err
        assert s.proc.stdout.readline() == "done\n"
    (r,) = connects(out, s)
    assert (r["comm"], r["ip"], r["saddr"]) == (CLIENT_COMM, 6, netns.addr6), r
    assert len(json_lines(out)) == 2, out


def test_text_columns(netns):
    """bcc's columns; -L adds LPORT, -t TIME(s) first."""
    for args in ([], ["-L", "-t"]):
        with Server(netns, 4) as s, Client() as c:
            with Tool("tcpconnlat", "-4", *args) as t:
                sport = transfer(netns, s, c, 1, 1)
                out, err, rc = t.stop()
        assert rc == 0, err
        lines = out.splitlines()
        mine = [l for l in lines[1:] if f" {s.addr} " in l and f" {s.port} " in l]
        assert len(mine) == 1, out
        if not args:
            assert lines[0] == HEADER
            assert re.fullmatch(re.escape(
                f"{c.pid:<7} {CLIENT_COMM:<12} 4  {netns.addr4:<16} {s.addr:<16} {s.port:<5} ")
                + r"\d+\.\d\d", mine[0]), mine[0]
        else:
            assert lines[0] == LPORT_HEADER
            assert re.fullmatch(r"\d+\.\d{3} +" + re.escape(
                f"{c.pid:<7} {CLIENT_COMM:<12} 4  {netns.addr4:<16} {sport:<6} {s.addr:<16} "
                f"{s.port:<5} ") + r"\d+\.\d\d", mine[0]), mine[0]


DELAY_MS = 100


@pytest.mark.kernel
@pytest.mark.parametrize("ip", [4, 6])
def test_netem_delay_is_the_floor(netns, ip):
    """netem delays every packet the namespace sends by DELAY_MS, the
    server's SYN-ACK among them: each connect takes at least that (and
    well under a generous bound); a threshold over it drops them."""
    netem(netns, "delay", f"{DELAY_MS}ms")
    with Server(netns, ip) as s, Client() as c:
        with Tool("tcpconnlat", "-j", str(DELAY_MS // 2)) as t, \
                Tool("tcpconnlat", "-j", str(DELAY_MS * 50)) as over:
            sports = [transfer(netns, s, c, 10, 10) for _ in range(3)]
            out, err, rc = t.stop()
            assert rc == 0, err
            out_over, err, rc = over.stop()
            assert rc == 0, err
    got = connects(out, s)
    assert without_latency(got) == [want(netns, s, c, p) for p in sports]
    lat_ms = [r["latency_ns"] / 1e6 for r in got]
    assert all(DELAY_MS <= ms < DELAY_MS + 5000 for ms in lat_ms), lat_ms
    assert connects(out_over, s) == []


@pytest.mark.parametrize("args,words", [
    (["x"], ["min_ms", "'x'"]),
    (["-1"], ["'-1'"]),
    (["1", "2"], ["'2'"]),
    (["-4", "-6"], ["--ipv4", "--ipv6"]),
    (["-p", "x"], ["'x'"]),
    (["-j", "1e10"], ["min_ms", "'1e10'"]),
])
def test_usage_errors(args, words):
    r = run("tcpconnlat", *args)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("tcpconnlat: "), r.stderr
    for w in words:
        assert w in r.stderr, r.stderr
