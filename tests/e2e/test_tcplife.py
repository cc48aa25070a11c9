"""tcplife end to end: TCP connections the test makes from its own
namespace to a server in another (netns.py), with N bytes sent up and M
down, the client closing first: each is reported once on each end, with
exactly those bytes, and the process that connected (the client) or
closed (the server) it; and a connection the client resets."""
import re
import subprocess
import sys

import pytest

from conftest import Tool, json_lines, loss_record, run
from netns import (CLIENT_COMM, SERVER_COMM, Client, Server, one_client_argv, transfer,
                   wait_closed)

METHODS = ["tp_btf", "raw_tp", "tp"]
TARGET = {"tp_btf": "inet_sock_set_state", "raw_tp": "inet_sock_set_state",
          "tp": "sock/inet_sock_set_state"}
HEADER = "PID   COMM       LADDR           LPORT RADDR           RPORT TX_KB RX_KB MS"
WIDE_HEADER = ("TIME(s)   PID   COMM             IP LADDR" + " " * 35 + "LPORT RADDR" + " " * 35
               + "RPORT  TX_KB  RX_KB MS")


def ends(records, ports):
    """The records of connections between these ports (either end),
    without "time", "ts" and "span_ns" (checked)."""
    got = []
    for r in records:
        if r.get("type") == "connection" and {r["sport"], r["dport"]} <= ports:
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", r.pop("time"))
            assert r.pop("ts") >= 0 and r.pop("span_ns") > 0, r
            got.append(r)
    return got


def canon(records):
    """Connection records in one order: each end by its ports. The two
    ends of one connection reach CLOSE in no fixed order: the client in
    FIN_WAIT2 acknowledges the server's FIN before it enters TIME_WAIT
    (tcp_fin), and the server, on another CPU, can take that ACK and
    close first (CI's 6.12 run)."""
    return sorted(records, key=lambda r: (r["ip"], r["sport"], r["dport"]))


def want(netns, s, c, sport, n, m, who=("client", "server")):
    """Each end's data each way, exactly: the kernel's counters count a
    SYN and a FIN as a byte each (the client's bytes_acked is n + 2, its
    bytes_received m + 1), and tcplife takes them off."""
    ip = 6 if ":" in s.addr else 4
    caddr = netns.addr4 if ip == 4 else netns.addr6
    out = []
    if "client" in who:
        out.append({"type": "connection", "pid": c.pid, "tid": c.pid, "uid": 0,
                    "comm": CLIENT_COMM, "ip": ip, "saddr": caddr, "sport": sport,
                    "daddr": s.addr, "dport": s.port, "tx_bytes": n, "rx_bytes": m})
    if "server" in who:
        out.append({"type": "connection", "pid": s.pid, "tid": s.pid, "uid": 0,
                    "comm": SERVER_COMM, "ip": ip, "saddr": s.addr, "sport": s.port,
                    "daddr": caddr, "dport": sport, "tx_bytes": m, "rx_bytes": n})
    return out


def no_loss(records):
    loss = loss_record(records)
    assert (loss["events_lost"], loss["map_inserts_failed"]) == (0, 0)


@pytest.mark.kernel
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("ip", [4, 6])
def test_exact_bytes_and_processes(netns, method, ip):
    """The client closes first (at its FIN_WAIT2 -> CLOSE), then the
    server (LAST_ACK -> CLOSE); N and M differ, and are not KiB
    multiples."""
    n, m = 200001, 70003
    with Server(netns, ip) as s, Client() as c:
        with Tool("tcplife", "-j", "-v", env={"TRACEKIT_ATTACH": method}) as t:
            sport = transfer(netns, s, c, n, m)
            out, err, rc = t.stop()
    assert rc == 0, err
    assert f"tcplife: probe state: {method} {TARGET[method]}" in err.splitlines(), err
    records = json_lines(out)
    no_loss(records)
    assert canon(ends(records, {sport, s.port})) == canon(want(netns, s, c, sport, n, m))


