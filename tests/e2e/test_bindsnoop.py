"""bindsnoop end to end: binds a helper process of the test makes
(sockops.py), IPv4 and IPv6, TCP and UDP: those that succeed, with the
options set before them and the port the kernel picked for port 0, and
with -E those that fail (EADDRINUSE, EINVAL, EACCES) with the address
asked for; each exactly once, nothing else of that process."""
import re

import pytest

from conftest import Tool, json_lines, loss_record, run
from sockops import COMM, SockOps

SOL_SOCKET, SO_REUSEADDR, SO_REUSEPORT, SO_BINDTODEVICE = 1, 2, 15, 25
SOL_IP, IP_FREEBIND, IP_TRANSPARENT, IP_BIND_ADDRESS_NO_PORT = 0, 15, 19, 24
HEADER = "     PID COMM         PROT ADDR            PORT  OPTS  IF"
WIDE_HEADER = ("TIME(s)      UID RC                   PID COMM         PROT ADDR" + " " * 36
               + "PORT  OPTS  IF")


def binds(records):
    """The bind records, without "time", "ts" (checked), "netns", "tid"
    and "uid" (the helper's own: checked)."""
    got = []
    for r in records[:-1]:
        assert r["type"] == "bind", r
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", r.pop("time"))
        assert r.pop("ts") >= 0
        assert r.pop("tid") == r["pid"] and r.pop("netns") > 0
        got.append(r)
    return got


def no_loss(records):
    loss = loss_record(records)
    assert (loss["events_lost"], loss["map_inserts_failed"]) == (0, 0)


def rec(pid, ip, addr, port, proto="TCP", opts=".....", error=None, dev=0, uid=0):
    return {"type": "bind", "pid": pid, "uid": uid, "comm": COMM, "ret": -ERRNO[error] if error
            else 0, "error": error, "proto": proto, "ip": ip, "addr": addr, "port": port,
            "opts": opts, "bound_dev_if": dev}


ERRNO = {"EADDRINUSE": 98, "EINVAL": 22, "EACCES": 13}


def workload(h, ip):
    """Binds of every kind on h; returns the records bindsnoop -E -j
    should print for them, in order."""
    fam, lo, any_ = (("AF_INET", "127.0.0.1", "0.0.0.0") if ip == 4
                     else ("AF_INET6", "::1", "::"))
    out = []
    # Port 0: the kernel picks; reported as bound.
    h.do(f"a = socket.socket(socket.{fam}); a.bind(('{lo}', 0))")
    pa = h.port("a")
    out.append(rec(h.pid, ip, lo, pa))
    # The same port again: EADDRINUSE, with the address asked for.
    assert h.do(f"b = socket.socket(socket.{fam}); b.bind(('{lo}', {pa}))") == "EADDRINUSE"
    out.append(rec(h.pid, ip, lo, pa, error="EADDRINUSE"))
    # A bound socket bound again: EINVAL.
    assert h.do(f"a.bind(('{lo}', {pa + 1 if pa < 65535 else 1}))") == "EINVAL"
    out.append(rec(h.pid, ip, lo, pa + 1 if pa < 65535 else 1, error="EINVAL"))
    # SO_REUSEADDR and SO_REUSEPORT, UDP, on the wildcard address.
    h.do(f"u = socket.socket(socket.{fam}, socket.SOCK_DGRAM); "
         f"u.setsockopt({SOL_SOCKET}, {SO_REUSEADDR}, 1); "
         f"u.setsockopt({SOL_SOCKET}, {SO_REUSEPORT}, 1); u.bind(('{any_}', 0))")
    out.append(rec(h.pid, ip, any_, h.port("u"), proto="UDP", opts="...Rr"))
    return out


@pytest.mark.kernel
@pytest.mark.parametrize("ip", [4, 6])
def test_binds_exactly(ip):
    with SockOps() as h:
        with Tool("bindsnoop", "-j", "-E", "-p", h.pid) as t:
            expect = workload(h, ip)
            out, err, rc = t.stop()
    assert rc == 0, err
    records = json_lines(out)
    no_loss(records)
    assert binds(records) == expect


@pytest.mark.kernel
def test_options_and_device():
    """IP_FREEBIND, IP_TRANSPARENT, IP_BIND_ADDRESS_NO_PORT and
    SO_BINDTODEVICE (lo, index 1) as bcc's letters and IF; without -E
    the failed bind is not reported."""
    with SockOps() as h:
        with Tool("bindsnoop", "-j", "-p", h.pid) as t:
            h.do(f"s = socket.socket(); s.setsockopt({SOL_IP}, {IP_FREEBIND}, 1); "
                 f"s.setsockopt({SOL_IP}, {IP_TRANSPARENT}, 1); "
                 f"s.setsockopt({SOL_IP}, {IP_BIND_ADDRESS_NO_PORT}, 1); "
                 f"s.setsockopt({SOL_SOCKET}, {SO_BINDTODEVICE}, b'lo'); "
                 f"s.bind(('192.0.2.7', 0))")
            h.do(f"d = socket.socket(); d.setsockopt({SOL_SOCKET}, {SO_REUSEADDR}, 1); "
                 f"d.bind(('127.0.0.1', 0))")
            pd = h.port("d")
            assert h.do(f"e = socket.socket(); e.bind(('127.0.0.1', {pd}))") == "EADDRINUSE"
            out, err, rc = t.stop()
    assert rc == 0, err
    records = json_lines(out)
    no_loss(records)
    # IP_BIND_ADDRESS_NO_PORT: port 0 stays 0 until a connect.
    assert binds(records) == [rec(h.pid, 4, "192.0.2.7", 0, opts="FTN..", dev=1),
                              rec(h.pid, 4, "127.0.0.1", pd, opts="...R.")]


