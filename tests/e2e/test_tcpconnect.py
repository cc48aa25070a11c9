"""tcpconnect: the loopback connects a helper process makes, exactly."""
import os
import re
import socket
import struct
import subprocess
import sys
import threading
import uuid

import pytest

from conftest import (Tool, assert_no_kernel_function_tracing, cgroup2_root, json_lines,
                      kernel_has, loss_record, own_cgroup, require, run, scratch_cgroup,
                      tool_path)

# The tracepoint way first (sock:inet_sock_set_state), then the kernel
# functions'; each test runs on every method the kernel has.
TP_METHODS = ["tp_btf", "raw_tp", "tp"]
METHODS = TP_METHODS + ["fentry", "kprobe"]
EXIT_METHOD = {"fentry": "fexit", "kprobe": "kretprobe"}
# The kernel-function way's entry and return programs (fentry/fexit,
# kprobe/kretprobe) are two-line wrappers of one enter() and one leave()
# (bpf/tcpconnect.bpf.c), where the filters, counts and cgroup columns
# are. The tests of those run that way once, as "kfunc": fentry where the
# kernel has it, else kprobes (best_kfunc); the tests of the attach
# itself (addresses, families, when a connect is reported, dry runs) run
# both. Each run of fentry's costs its start and exit several RCU Tasks
# grace periods (the trampolines' updates), seconds under TCG.
SHARED_METHODS = TP_METHODS + ["kfunc"]
STATE_TARGET = {"tp_btf": "inet_sock_set_state", "raw_tp": "inet_sock_set_state",
                "tp": "sock/inet_sock_set_state"}
# bcc's headers (tools/tcpconnect.py: "%-7s %-12s %-2s %-16s %-16s %-6s",
# LPORT "%-6s" with -L, " QUERY" with -d; -c: "%-25s %-25s %-20s %-10s",
# and libbpf-tools' LPORT "%-20s" with -s).
HEADER = "PID     COMM         IP SADDR            DADDR            DPORT"
LPORT_HEADER = "PID     COMM         IP SADDR            LPORT  DADDR            DPORT"
DNS_HEADER = "PID     COMM         IP SADDR            DADDR            DPORT  QUERY"
COUNT_HEADER = "LADDR                     RADDR                     RPORT                CONNECTS"
SPORT_COUNT_HEADER = ("LADDR                     RADDR                     LPORT                "
                      "RPORT                CONNECTS")
COMM = "tkconnect"
NOBODY = 65534

# The helper: named COMM, says "ready PID"; for each line "IP ADDR PORT
# block|nb|SPORT" on stdin it connects a new socket (blocking or not) and
# answers "ERRNO SPORT". A number for mode binds that local port first
# and closes the socket with a reset once connected, so that the same
# local port can connect to the same destination again (no TIME_WAIT).
CHILD = r"""
import ctypes, os, socket, struct, sys
ctypes.CDLL(None).prctl(15, b"%s", 0, 0, 0)
keep = []
print("ready", os.getpid(), flush=True)
for line in sys.stdin:
    ip, addr, port, mode = line.split()
    s = socket.socket(socket.AF_INET6 if ip == "6" else socket.AF_INET)
    keep.append(s)
    if mode.isdigit():
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((addr, int(mode)))
        s.connect((addr, int(port)))
        sport = s.getsockname()[1]
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        keep.pop().close()
        print(0, sport, flush=True)
        continue
    if mode == "nb":
        s.setblocking(False)
        err = s.connect_ex((addr, int(port)))
    else:
        try:
            s.connect((addr, int(port)))
            err = 0
        except OSError as e:
            err = e.errno
    print(err, s.getsockname()[1], flush=True)
""" % COMM


class Connector:
    """A helper process that connects when told to (after the tracer has
    started), so that its pid, uid and cgroup can be filtered on."""

    def __init__(self, user=None):
        self.proc = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, user=user)
        self.pid = self.proc.pid
        assert self.proc.stdout.readline() == f"ready {self.pid}\n"
        self.uid = 0 if user is None else user

    def connect(self, ip, addr, port, mode="block"):
        """Connect; returns (errno, local port)."""
        self.proc.stdin.write(f"{ip} {addr} {port} {mode}\n")
        self.proc.stdin.flush()
        err, sport = self.proc.stdout.readline().split()
        return int(err), int(sport)

    def record(self, ip, saddr, sport, daddr, dport):
        """The JSON record of one of its connects, without "time"."""
        return {"type": "connect", "pid": self.pid, "tid": self.pid, "uid": self.uid,
                "comm": COMM, "ip": ip, "saddr": saddr, "sport": sport, "daddr": daddr,
                "dport": dport}

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=10)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Servers:
    """Listening loopback sockets: v4[i] on 127.0.0.1, v6[i] on ::1; and a
    port of each family that is bound but not listening (refuses)."""

    def __init__(self, n=3):
        self.socks = []
        self.v4 = [self.listen(socket.AF_INET, "127.0.0.1") for _ in range(n)]
        self.v6 = [self.listen(socket.AF_INET6, "::1") for _ in range(n)]
        self.closed4 = self.bind(socket.AF_INET, "127.0.0.1")

    def bind(self, family, addr):
        s = socket.socket(family)
        s.bind((addr, 0))
        self.socks.append(s)
        return s.getsockname()[1]

    def listen(self, family, addr):
        port = self.bind(family, addr)
        self.socks[-1].listen(128)
        return port

    def close(self):
        for s in self.socks:
            s.close()


