"""gethostlatency end to end: a child of the test looks up a name of its
own (in a hosts file bind-mounted over /etc/hosts in a mount namespace of
its own, so the system's is left alone) N times by each of getaddrinfo,
gethostbyname and gethostbyname2: exactly those lookups are reported,
with its pid, comm, the name and the function."""
import os
import re
import subprocess
import sys
import uuid

import pytest

from conftest import Tool, json_lines, loss_record, run

COMM = "tkresolver"
FUNCS = ["getaddrinfo", "gethostbyname", "gethostbyname2"]
HEADER = "TIME      PID     COMM                  LATms HOST"

# The child: named COMM, says "ready PID"; for each line "N NAME" it
# looks NAME up N times with each function in turn (ctypes: Python's own
# gethostbyname calls getaddrinfo), checks the answer, says "done". With
# arguments N NAME: that once, silently (for -- COMMAND).
CHILD = r"""
import ctypes, os, socket, sys
libc = ctypes.CDLL("libc.so.6")
libc.prctl(15, b"%s", 0, 0, 0)
libc.gethostbyname.restype = ctypes.c_void_p
libc.gethostbyname2.restype = ctypes.c_void_p
out = open(os.devnull, "w") if sys.argv[1:] else sys.stdout
print("ready", os.getpid(), file=out, flush=True)
for line in [" ".join(sys.argv[1:])] if sys.argv[1:] else sys.stdin:
    n, name = line.split()
    for _ in range(int(n)):
        assert socket.getaddrinfo(name, None, socket.AF_INET)[0][4][0] == "127.0.0.42"
        assert libc.gethostbyname(name.encode())
        assert libc.gethostbyname2(name.encode(), socket.AF_INET)
    print("done", file=out, flush=True)
""" % COMM


class Resolver:
    """The child, in a mount namespace where /etc/hosts is hosts_file."""

    def __init__(self, hosts_file):
        self.proc = subprocess.Popen(
            ["unshare", "-m", "--propagation", "private", "sh", "-c",
             f'mount --bind "$0" /etc/hosts && exec "$1" -c "$2"',
             hosts_file, sys.executable, CHILD],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        words = self.proc.stdout.readline().split()
        assert words[:1] == ["ready"], words
        self.pid = int(words[1])

    def lookup(self, n, name):
        self.proc.stdin.write(f"{n} {name}\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline() == "done\n"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


@pytest.fixture
def name(tmp_path):
    """A host name of the test's own, in a hosts file for Resolver."""
    host = f"tk-{uuid.uuid4().hex[:12]}.test"
    path = tmp_path / "hosts"
    path.write_text(f"127.0.0.1 localhost\n127.0.0.42 {host}\n")
    return host, str(path)


def lookups(records, pid):
    got = []
    for r in records:
        if r.get("type") == "lookup" and r["pid"] == pid:
            r = dict(r)
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", r.pop("time"))
            assert r.pop("lat_ns") > 0, r
            got.append(r)
    return got


def want(pid, host, n):
    return [{"type": "lookup", "pid": pid, "tid": pid, "uid": 0, "comm": COMM,
             "func": f, "host": host} for _ in range(n) for f in FUNCS]


def no_loss(records):
    loss = loss_record(records)
    assert (loss["events_lost"], loss["map_inserts_failed"]) == (0, 0)


@pytest.mark.kernel
@pytest.mark.parametrize("by_pid", [True, False])
def test_exact_lookups(name, by_pid):
    """-p: the libc the child maps, only its lookups; without: the
    system's libc, every process's lookups (the child's picked out)."""
    host, hosts = name
    n = 4
    with Resolver(hosts) as c:
        with Tool("gethostlatency", "-j", *(["-p", c.pid] if by_pid else [])) as t:
            c.lookup(n, host)
            out, err, rc = t.stop()
    assert rc == 0, err
    records = json_lines(out)
    no_loss(records)
    assert lookups(records, c.pid) == want(c.pid, host, n)
    if by_pid:
        assert len(records) == 3 * n + 1


@pytest.mark.kernel
def test_command(name):
    """-- COMMAND: its lookups only, the tool ending with it."""
    host, hosts = name
    t = Tool("gethostlatency", "-j", "--", "unshare", "-m", "--propagation", "private",
             "sh", "-c", 'mount --bind "$0" /etc/hosts && exec "$1" -c "$2" 2 "$3"',
             hosts, sys.executable, CHILD, host).start()
    out, err, rc = t.wait()
    assert rc == 0, err
    records = json_lines(out)
    no_loss(records)
    pids = {r["pid"] for r in records[:-1]}
    assert len(pids) == 1, records
    assert lookups(records, pids.pop()) == want(records[0]["pid"], host, 2)


def test_text_columns(name):
    host, hosts = name
    with Resolver(hosts) as c:
        with Tool("gethostlatency", "-p", c.pid) as t:
            c.lookup(1, host)
            out, err, rc = t.stop()
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == HEADER
    assert len(lines) == 4, out
    for line in lines[1:]:
        assert re.fullmatch(r"\d\d:\d\d:\d\d  " + re.escape(f"{c.pid:<7} {COMM:<16} ")
                            + r" *\d+\.\d\d " + re.escape(host), line), line


@pytest.mark.parametrize("args,words", [
    (["-l", "/nonexistent/libc.so.6"], ["--libc", "/nonexistent/libc.so.6"]),
    (["-l", "/etc/hostname"], ["--libc", "/etc/hostname"]),
    (["-l", "/bin/true"], ["--libc", "none of getaddrinfo"]),
    (["-p", "x"], ["'x'"]),
    (["-p", "999999999"], ["999999999"]),
    (["1"], ["'1'"]),
])
def test_usage_errors(args, words):
    r = run("gethostlatency", *args)
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("gethostlatency: "), r.stderr
    for w in words:
        assert w in r.stderr, r.stderr
