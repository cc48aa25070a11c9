"""tcptop end to end: TCP connections the test makes from its own
namespace to a server in another (netns.py), N bytes up and M down: each
end's process and connection is reported with exactly those bytes
received and sent (the calls' returns: no SYN or FIN, unlike tcplife)."""
import re

import pytest

from conftest import Tool, json_lines, loss_record, require, run
from netns import CLIENT_COMM, SERVER_COMM, Client, Server, one_client_argv, transfer

TP_METHODS = ["tp_btf", "raw_tp", "tp"]
METHODS = TP_METHODS + ["fentry", "kprobe"]
TARGET = {"tp_btf": "sock_send_length", "raw_tp": "sock_send_length",
          "tp": "sock/sock_send_length"}
# bcc's headers: "%-7s %-12s %-21s %-21s %6s %6s", IPv6 "%-32s".
HEADER4 = "PID     COMM         LADDR                 RADDR                  RX_KB  TX_KB"
HEADER6 = ("PID     COMM         LADDR6" + " " * 27 + "RADDR6" + " " * 27 + " RX_KB  TX_KB")
NEVER = "3600"   # an interval that never ends: one interval, printed at exit


def has_length_tracepoints():
    """sock:sock_send_length and sock:sock_recv_length (6.3), by their
    names in the kernel's BTF."""
    with open("/sys/kernel/btf/vmlinux", "rb") as f:
        btf = f.read()
    return b"btf_trace_sock_send_length\0" in btf and b"btf_trace_sock_recv_length\0" in btf


def require_method(method):
    require(method)
    if method in TP_METHODS and not has_length_tracepoints():
        pytest.skip("this kernel lacks sock:sock_send_length (6.3): the kernel functions' "
                    "way is tested instead")


def rows(records, ports):
    """The tcptop records of connections between these ports, summed
    over intervals, without "time" (checked) and "interval"."""
    got = {}
    for r in records:
        if r.get("type") == "tcptop" and {r["sport"], r["dport"]} <= ports:
            r = dict(r)
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", r.pop("time"))
            assert r.pop("interval") >= 1
            key = tuple(sorted((k, v) for k, v in r.items() if not k.endswith("_bytes")))
            tot = got.setdefault(key, dict(r, rx_bytes=0, tx_bytes=0))
            tot["rx_bytes"] += r["rx_bytes"]
            tot["tx_bytes"] += r["tx_bytes"]
    return sorted(got.values(), key=lambda r: r["comm"])


def want(netns, s, c, sport, n, m, who=("client", "server")):
    ip = 6 if ":" in s.addr else 4
    caddr = netns.addr4 if ip == 4 else netns.addr6
    out = []
    if "client" in who:
        out.append({"type": "tcptop", "pid": c.pid, "comm": CLIENT_COMM, "ip": ip,
                    "saddr": caddr, "sport": sport, "daddr": s.addr, "dport": s.port,
                    "rx_bytes": m, "tx_bytes": n})
    if "server" in who:
        out.append({"type": "tcptop", "pid": s.pid, "comm": SERVER_COMM, "ip": ip,
                    "saddr": s.addr, "sport": s.port, "daddr": caddr, "dport": sport,
                    "rx_bytes": n, "tx_bytes": m})
    return out


def no_loss(records):
    loss = loss_record(records)
    assert (loss["events_lost"], loss["map_inserts_failed"]) == (0, 0)


@pytest.mark.kernel
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("ip", [4, 6])
def test_exact_bytes(netns, method, ip):
    """Two connections, N and M not KiB multiples, in one interval."""
    require_method(method)
    with Server(netns, ip) as s, Client() as c:
        with Tool("tcptop", "-j", "-v", NEVER, env={"TRACEKIT_ATTACH": method}) as t:
            sports = [transfer(netns, s, c, n, m) for n, m in ((200001, 70003), (5, 1))]
            out, err, rc = t.stop()
    assert rc == 0, err
    if method in TP_METHODS:
        assert f"tcptop: probe tp_send: {method} {TARGET[method]}" in err.splitlines(), err
    records = json_lines(out)
    no_loss(records)
    assert rows(records, {sports[0], s.port}) == want(netns, s, c, sports[0], 200001, 70003)
    assert rows(records, {sports[1], s.port}) == want(netns, s, c, sports[1], 5, 1)
    assert {r["interval"] for r in records[:-1]} == {1}


@pytest.mark.kernel
def test_intervals_sum_to_the_bytes(netns):
    """Every 1 s, a connection per interval over several: the records of
    each interval sum to what was sent and received, each interval
    numbered."""
    with Server(netns, 4) as s, Client() as c:
        with Tool("tcptop", "-j", "1") as t:
            sports = [transfer(netns, s, c, 1000 + i, 10 + i) for i in range(3)]
            out, err, rc = t.stop()
    assert rc == 0, err
    records = json_lines(out)
    no_loss(records)
    for i, sport in enumerate(sports):
        assert rows(records, {sport, s.port}) == want(netns, s, c, sport, 1000 + i, 10 + i)
    seqs = [r["interval"] for r in records[:-1]]
    assert seqs == sorted(seqs)