@pytest.fixture
def servers():
    s = Servers()
    yield s
    s.close()


def probes(stderr):
    """{probe: (method, function)} from -v's "probe NAME: METHOD TARGET"."""
    return {m[1]: (m[2], m[3])
            for m in re.finditer(r"^tcpconnect: probe (\S+): (\S+) (\S+)$", stderr, re.M)}


DNS_TARGET = {"tp_btf": "netif_receive_skb", "raw_tp": "netif_receive_skb",
              "tp": "net/netif_receive_skb"}


def expected_probes(method, ips=(4, 6), dns=None):
    """dns: the method of -d's probe, when it is on. The tracepoint way
    has one probe for both families (-4 and -6 filter in BPF)."""
    if method in TP_METHODS:
        want = {"tp_connect_state": (method, STATE_TARGET[method])}
    else:
        want = {f"kf_v{ip}_connect_{part}": (m, f"tcp_v{ip}_connect")
                for ip in ips for part, m in (("entry", method), ("exit", EXIT_METHOD[method]))}
    if dns:
        want["dns_reply"] = (dns, DNS_TARGET[dns])
    return want


def connects(out):
    """The connect records of a JSON run without their "time" (checked),
    and the loss record, which must say nothing was lost."""
    records = json_lines(out) if isinstance(out, str) else out
    assert loss_record(records) == {"type": "loss", "events_lost": 0,
                                    "map_inserts_failed": 0}
    got = []
    for r in records[:-1]:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", r.pop("time")), r
        got.append(r)
    return got


def tracing(method, *args, dns=None):
    """dns: the method -d's probe is to start at."""
    attach = ",".join(m for m in (method, dns) if m)
    return Tool("tcpconnect", "-v", *args, env={"TRACEKIT_ATTACH": attach} if attach else None)


def stopped(t, method, ips=(4, 6), dns=None, stderr=None):
    """The tool's stdout; stderr: a list that gets its stderr lines."""
    out, err, rc = t.stop()
    assert rc == 0, err
    if method:
        assert probes(err) == expected_probes(method, ips, dns), err
    if stderr is not None:
        stderr.extend(err.splitlines())
    return out


def best_kfunc(method):
    """method, required; for "kfunc", fentry where the kernel has it, else
    kprobe (SHARED_METHODS)."""
    if method == "kfunc":
        method = "fentry" if kernel_has("fentry") else "kprobe"
    require(method)
    return method


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.kernel
def test_ipv4_and_ipv6_json(servers, method):
    require(method)
    with Connector() as c:
        with tracing(method, "-j", "-p", c.pid) as t:
            e4, sport4 = c.connect(4, "127.0.0.1", servers.v4[0])
            e6, sport6 = c.connect(6, "::1", servers.v6[0])
            out = stopped(t, method)
    assert (e4, e6) == (0, 0)
    assert connects(out) == [
        c.record(4, "127.0.0.1", sport4, "127.0.0.1", servers.v4[0]),
        c.record(6, "::1", sport6, "::1", servers.v6[0]),
    ]


def test_text_columns(servers):
    with Connector() as c:
        with tracing(None, "-p", c.pid) as t:
            _, sport4 = c.connect(4, "127.0.0.1", servers.v4[0])
            _, sport6 = c.connect(6, "::1", servers.v6[1])
            out = stopped(t, None)
    assert out.splitlines() == [
        HEADER,
        f"{c.pid:<7} {COMM:<12} 4  {'127.0.0.1':<16} {'127.0.0.1':<16} {servers.v4[0]}",
        f"{c.pid:<7} {COMM:<12} 6  {'::1':<16} {'::1':<16} {servers.v6[1]}",
    ]


