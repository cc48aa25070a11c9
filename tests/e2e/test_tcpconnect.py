"""tcpconnect: the loopback connects a helper process makes, exactly."""
import os
import re
import socket
import subprocess
import sys
import time
import uuid

import pytest

from conftest import (Tool, assert_no_kernel_function_tracing, json_lines,
                      loss_record, require, run)

METHODS = ["fentry", "kprobe"]
EXIT_METHOD = {"fentry": "fexit", "kprobe": "kretprobe"}
HEADER = "PID    COMM         IP SADDR            SPORT  DADDR            DPORT"
COUNT_HEADER = "LADDR                     RADDR                     RPORT                CONNECTS"
COMM = "tkconnect"
NOBODY = 65534

# The helper: named COMM; for each line "IP ADDR PORT block|nb" on stdin it
# connects a new socket (blocking or not) and answers "ERRNO SPORT".
CHILD = r"""
import ctypes, socket, sys
ctypes.CDLL(None).prctl(15, b"%s", 0, 0, 0)
keep = []
print("ready", flush=True)
for line in sys.stdin:
    ip, addr, port, mode = line.split()
    s = socket.socket(socket.AF_INET6 if ip == "6" else socket.AF_INET)
    keep.append(s)
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
        assert self.proc.stdout.readline() == "ready\n"
        self.pid = self.proc.pid
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


def expected_probes(method, ips=(4, 6)):
    return {f"v{ip}_connect_{part}": (m, f"tcp_v{ip}_connect")
            for ip in ips for part, m in (("entry", method), ("exit", EXIT_METHOD[method]))}


def connects(out):
    """The connect records of a JSON run without their "time" (checked),
    and the loss record, which must say nothing was lost."""
    records = json_lines(out)
    assert loss_record(records) == {"type": "loss", "events_lost": 0,
                                    "map_inserts_failed": 0}
    got = []
    for r in records[:-1]:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", r.pop("time")), r
        got.append(r)
    return got


def tracing(method, *args):
    env = {"TRACEKIT_ATTACH": method} if method else None
    return Tool("tcpconnect", "-v", *args, env=env)


def stopped(t, method, ips=(4, 6)):
    out, err, rc = t.stop()
    assert rc == 0, err
    if method:
        assert probes(err) == expected_probes(method, ips), err
    return out


@pytest.mark.parametrize("method", METHODS)
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


@pytest.mark.parametrize("method", METHODS)
def test_text_columns(servers, method):
    require(method)
    with Connector() as c:
        with tracing(method, "-p", c.pid) as t:
            _, sport4 = c.connect(4, "127.0.0.1", servers.v4[0])
            _, sport6 = c.connect(6, "::1", servers.v6[1])
            out = stopped(t, method)
    assert out.splitlines() == [
        HEADER,
        f"{c.pid:<6} {COMM:<12} 4  {'127.0.0.1':<16} {sport4:<6} {'127.0.0.1':<16} {servers.v4[0]}",
        f"{c.pid:<6} {COMM:<12} 6  {'::1':<16} {sport6:<6} {'::1':<16} {servers.v6[1]}",
    ]


@pytest.mark.parametrize("method", METHODS)
def test_count_mode(servers, method):
    """-c: one row per (source, destination, port), by count, at exit."""
    require(method)
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


@pytest.mark.parametrize("method", METHODS)
def test_port_filter(servers, method):
    require(method)
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


@pytest.mark.parametrize("method", METHODS)
def test_pid_and_uid_filters(servers, method):
    """-p and -u each include their process's connect and exclude the
    other's; the uid is reported."""
    require(method)
    port = servers.v4[0]
    with Connector() as mine, Connector(user=NOBODY) as other:
        for args, who in ((["-p", mine.pid], mine), (["-p", other.pid], other),
                          (["-u", NOBODY], other)):
            with tracing(method, "-j", *args) as t:
                sports = {c.pid: c.connect(4, "127.0.0.1", port)[1] for c in (mine, other)}
                out = stopped(t, method)
            got = [r for r in connects(out) if r["comm"] == COMM]
            assert got == [who.record(4, "127.0.0.1", sports[who.pid], "127.0.0.1", port)], args


def cgroup2_root():
    with open("/proc/mounts") as f:
        for line in f:
            dev, mnt, fstype = line.split()[:3]
            if fstype == "cgroup2":
                return mnt
    pytest.skip("no cgroup2 mount")


@pytest.mark.parametrize("method", METHODS)
def test_cgroup_filter(servers, method):
    """--cgroup (long only: -c is --count) takes the connect of a process
    in that cgroup, not the test's own."""
    require(method)
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
def test_dry_run_names_the_methods(method):
    require(method)
    r = run("tcpconnect", "--dry-run", env={"TRACEKIT_ATTACH": method})
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:-1] == [f"probe {p} {m} {f}" for p, (m, f) in
                          expected_probes(method).items()]
    assert re.fullmatch(r"transport (ringbuf|perf)", lines[-1])


@pytest.mark.parametrize("attach", [None, "kprobe"])
def test_no_kernel_function_tracing_fails_in_one_line(attach):
    assert_no_kernel_function_tracing("tcpconnect", "tcp_v4_connect", attach=attach)


def test_help():
    r = run("tcpconnect", "--help")
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout.startswith("Usage: tcpconnect [OPTION...]\n")
    assert re.search(r"^  -c, --count ", r.stdout, re.M)
    assert re.search(r"^      --cgroup=PATH ", r.stdout, re.M)


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