@pytest.mark.kernel
def test_filters(netns):
    """-4, -6 and -p (the client's process): one IPv4 and one IPv6
    connection each."""
    for opt in ("-4", "-6", "-p"):
        with Server(netns, 4) as s4, Server(netns, 6) as s6, Client() as c:
            args = {"-4": ["-4"], "-6": ["-6"], "-p": ["-p", c.pid]}[opt]
            with Tool("tcptop", "-j", *args, NEVER) as t:
                sports = {ip: transfer(netns, s, c, 1000 * ip, 10 * ip)
                          for ip, s in ((4, s4), (6, s6))}
                out, err, rc = t.stop()
        assert rc == 0, err
        records = json_lines(out)
        no_loss(records)
        both = {ip: want(netns, s, c, sports[ip], 1000 * ip, 10 * ip)
                for ip, s in ((4, s4), (6, s6))}
        got = {ip: rows(records, {sports[ip], s.port}) for ip, s in ((4, s4), (6, s6))}
        expect = {"-4": {4: both[4], 6: []}, "-6": {4: [], 6: both[6]},
                  "-p": {4: both[4][:1], 6: both[6][:1]}}[opt]
        assert got == expect, opt
        if opt == "-p":
            assert {r["pid"] for r in records[:-1]} == {c.pid}
        else:
            assert {r["ip"] for r in records[:-1]} == {int(opt[1])}, opt


@pytest.mark.kernel
def test_command(netns):
    """-- COMMAND: its connection only, not the server's end."""
    with Server(netns, 4) as s:
        s.proc.stdin.write("1234 5678\n")
        s.proc.stdin.flush()
        t = Tool("tcptop", "-j", "--", *one_client_argv(s, 1234, 5678)).start()
        out, err, rc = t.wait()
        assert rc == 0, err
        assert s.proc.stdout.readline() == "done\n"
    records = json_lines(out)
    no_loss(records)
    (r,) = records[:-1]
    assert (r["comm"], r["daddr"], r["dport"], r["tx_bytes"], r["rx_bytes"]) == \
        (CLIENT_COMM, s.addr, s.port, 1234, 5678), r


@pytest.mark.kernel
def test_text_columns(netns):
    """bcc's columns, KiB rounded down, IPv4 first then IPv6 under its
    own header; -C: a blank line for the cleared screen; the summary line
    (time and load average, then a blank line) unless -S."""
    for args in (["-C", "-S"], ["-C"]):
        with Server(netns, 4) as s4, Server(netns, 6) as s6, Client() as c:
            with Tool("tcptop", "-p", c.pid, *args, NEVER) as t:
                p4 = transfer(netns, s4, c, 5 * 1024 + 1000, 2048)
                p6 = transfer(netns, s6, c, 3 * 1024, 1023)
                out, err, rc = t.stop()
        assert rc == 0, err
        lines = out.splitlines()
        assert lines[0] == "Tracing... Output every 3600 secs. Hit Ctrl-C to end"
        assert lines[1] == ""
        if "-S" not in args:
            assert re.fullmatch(r"\d\d:\d\d:\d\d loadavg: [\d.]+ [\d.]+ [\d.]+ \d+/\d+ \d+",
                                lines[2]), lines[2]
            assert lines[3] == ""
            lines = lines[4:]
        else:
            lines = lines[2:]
        l4, r4 = f"{netns.addr4}:{p4}", f"{s4.addr}:{s4.port}"
        l6, r6 = f"{netns.addr6}:{p6}", f"{s6.addr}:{s6.port}"
        assert lines == [
            HEADER4,
            f"{c.pid:<7} {CLIENT_COMM:<12} {l4:<21} {r4:<21} {2:>6} {5:>6}",
            "",
            HEADER6,
            f"{c.pid:<7} {CLIENT_COMM:<12} {l6:<32} {r6:<32} {0:>6} {3:>6}",
        ], out


@pytest.mark.kernel
def test_sort_and_rows(netns):
    """-s all (sent + received), sent, received: largest first; -r 1:
    the first row only. Three connections of the client: A sends 3000
    and receives 10, B 10 and 5000, C 2000 and 2000."""
    sizes = {"A": (3000, 10), "B": (10, 5000), "C": (2000, 2000)}
    orders = {("-s", "all"): "BCA", ("-s", "sent"): "ACB", ("-s", "received"): "BCA",
              ("-s", "sent", "-r", "1"): "A"}
    for args, order in orders.items():
        with Server(netns, 4) as s, Client() as c:
            with Tool("tcptop", "-C", "-S", "-p", c.pid, *args, NEVER) as t:
                port = {k: transfer(netns, s, c, n, m) for k, (n, m) in sizes.items()}
                out, err, rc = t.stop()
        assert rc == 0, err
        lines = out.splitlines()
        assert lines[:3] == ["Tracing... Output every 3600 secs. Hit Ctrl-C to end", "",
                             HEADER4], out
        by_port = {v: k for k, v in port.items()}
        got = "".join(by_port[int(line.split()[2].rsplit(":", 1)[1])] for line in lines[3:])
        assert got == order, (args, out)


@pytest.mark.parametrize("args,words", [
    (["-s", "bytes"], ["--sort", "'bytes'", "sent"]),
    (["-r", "0"], ["--rows", "'0'"]),
    (["-4", "-6"], ["--ipv4", "--ipv6"]),
    (["-p", "x"], ["'x'"]),
    (["0"], ["'0'"]),
    (["1", "2", "3"], ["'3'"]),
])
def test_usage_errors(args, words):
    r = run("tcptop", *args)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("tcptop: "), r.stderr
    for w in words:
        assert w in r.stderr, r.stderr