@pytest.mark.parametrize("opt", ["-L", "--lport", "-s"])
def test_lport_column(servers, opt):
    """-L (bcc) adds LPORT, the local port, between SADDR and DADDR; -s
    (libbpf-tools' --source-port) does the same outside -c."""
    with Connector() as c:
        with tracing(None, opt, "-p", c.pid) as t:
            _, sport4 = c.connect(4, "127.0.0.1", servers.v4[0])
            _, sport6 = c.connect(6, "::1", servers.v6[1])
            out = stopped(t, None)
    assert out.splitlines() == [
        LPORT_HEADER,
        f"{c.pid:<7} {COMM:<12} 4  {'127.0.0.1':<16} {sport4:<6} {'127.0.0.1':<16} {servers.v4[0]}",
        f"{c.pid:<7} {COMM:<12} 6  {'::1':<16} {sport6:<6} {'::1':<16} {servers.v6[1]}",
    ]


def test_timestamp_and_uid_columns(servers):
    """-t and -U: bcc's TIME(s) ("%-9.3f") and UID ("%-6d") in front, in
    that order, with -L's LPORT; the seconds count up from the start."""
    with Connector(user=NOBODY) as c:
        with tracing(None, "-t", "-U", "-L", "-p", c.pid) as t:
            sports = [c.connect(4, "127.0.0.1", servers.v4[i])[1] for i in range(2)]
            out = stopped(t, None)
    lines = out.splitlines()
    assert lines[0] == "TIME(s)  UID   " + LPORT_HEADER
    assert len(lines) == 3, out
    times = []
    for line, sport, port in zip(lines[1:], sports, servers.v4):
        m = re.fullmatch(r"(\d+\.\d{3}) +(.*)", line)
        assert m and len(m[1]) <= 8 and line[8] == " ", line
        assert line[9:] == (f"{NOBODY:<5} {c.pid:<7} {COMM:<12} 4  {'127.0.0.1':<16} "
                            f"{sport:<6} {'127.0.0.1':<16} {port}"), line
        times.append(float(m[1]))
    assert times == sorted(times)


@pytest.mark.parametrize("method", SHARED_METHODS)
@pytest.mark.kernel
def test_count_mode(servers, method):
    """-c: one row per (source, destination, port), by count, at exit."""
    method = best_kfunc(method)
    plan = [(4, "127.0.0.1", servers.v4[0], 5), (4, "127.0.0.1", servers.v4[1], 3),
            (6, "::1", servers.v6[0], 2)]
    for fmt in ("-j", None):
        with Connector() as c:
            with tracing(method, "-c", "-p", c.pid, *([fmt] if fmt else [])) as t:
                for ip, addr, port, n in plan:
                    for _ in range(n):
                        assert c.connect(ip, addr, port)[0] == 0
                out = stopped(t, method)
        if fmt:
            records = json_lines(out)
            assert loss_record(records)["map_inserts_failed"] == 0
            assert records[:-1] == [{"type": "connect_count", "ip": ip, "saddr": addr,
                                     "daddr": addr, "dport": port, "count": n}
                                    for ip, addr, port, n in plan]
        else:
            assert out.splitlines() == [COUNT_HEADER] + [
                f"{addr:<25} {addr:<25} {port:<20} {n}" for _, addr, port, n in plan]


@pytest.mark.parametrize("method", SHARED_METHODS)
@pytest.mark.kernel
def test_count_per_source_port(servers, method):
    """-c -s: one row per (source, destination, local port, port), with
    libbpf-tools' LPORT column; the same connects without -s in one row
    per destination. Local ports are bound by the helper, so that one of
    them connects to one destination several times."""
    method = best_kfunc(method)
    a, b = servers.v4[0], servers.v4[1]
    with socket.socket() as s1, socket.socket() as s2:   # two free local ports
        s1.bind(("127.0.0.1", 0))
        s2.bind(("127.0.0.1", 0))
        p1, p2 = s1.getsockname()[1], s2.getsockname()[1]
    plan = [(p1, a), (p2, a), (p1, a), (p1, a), (p2, a), (0, b)]
    for fmt in ("-j", None):
        runs = {}
        for opts in (["-s"], []):
            with Connector() as c:
                with tracing(method, "-c", *opts, "-p", c.pid, *([fmt] if fmt else [])) as t:
                    done = [c.connect(4, "127.0.0.1", port, str(lport)) for lport, port in plan]
                    runs[bool(opts)] = stopped(t, method)
            assert all(err == 0 for err, _ in done), done
            if opts:
                ephemeral = done[-1][1]
        per_port = [(p1, a, 3), (p2, a, 2), (ephemeral, b, 1)]
        if fmt:
            records = json_lines(runs[True])
            assert loss_record(records)["map_inserts_failed"] == 0
            assert records[:-1] == [{"type": "connect_count", "ip": 4, "saddr": "127.0.0.1",
                                     "sport": lport, "daddr": "127.0.0.1", "dport": port,
                                     "count": n} for lport, port, n in per_port]
            records = json_lines(runs[False])
            assert records[:-1] == [{"type": "connect_count", "ip": 4, "saddr": "127.0.0.1",
                                     "daddr": "127.0.0.1", "dport": port, "count": n}
                                    for port, n in ((a, 5), (b, 1))]
        else:
            assert runs[True].splitlines() == [SPORT_COUNT_HEADER] + [
                f"{'127.0.0.1':<25} {'127.0.0.1':<25} {lport:<20} {port:<20} {n}"
                for lport, port, n in per_port]
            assert runs[False].splitlines() == [COUNT_HEADER] + [
                f"{'127.0.0.1':<25} {'127.0.0.1':<25} {port:<20} {n}"
                for port, n in ((a, 5), (b, 1))]