@pytest.mark.kernel
def test_filters_drop_what_they_name(netns):
    """-4, -6, -L (the server's port: its end), -D (the client's end) and
    -p (the client's process): one IPv4 and one IPv6 connection each."""
    for opt in ("-4", "-6", "-L", "-D", "-p"):
        with Server(netns, 4) as s4, Server(netns, 6) as s6, Client() as c:
            args = {"-4": ["-4"], "-6": ["-6"], "-L": ["-L", f"{s4.port},{s6.port}"],
                    "-D": ["-D", f"{s6.port},{s4.port}"], "-p": ["-p", c.pid]}[opt]
            with Tool("tcplife", "-j", *args) as t:
                sports = {ip: transfer(netns, s, c, 1000 * ip, 10 * ip)
                          for ip, s in ((4, s4), (6, s6))}
                out, err, rc = t.stop()
        assert rc == 0, err
        records = json_lines(out)
        no_loss(records)
        got = ends(records, {sports[4], sports[6], s4.port, s6.port})
        both = {4: want(netns, s4, c, sports[4], 4000, 40),
                6: want(netns, s6, c, sports[6], 6000, 60)}
        expect = {"-4": both[4], "-6": both[6],
                  "-L": [both[4][1], both[6][1]], "-D": [both[4][0], both[6][0]],
                  "-p": [both[4][0], both[6][0]]}[opt]
        assert canon(got) == canon(expect), opt
        if opt in "-4-6":
            assert {r["ip"] for r in records[:-1]} == {int(opt[1])}, opt


@pytest.mark.kernel
def test_command(netns):
    """-- COMMAND: its connection only, not the server's end."""
    with Server(netns, 4) as s:
        s.proc.stdin.write("1234 5678\n")
        s.proc.stdin.flush()
        t = Tool("tcplife", "-j", "--", *one_client_argv(s, 1234, 5678)).start()
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
    """bcc's columns, KiB rounded down (the client's TX 5 KiB + 1000 and
    RX 2 KiB); -w -t: IP, wide addresses and TIME(s) first."""
    n, m = 5 * 1024 + 1000, 2048
    for args in ([], ["-w", "-t"]):
        with Server(netns, 4) as s, Client() as c:
            with Tool("tcplife", "-D", s.port, *args) as t:
                sport = transfer(netns, s, c, n, m)
                out, err, rc = t.stop()
        assert rc == 0, err
        lines = out.splitlines()
        assert len(lines) == 2, out
        if not args:
            assert lines[0] == HEADER
            assert re.fullmatch(re.escape(
                f"{c.pid:<5} {CLIENT_COMM:<10} {netns.addr4:<15} {sport:<5} {s.addr:<15} "
                f"{s.port:<5}     5     2 ") + r"\d+\.\d\d", lines[1]), lines[1]
        else:
            assert lines[0] == WIDE_HEADER
            assert re.fullmatch(r"0\.000000  " + re.escape(
                f"{c.pid:<5} {CLIENT_COMM:<16} 4  {netns.addr4:<39} {sport:<5} {s.addr:<39} "
                f"{s.port:<5}      5      2 ") + r"\d+\.\d\d", lines[1]), lines[1]


# The server of the reset test, in the namespace: accepts one connection,
# reads N bytes, sends M, waits until the client has acknowledged them
# all (SIOCOUTQ: nothing sent and unacknowledged), says "acked", and
# reads until the client's reset.
RESET_SERVER = r"""
import ctypes, fcntl, os, socket, struct, sys, time
ctypes.CDLL(None).prctl(15, b"%s", 0, 0, 0)
addr, n, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
ls = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET)
ls.bind((addr, 0))
ls.listen(1)
print("ready", os.getpid(), ls.getsockname()[1], flush=True)
s, _ = ls.accept()
got = 0
while got < n:
    got += len(s.recv(n - got))
s.sendall(b"s" * m)
while struct.unpack("i", fcntl.ioctl(s, 0x5411, b"\0" * 4))[0]:   # SIOCOUTQ
    time.sleep(0.001)
print("acked", flush=True)
try:
    while s.recv(65536):
        pass
except ConnectionResetError:
    print("reset", flush=True)
""" % SERVER_COMM