@pytest.mark.kernel
def test_eacces_as_another_user():
    """A port below 1024 as user nobody: EACCES; -u keeps its binds."""
    with SockOps(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]) as h:
        with Tool("bindsnoop", "-j", "-E", "-u", 65534) as t:
            assert h.do("s = socket.socket(); s.bind(('127.0.0.1', 7))") == "EACCES"
            h.do("s.bind(('127.0.0.1', 0))")
            port = h.port("s")
            out, err, rc = t.stop()
    assert rc == 0, err
    records = json_lines(out)
    no_loss(records)
    assert binds(records) == [rec(h.pid, 4, "127.0.0.1", 7, error="EACCES", uid=65534),
                              rec(h.pid, 4, "127.0.0.1", port, uid=65534)]


@pytest.mark.kernel
def test_port_and_family_filters():
    """-P (two ports of three), -4 and -6."""
    with SockOps() as h:
        for args in (["-P"], ["-4"], ["-6"]):
            h.do("x = [socket.socket() for _ in range(3)]; "
                 "[s.bind(('127.0.0.1', 0)) for s in x]; "
                 "y = socket.socket(socket.AF_INET6); y.bind(('::1', 0))")
            ports = [h.port(f"x[{i}]") for i in range(3)]
            py = h.port("y")
            h.do("[s.close() for s in x]; y.close()")
            if args == ["-P"]:
                args = ["-P", f"{ports[2]},{ports[0]}"]
            with Tool("bindsnoop", "-j", "-p", h.pid, *args) as t:
                h.do("x = [socket.socket() for _ in range(3)]; "
                     f"[s.bind(('127.0.0.1', p)) for s, p in zip(x, {ports})]; "
                     f"y = socket.socket(socket.AF_INET6); y.bind(('::1', {py}))")
                out, err, rc = t.stop()
            h.do("[s.close() for s in x]; y.close()")
            assert rc == 0, err
            records = json_lines(out)
            no_loss(records)
            got = [(r["ip"], r["port"]) for r in binds(records)]
            assert got == {"-P": [(4, ports[0]), (4, ports[2])],
                           "-4": [(4, p) for p in ports], "-6": [(6, py)]}[args[0]], args


@pytest.mark.kernel
def test_count():
    """--count: binds per address and port, most first, at the end."""
    with SockOps() as h:
        h.do("a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
             "a.setsockopt(1, 15, 1); a.bind(('127.0.0.1', 0))")
        pa = h.port("a")
        for args in (["-j"], []):
            with Tool("bindsnoop", "--count", "-p", h.pid, *args) as t:
                h.do(f"b = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(3)]; "
                     f"[s.setsockopt(1, 15, 1) for s in b]; "
                     f"[s.bind(('127.0.0.1', {pa})) for s in b]; "
                     f"c = socket.socket(); c.bind(('127.0.0.1', 0)); r = c.getsockname()[1]")
                pc = int(h.do("r = c.getsockname()[1]"))
                out, err, rc = t.stop()
            h.do("[s.close() for s in b]; c.close()")
            assert rc == 0, err
            if args:
                records = json_lines(out)
                no_loss(records)
                assert records[:-1] == [
                    {"type": "count", "ip": 4, "addr": "127.0.0.1", "port": pa, "binds": 3},
                    {"type": "count", "ip": 4, "addr": "127.0.0.1", "port": pc, "binds": 1}]
            else:
                assert out.splitlines() == [
                    f"{'LADDR':<32} {'LPORT':>20}     BINDS",
                    f"{'127.0.0.1':<32} {pa:>20}     3",
                    f"{'127.0.0.1':<32} {pc:>20}     1"], out


@pytest.mark.kernel
def test_text_columns():
    """bcc's columns; -t -U -E -w: TIME(s), UID, RC (the error's name),
    wide PID and ADDR."""
    with SockOps() as h:
        for args in ([], ["-t", "-U", "-E", "-w"]):
            with Tool("bindsnoop", "-p", h.pid, *args) as t:
                h.do("s = socket.socket(); s.setsockopt(1, 2, 1); s.bind(('127.0.0.1', 0))")
                port = h.port("s")
                assert h.do(f"s.bind(('127.0.0.1', {port}))") == "EINVAL"
                out, err, rc = t.stop()
            h.do("s.close()")
            assert rc == 0, err
            lines = out.splitlines()
            if not args:
                assert lines == [HEADER, f"{h.pid:>8} {COMM:<12} TCP  {'127.0.0.1':<15} "
                                 f"{port:<5} ...R.  0"], out
            else:
                assert lines[0] == WIDE_HEADER
                assert len(lines) == 3, out
                for line, rcs, first in ((lines[1], "0", True), (lines[2], "EINVAL", False)):
                    m = re.fullmatch(r"(\d\.\d{6})  " + re.escape(
                        f"{0:>6} {rcs:<13} {h.pid:>10} {COMM:<12} TCP  {'127.0.0.1':<39} "
                        f"{port:<5} ...R.  0"), line)
                    assert m and (m[1] == "0.000000") == first, line


@pytest.mark.parametrize("args,words", [
    (["-P", "0"], ["--port", "'0'"]),
    (["-P", "1,,2"], ["--port", "'1,,2'"]),
    (["-4", "-6"], ["--ipv4", "--ipv6"]),
    (["-p", "x"], ["'x'"]),
    (["--cgroupmap", "/x"], ["'--cgroupmap'", "--cgroup"]),
    (["-P"], ["'-P'", "needs a value"]),
    (["7"], ["'7'"]),
])
def test_usage_errors(args, words):
    r = run("bindsnoop", *args)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("bindsnoop: "), r.stderr
    for w in words:
        assert w in r.stderr, r.stderr