def dns_name(name):
    return b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0"


class DnsServer:
    """A DNS server on a loopback address, port 53, in a thread: it answers
    each query for a name in `answers` with that name's records, a list
    of (owner or None for the question's name, "A"|"AAAA"|"CNAME", value);
    a query for "garbage." gets bytes that are not DNS; an empty datagram
    ends it."""

    TYPES = {"A": 1, "CNAME": 5, "AAAA": 28}

    def __init__(self, family, addr, answers):
        self.answers = answers
        self.sock = socket.socket(family, socket.SOCK_DGRAM)
        self.sock.bind((addr, 53))
        self.addr = (addr, 53)
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def record(self, owner, rtype, value):
        if rtype == "CNAME":
            rdata = dns_name(value)
        else:
            rdata = socket.inet_pton(socket.AF_INET6 if rtype == "AAAA" else socket.AF_INET, value)
        return ((b"\xc0\x0c" if owner is None else dns_name(owner))
                + struct.pack(">HHIH", self.TYPES[rtype], 1, 60, len(rdata)) + rdata)

    def serve(self):
        while True:
            query, peer = self.sock.recvfrom(512)
            if not query:
                return
            end = 12
            while query[end]:
                end += query[end] + 1
            labels, i = [], 12
            while query[i]:
                labels.append(query[i + 1:i + 1 + query[i]].decode())
                i += query[i] + 1
            name = ".".join(labels)
            if name == "garbage":
                self.sock.sendto(b"\x00not a DNS reply", peer)
                continue
            recs = self.answers[name]
            reply = (query[:2] + struct.pack(">HHHHH", 0x8180, 1, len(recs), 0, 0)
                     + query[12:end + 5] + b"".join(self.record(*r) for r in recs))
            self.sock.sendto(reply, peer)

    def resolve(self, name):
        """Ask, as a resolver would, and wait for the reply."""
        with socket.socket(self.sock.family, socket.SOCK_DGRAM) as s:
            s.settimeout(60)
            s.sendto(struct.pack(">HHHHHH", 0x4b54, 0x0100, 1, 0, 0, 0) + dns_name(name)
                     + struct.pack(">HH", 1, 1), self.addr)
            return s.recv(2048)

    def close(self):
        """Stop the thread first: a socket closed while a thread waits in
        recvfrom stays bound to port 53 until that call returns."""
        with socket.socket(self.sock.family, socket.SOCK_DGRAM) as s:
            s.sendto(b"", self.addr)
        self.thread.join(60)
        assert not self.thread.is_alive()
        self.sock.close()


def query_cell(cell, name):
    """QUERY as bcc prints it: the name, and "(N.NNNms)" when the reply
    came more than 100 ms before the connect (a slow machine)."""
    m = re.fullmatch(re.escape(name) + r"(?: \((\d+\.\d{3})ms\))?", cell)
    assert m, (cell, name)
    assert m[1] is None or float(m[1]) > 100, cell


# -d's probe: each method of its chain, beside each connect method.
DNS_METHODS = [("tp_btf", "tp_btf"), ("raw_tp", "raw_tp"), ("tp", "tp"), ("fentry", "tp_btf"),
               ("kprobe", "raw_tp"), ("kprobe", "tp")]