# Its client, here: connects, sends N bytes, reads M, says "got", and at
# the next line on stdin closes with a zero linger time (a reset, no
# FIN).
RESET_CLIENT = r"""
import ctypes, os, socket, struct, sys
ctypes.CDLL(None).prctl(15, b"%s", 0, 0, 0)
addr, port, n, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET)
s.connect((addr, port))
s.sendall(b"c" * n)
got = 0
while got < m:
    got += len(s.recv(m - got))
print("got", os.getpid(), s.getsockname()[1], flush=True)
sys.stdin.readline()
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
s.close()
print("done", flush=True)
""" % CLIENT_COMM


@pytest.mark.kernel
@pytest.mark.parametrize("ip", [4, 6])
def test_reset_connection_has_no_fin_to_take_off(netns, ip):
    """The client resets the connection once its data each way has been
    acknowledged: no FIN was sent either way, so only the client's SYN
    comes off its TX. The server's socket changes to CLOSE in softirq at
    the reset, before its process closed it: no task (JSON null)."""
    n, m = 3001, 7002
    addr = netns.peer4 if ip == 4 else netns.peer6
    caddr = netns.addr4 if ip == 4 else netns.addr6
    with Tool("tcplife", "-j") as t:
        server = subprocess.Popen(netns.argv(sys.executable, "-c", RESET_SERVER, addr,
                                             str(n), str(m)),
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True)
        client = None
        try:
            words = server.stdout.readline().split()
            assert words[0] == "ready", words
            spid, sport = int(words[1]), int(words[2])
            client = subprocess.Popen([sys.executable, "-c", RESET_CLIENT, addr, str(sport),
                                       str(n), str(m)],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            words = client.stdout.readline().split()
            assert words[0] == "got", words
            cpid, cport = int(words[1]), int(words[2])
            assert server.stdout.readline() == "acked\n"
            client.stdin.write("go\n")
            client.stdin.flush()
            assert client.stdout.readline() == "done\n"
            assert server.stdout.readline() == "reset\n"
            wait_closed(netns, sport, cport)
        finally:
            for p in (server, client):
                if p:
                    p.kill()
                    p.wait()
        out, err, rc = t.stop()
    assert rc == 0, err
    records = json_lines(out)
    no_loss(records)
    assert spid != 0
    assert ends(records, {sport, cport}) == [
        {"type": "connection", "pid": cpid, "tid": cpid, "uid": 0, "comm": CLIENT_COMM,
         "ip": ip, "saddr": caddr, "sport": cport, "daddr": addr, "dport": sport,
         "tx_bytes": n, "rx_bytes": m},
        {"type": "connection", "pid": None, "tid": None, "uid": None, "comm": None,
         "ip": ip, "saddr": addr, "sport": sport, "daddr": caddr, "dport": cport,
         "tx_bytes": m, "rx_bytes": n}]


@pytest.mark.parametrize("args,words", [
    (["-L", "0"], ["--localport", "'0'"]),
    (["-D", "1,,2"], ["--remoteport", "'1,,2'"]),
    (["-4", "-6"], ["--ipv4", "--ipv6"]),
    (["-p", "x"], ["'x'"]),
    (["-s"], ["'-s'", "-j"]),
    (["-D"], ["'-D'", "needs a value"]),
    (["7"], ["'7'"]),
])
def test_usage_errors(args, words):
    r = run("tcplife", *args)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("tcplife: "), r.stderr
    for w in words:
        assert w in r.stderr, r.stderr