@pytest.mark.parametrize("method,dns", DNS_METHODS)
@pytest.mark.kernel
def test_dns_query_column(servers, method, dns):
    """-d: a connect to an address a DNS reply gave carries the question's
    name (A over IPv4, AAAA over IPv6, and through a CNAME); other
    loopback connects are "localhost", an address no reply gave "No DNS
    Query". The replies come from the test's own DNS servers on
    loopback addresses, port 53."""
    require(method)
    require(dns)
    tag = uuid.uuid4().hex[:8]
    plain, alias, six = f"plain-{tag}.tk.test", f"alias-{tag}.tk.test", f"six-{tag}.tk.test"
    b, c = int(tag[:2], 16), int(tag[2:4], 16) % 250 + 1
    addr, other, cname_addr = (f"127.77.{b}.{c + i}" for i in range(3))
    listeners = []
    for a in (addr, other, cname_addr):
        ls = socket.socket()
        ls.bind((a, 0))
        ls.listen(16)
        listeners.append(ls)
    port, port_other, port_cname = (ls.getsockname()[1] for ls in listeners)
    answers = {
        plain: [(None, "A", addr)],
        alias: [(None, "CNAME", f"edge-{tag}.cdn.test"), (f"edge-{tag}.cdn.test", "A", cname_addr)],
        six: [(None, "AAAA", "::1")],
    }
    v4 = DnsServer(socket.AF_INET, "127.53.0.1", answers)
    v6 = DnsServer(socket.AF_INET6, "::1", answers)
    try:
        runs = {}
        for fmt in (None, "-j"):
            err = []
            with Connector() as c:
                with tracing(method, "-d", "-p", c.pid, *([fmt] if fmt else []), dns=dns) as t:
                    v4.resolve(plain)
                    v4.resolve(alias)
                    v4.resolve("garbage")
                    c.connect(4, addr, port)
                    c.connect(4, other, port_other)
                    c.connect(4, cname_addr, port_cname)
                    c.connect(4, "127.0.0.1", servers.v4[0])
                    c.connect(6, "::1", servers.v6[0])   # before the AAAA reply
                    v6.resolve(six)
                    c.connect(6, "::1", servers.v6[1])
                    out = stopped(t, method, dns=dns, stderr=err)
            runs[fmt] = (out, err, c.pid)
    finally:
        v4.close()
        v6.close()
        for ls in listeners:
            ls.close()
    want = [(4, addr, port, plain), (4, other, port_other, None),
            (4, cname_addr, port_cname, alias), (4, "127.0.0.1", servers.v4[0], None),
            (6, "::1", servers.v6[0], None), (6, "::1", servers.v6[1], six)]

    out, err, pid = runs[None]
    lines = out.splitlines()
    assert lines[0] == DNS_HEADER
    assert len(lines) == 1 + len(want), out
    for line, (ip, daddr, dport, name) in zip(lines[1:], want):
        saddr = "127.0.0.1" if ip == 4 else "::1"   # lo's source for 127/8
        prefix = f"{pid:<7} {COMM:<12} {ip:<2} {saddr:<16} {daddr:<16} {dport:<6} "
        assert line.startswith(prefix), (line, prefix)
        if name:
            query_cell(line[len(prefix):], name)
        elif daddr in ("127.0.0.1", "::1"):
            assert line[len(prefix):] == "localhost", line
        else:
            assert line[len(prefix):] == "No DNS Query", line
    # Text mode says how many replies it could not read (the garbage one;
    # the counts are at least the test's: others may come meanwhile).
    unread = [line for line in err if "could not be read" in line]
    assert len(unread) == 1 and re.fullmatch(
        r"tcpconnect: [1-9]\d* of ([4-9]|\d\d+) DNS replies could not be read \(cut short, or not DNS\)",
        unread[0]), err

    out, err, pid = runs["-j"]
    assert not [line for line in err if "could not be read" in line], err
    records = json_lines(out)
    dns_stats = records.pop(-2)
    assert dns_stats["type"] == "dns", dns_stats
    assert dns_stats["replies"] >= 4 and dns_stats["unreadable"] >= 1, dns_stats
    got = connects(records)
    assert len(got) == len(want), got
    for r, (ip, daddr, dport, name) in zip(got, want):
        age = r.pop("query_age_ms", None)
        assert (r["daddr"], r["dport"], r["query"]) == (daddr, dport, name), r
        assert (age is not None) == (name is not None) and (age is None or age >= 0), (r, age)


@pytest.mark.parametrize("method", SHARED_METHODS)
@pytest.mark.kernel
def test_port_filter(servers, method):
    method = best_kfunc(method)
    a, b, x = servers.v4[0], servers.v4[1], servers.v6[2]
    for ports, wanted in ((f"{a}", {a}), (f"{b},{x}", {b, x}), ("9", set())):
        with Connector() as c:
            with tracing(method, "-j", "-p", c.pid, "-P", ports) as t:
                done = [c.connect(4, "127.0.0.1", a), c.connect(4, "127.0.0.1", b),
                        c.connect(6, "::1", x), c.connect(4, "127.0.0.1", a)]
                out = stopped(t, method)
        expect = [c.record(ip, addr, sport, addr, port)
                  for (ip, addr, port), (_, sport) in zip(
                      [(4, "127.0.0.1", a), (4, "127.0.0.1", b), (6, "::1", x),
                       (4, "127.0.0.1", a)], done)
                  if port in wanted]
        assert connects(out) == expect, ports


@pytest.mark.parametrize("method", SHARED_METHODS)
@pytest.mark.kernel
def test_pid_and_uid_filters(servers, method):
    """-p and -u each include their process's connect and exclude the
    other's; the uid is reported."""
    method = best_kfunc(method)
    port = servers.v4[0]
    with Connector() as mine, Connector(user=NOBODY) as other:
        for args, who in ((["-p", mine.pid], mine), (["-p", other.pid], other),
                          (["-u", NOBODY], other)):
            with tracing(method, "-j", *args) as t:
                sports = {c.pid: c.connect(4, "127.0.0.1", port)[1] for c in (mine, other)}
                out = stopped(t, method)
            got = [r for r in connects(out) if r["comm"] == COMM]
            assert got == [who.record(4, "127.0.0.1", sports[who.pid], "127.0.0.1", port)], args


@pytest.mark.parametrize("method", SHARED_METHODS)
@pytest.mark.kernel
def test_cgroup_filter(servers, method):
    """--cgroup (long only: -c is --count) takes the connect of a process
    in that cgroup, not the test's own."""
    method = best_kfunc(method)
    root = cgroup2_root()
    cg = os.path.join(root, f"tk-tcpconnect-{uuid.uuid4().hex[:8]}")
    os.mkdir(cg)
    try:
        with Connector() as inside:
            with open(os.path.join(cg, "cgroup.procs"), "w") as f:
                f.write(str(inside.pid))
            port = servers.v4[0]
            with tracing(method, "-j", "--cgroup", cg) as t:
                outside = socket.create_connection(("127.0.0.1", port))
                _, sport = inside.connect(4, "127.0.0.1", port)
                out = stopped(t, method)
            outside.close()
            with open(os.path.join(root, "cgroup.procs"), "w") as f:
                f.write(str(inside.pid))
    finally:
        os.rmdir(cg)
    assert connects(out) == [inside.record(4, "127.0.0.1", sport, "127.0.0.1", port)]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.kernel
def test_reported_once_the_syn_is_sent(servers, method):
    """A refused connect and a non-blocking one in progress are reported
    (the kernel sent their SYN); one that fails before (a TCP connect to
    the broadcast address has no route) is not."""
    require(method)
    with Connector() as c:
        with tracing(method, "-j", "-p", c.pid) as t:
            refused = c.connect(4, "127.0.0.1", servers.closed4)
            unroutable = c.connect(4, "255.255.255.255", servers.v4[0])
            nonblocking = c.connect(4, "127.0.0.1", servers.v4[1], "nb")
            out = stopped(t, method)
    assert refused[0] == 111  # ECONNREFUSED
    assert unroutable[0] != 0
    assert nonblocking[0] in (0, 115)  # EINPROGRESS
    got = connects(out)
    assert len(got) == 2, got
    # The local port of the refused connect, as the socket still has it
    # (a kernel may also have released it by the time it was asked).
    assert got[0]["sport"] == refused[1] or (refused[1] == 0 and got[0]["sport"] > 0)
    assert got[0] == c.record(4, "127.0.0.1", got[0]["sport"], "127.0.0.1", servers.closed4)
    assert got[1] == c.record(4, "127.0.0.1", nonblocking[1], "127.0.0.1", servers.v4[1])


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.kernel
def test_v4_mapped_and_family_options(servers, method):
    """An IPv6 socket connecting to ::ffff:127.0.0.1 is reported once, as
    IPv4 (tcp_v6_connect hands it to tcp_v4_connect); -4 and -6 attach
    and report only their family."""
    require(method)
    mapped = "::ffff:127.0.0.1"
    for opt, ips in ((None, (4, 6)), ("-4", (4,)), ("-6", (6,))):
        with Connector() as c:
            with tracing(method, "-j", "-p", c.pid, *([opt] if opt else [])) as t:
                _, s4 = c.connect(4, "127.0.0.1", servers.v4[0])
                _, s6 = c.connect(6, "::1", servers.v6[0])
                _, sm = c.connect(6, mapped, servers.v4[1])
                out = stopped(t, method, ips)
        want = []
        if 4 in ips:
            want.append(c.record(4, "127.0.0.1", s4, "127.0.0.1", servers.v4[0]))
        if 6 in ips:
            want.append(c.record(6, "::1", s6, "::1", servers.v6[0]))
        if opt is None or opt == "-4":
            want.append(c.record(4, "127.0.0.1", sm, "127.0.0.1", servers.v4[1]))
        else:
            want.append(c.record(6, mapped, sm, mapped, servers.v4[1]))
        assert connects(out) == want, opt


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.kernel
def test_dry_run_names_the_methods(method):
    require(method)
    r = run("tcpconnect", "--dry-run", env={"TRACEKIT_ATTACH": method})
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:-1] == [f"probe {p} {m} {f}" for p, (m, f) in
                          expected_probes(method).items()]
    assert re.fullmatch(r"transport (ringbuf|perf)", lines[-1])


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.kernel
def test_dns_dry_run_and_duration(method):
    """-d adds its probe on net:netif_receive_skb, at the best method the
    kernel has; --duration (no short letter here) ends a run by itself."""
    require(method)
    r = run("tcpconnect", "-d", "--dry-run", env={"TRACEKIT_ATTACH": method})
    assert r.returncode == 0, r.stderr
    # TRACEKIT_ATTACH=METHOD starts -d's tracepoint chain there too.
    best = method if method in TP_METHODS else next(
        m for m in ("tp_btf", "raw_tp", "tp") if kernel_has(m))
    assert r.stdout.splitlines()[:-1] == [f"probe {p} {m} {f}" for p, (m, f) in
                                          expected_probes(method, dns=best).items()]
    r = run("tcpconnect", "-d", "-j", "--duration", "0.2", env={"TRACEKIT_ATTACH": method})
    assert r.returncode == 0, r.stderr
    records = json_lines(r.stdout)
    assert records[-2]["type"] == "dns" and records[-1]["type"] == "loss", records


@pytest.mark.kernel
def test_no_kernel_function_tracing_fails_in_one_line():
    """TRACEKIT_ATTACH=kprobe keeps tcpconnect to the kernel functions."""
    assert_no_kernel_function_tracing("tcpconnect", "tcp_v4_connect", attach="kprobe")


@pytest.mark.kernel
def test_tracepoint_way_first():
    """With no TRACEKIT_ATTACH the tracepoint way is the first choice;
    -v says what it cannot see."""
    require("tp")
    r = run("tcpconnect", "-v", "--dry-run")
    assert r.returncode == 0, r.stderr
    assert re.search(r"^probe tp_connect_state (tp_btf|raw_tp|tp) ", r.stdout, re.M), r.stdout
    r = run("tcpconnect", "-v", "--duration", "0.1")
    assert r.returncode == 0, r.stderr
    assert "tcpconnect: tracepoints traced; they cannot see the local port" in r.stderr


def test_help():
    r = run("tcpconnect", "--help")
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout.startswith("Usage: tcpconnect [OPTION...] [-- COMMAND [ARG...]]\n")
    for opt in (r"-c, --count", r"-d, --dns", r"-L, --lport", r"-s, --source-port",
                r"    --cgroup=PATH", r"    --duration=SEC"):
        assert re.search(r"^  " + opt + " ", r.stdout, re.M), opt


@pytest.mark.parametrize("args,words", [
    (["-P", "0"], ["--port", "'0'"]),
    (["-P", "65536"], ["--port", "'65536'"]),
    (["-P", "80,,81"], ["--port", "'80,,81'"]),
    (["-P", "80,"], ["--port", "'80,'"]),
    (["-P", "http"], ["--port", "'http'"]),
    (["-P", ",".join(str(p) for p in range(1, 66))], ["--port", "at most 64"]),
    (["-P"], ["'-P'", "needs a value"]),
    (["-4", "-6"], ["--ipv4", "--ipv6"]),
    (["-c", "-U"], ["--count", "--print-uid"]),
    (["-c", "/sys/fs/cgroup"], ["'/sys/fs/cgroup'"]),   # -c is --count here
    (["-c", "-d"], ["--dns", "--count"]),
    (["-d", "5"], ["'5'"]),                               # -d is --dns here
    (["--duration", "-1"], ["--duration", "'-1'"]),
    (["--duration", "soon"], ["--duration", "'soon'"]),
    (["-L", "1"], ["'1'"]),
    (["-s", "80"], ["'80'"]),
    (["--cgroup", "/nonexistent-tk"], ["--cgroup", "'/nonexistent-tk'"]),
    (["1"], ["'1'"]),
    (["--bogus"], ["'--bogus'"]),
])
def test_usage_errors(args, words):
    r = run("tcpconnect", *args)
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.endswith("\n"), r.stderr
    assert r.stderr.startswith("tcpconnect: ")
    for w in words:
        assert w in r.stderr, r.stderr


def workload_cgroup():
    """A cgroup v2 directory of the test's own (conftest.scratch_cgroup)."""
    return scratch_cgroup(f"tk-tcpconnect-{os.getpid()}")


def cgroup_cell(path):
    """The CGROUP column: the path padded to 24, or whole, then a blank."""
    return f"{path:<24} "


@pytest.mark.parametrize("method", SHARED_METHODS)
@pytest.mark.kernel
def test_print_cgroup_column_and_json(servers, method):
    """--print-cgroup: CGROUP, the connecting task's cgroup v2 path, comes
    after COMM (with the task's columns, before the addresses); "cgroup"
    in JSON. The helper is moved into a cgroup the test makes."""
    method = best_kfunc(method)
    runs = {}
    with workload_cgroup() as cg:
        for fmt in (None, "-j"):
            with Connector() as c:
                (cg / "cgroup.procs").write_text(str(c.pid))
                with tracing(method, "--print-cgroup", "-p", c.pid,
                             *([fmt] if fmt else [])) as t:
                    _, sport4 = c.connect(4, "127.0.0.1", servers.v4[0])
                    _, sport6 = c.connect(6, "::1", servers.v6[1])
                    runs[fmt] = (stopped(t, method), c.pid, sport4, sport6)
    path = f"/{cg.name}"
    out, pid, sport4, sport6 = runs[None]
    lines = out.splitlines()
    assert lines == [
        "PID     COMM         CGROUP                   IP SADDR            DADDR            DPORT",
        f"{pid:<7} {COMM:<12} {cgroup_cell(path)}4  {'127.0.0.1':<16} {'127.0.0.1':<16} "
        f"{servers.v4[0]}",
        f"{pid:<7} {COMM:<12} {cgroup_cell(path)}6  {'::1':<16} {'::1':<16} {servers.v6[1]}",
    ]
    assert lines[0].index("CGROUP") == lines[1].index(path) == lines[2].index(path)
    out, pid, sport4, sport6 = runs["-j"]
    record = {"type": "connect", "pid": pid, "tid": pid, "uid": 0, "comm": COMM,
              "cgroup": path}
    assert connects(out) == [
        dict(record, ip=4, saddr="127.0.0.1", sport=sport4, daddr="127.0.0.1",
             dport=servers.v4[0]),
        dict(record, ip=6, saddr="::1", sport=sport6, daddr="::1", dport=servers.v6[1]),
    ]


@pytest.mark.parametrize("method", SHARED_METHODS)
@pytest.mark.kernel
def test_print_cgroup_counts_per_cgroup(servers, method):
    """-c --print-cgroup: the same tuple from two cgroups is two rows, each
    with its CGROUP first: 3 connects of a helper in a cgroup the test
    makes, 1 of a helper in the test's own cgroup."""
    method = best_kfunc(method)
    port, own = servers.v4[0], own_cgroup()
    runs = {}
    with workload_cgroup() as cg:
        for fmt in (None, "-j"):
            with Connector() as inside, Connector() as outside:
                (cg / "cgroup.procs").write_text(str(inside.pid))
                with tracing(method, "-c", "--print-cgroup", "-p",
                             f"{inside.pid},{outside.pid}", *([fmt] if fmt else [])) as t:
                    done = [c.connect(4, "127.0.0.1", port)[0]
                            for c in (inside, outside, inside, inside)]
                    runs[fmt] = stopped(t, method)
            assert done == [0, 0, 0, 0]
    path = f"/{cg.name}"
    lines = runs[None].splitlines()
    assert lines == [
        cgroup_cell("CGROUP") + COUNT_HEADER,
        f"{cgroup_cell(path)}{'127.0.0.1':<25} {'127.0.0.1':<25} {port:<20} 3",
        f"{cgroup_cell(own)}{'127.0.0.1':<25} {'127.0.0.1':<25} {port:<20} 1",
    ]
    assert lines[0].index("LADDR") == lines[1].index("127.0.0.1")
    records = json_lines(runs["-j"])
    assert loss_record(records)["map_inserts_failed"] == 0
    assert records[:-1] == [
        {"type": "connect_count", "cgroup": cgroup, "ip": 4, "saddr": "127.0.0.1",
         "daddr": "127.0.0.1", "dport": port, "count": n}
        for cgroup, n in ((path, 3), (own, 1))]


@pytest.mark.kernel
def test_print_cgroup_names_the_commands_cgroup(servers, tmp_path):
    """-- COMMAND: COMMAND's connect is in tracekit-tcpconnect-PID, beside
    the cgroup the tool was started in (the kernel's first method)."""
    out = tmp_path / "out.json"
    p = subprocess.Popen([tool_path("tcpconnect"), "-j", "--print-cgroup", "-o", out, "--",
                          sys.executable, "-c", CHILD], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stdout, err = p.communicate(f"4 127.0.0.1 {servers.v4[0]} block\n", timeout=120)
    assert (p.returncode, err) == (0, "")
    ready, done = stdout.splitlines()
    pid, (errno, sport) = int(ready.split()[1]), map(int, done.split())
    assert errno == 0
    assert connects(out.read_text()) == [
        {"type": "connect", "pid": pid, "tid": pid, "uid": 0, "comm": COMM,
         "cgroup": own_cgroup().rstrip("/") + f"/tracekit-tcpconnect-{p.pid}", "ip": 4,
         "saddr": "127.0.0.1", "sport": sport, "daddr": "127.0.0.1", "dport": servers.v4[0]}]
