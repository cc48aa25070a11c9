"""make static's programs ($(BUILD)/static/bin): no dynamic section, and
each one runs copied alone into an empty root, as it would on a machine
with none of the libraries: the root holds the binary and /proc, /sys and
/dev, in a mount namespace of the test's own. There execsnoop, syscount,
profile and tracekitd give the exact results of workloads the test runs
outside the root, tracekit-doctor the verdicts the installed one gives,
and the static tracekitd's own sd_notify() says to systemd what
libsystemd's says for the dynamic one."""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import BIN, ROOT, Tool, json_lines, loss_record
from promtext import samples, value
from test_profile import STDERR as PROFILE_STDERR, Spinner, chain_re, folded, matching
from test_profile import progs  # noqa: F401  (fixture)
from test_tracekitd import Daemon, write_config

# Static programs matter most where the tests run on another architecture.
pytestmark = pytest.mark.portable

STATIC_BIN = Path(os.environ.get("TRACEKIT_STATIC_BIN", ROOT / "build" / "static" / "bin"))

# Make the root's /proc, /sys and /dev, then chroot into it. The root is
# deliberately not a mount point of its own: tools that mount tracefs
# privately must cope with a chroot (unshare's private propagation keeps
# every mount here from reaching the machine's namespace).
IN_ROOT = ('r=$1; shift; for d in proc sys dev; do mount --rbind "/$d" "$r/$d" || exit 125; '
           'done; exec chroot "$r" "$@"')


def programs():
    """Every program make builds: (name, the program a symbolic link
    names or None)."""
    out = []
    for p in sorted(BIN.iterdir()):
        if p.is_symlink():
            out.append((p.name, os.readlink(p)))
        elif p.is_file() and os.access(p, os.X_OK):
            out.append((p.name, None))
    assert len(out) > 60, out
    return out


def static_path(name):
    path = STATIC_BIN / name
    if not path.exists():
        pytest.fail(f"{path} is not built; run make static")
    return path


class EmptyRoot:
    """A directory holding only the named static programs and the mount
    points /proc, /sys and /dev."""

    def __init__(self, path, *names):
        self.path = Path(path)
        for d in ("proc", "sys", "dev"):
            (self.path / d).mkdir(parents=True, exist_ok=True)
        for name in names:
            self.add(name)

    def add(self, name):
        shutil.copy(static_path(name), self.path / name)

    def remove(self, name):
        (self.path / name).unlink()

    def contents(self):
        return sorted(p.name for p in self.path.iterdir())

    def argv(self, name, *args):
        """The command that runs /name in the root; it execs, so the
        program keeps its pid."""
        return ["unshare", "--mount", "--propagation", "private", "sh", "-c", IN_ROOT, "sh",
                str(self.path), f"/{name}", *map(str, args)]

    def tool(self, name, *args, env=None):
        t = Tool(name, *args, env=env)
        t.argv = self.argv(name, *args)
        return t

    def run(self, name, *args, timeout=60):
        return subprocess.run(self.argv(name, *args), capture_output=True, text=True,
                               timeout=timeout)


@pytest.fixture
def root(tmp_path):
    return EmptyRoot(tmp_path / "root")


def test_every_program_is_static_and_runs_alone(root):
    for name, link in programs():
        path = STATIC_BIN / name
        if link:
            assert path.is_symlink() and os.readlink(path) == link, name
            continue
        ldd = subprocess.run(["ldd", str(static_path(name))], capture_output=True, text=True)
        assert "not a dynamic executable" in ldd.stdout + ldd.stderr, (name, ldd)
        headers = subprocess.run(["readelf", "-lW", str(path)], capture_output=True,
                                 text=True, check=True).stdout
        assert not re.search(r"^\s+(INTERP|DYNAMIC)\s", headers, re.M), (name, headers)
        root.add(name)
        assert root.contents() == sorted(["dev", "proc", "sys", name])
        alone = root.run(name, "--version")
        installed = subprocess.run([str(BIN / name), "--version"], capture_output=True,
                                   text=True)
        assert (alone.returncode, alone.stdout, alone.stderr) == \
            (0, installed.stdout, ""), name
        root.remove(name)


def test_unknown_option_alone_is_a_usage_error(root):
    root.add("execsnoop")
    res = root.run("execsnoop", "--no-such-option")
    assert (res.returncode, res.stdout, res.stderr) == \
        (2, "", "execsnoop: unknown option '--no-such-option'; see 'execsnoop --help'\n")


def test_user_names_come_from_the_roots_etc_passwd(root):
    """Static glibc reads /etc/passwd itself (it has no NSS modules to
    load): a name the root's file lacks is a usage error, one it has
    works."""
    root.add("execsnoop")
    res = root.run("execsnoop", "-u", "tkstaticuser", "--dry-run")
    assert (res.returncode, res.stdout, res.stderr) == \
        (2, "", "execsnoop: invalid --uid value 'tkstaticuser': no such user (a user name or "
                "a numeric UID); see 'execsnoop --help'\n")
    (root.path / "etc").mkdir()
    (root.path / "etc/passwd").write_text("tkstaticuser:x:4242:4242::/:/bin/false\n")
    res = root.run("execsnoop", "-u", "tkstaticuser", "--dry-run")
    assert res.returncode == 0 and "probe " in res.stdout, res


def test_unknown_user_under_an_nsswitch_naming_shared_modules(root):
    """Debian's /etc/nsswitch.conf says "passwd: files systemd": a name
    the file lacks would send static glibc to dlopen libnss_systemd, and
    crash. The static programs look users and groups up in the files only
    (tools/static/nss-files.c): a usage error, as in the dynamic build."""
    want = (2, "", "execsnoop: invalid --uid value 'tkstaticnone': no such user (a user name "
                   "or a numeric UID); see 'execsnoop --help'\n")
    here = subprocess.run([str(static_path("execsnoop")), "-u", "tkstaticnone", "--dry-run"],
                          capture_output=True, text=True)
    assert (here.returncode, here.stdout, here.stderr) == want
    root.add("execsnoop")
    (root.path / "etc").mkdir()
    (root.path / "etc/passwd").write_text("root:x:0:0::/:/bin/false\n")
    (root.path / "etc/nsswitch.conf").write_text("passwd: files systemd sss ldap\n"
                                                 "group: files systemd sss ldap\n")
    res = root.run("execsnoop", "-u", "tkstaticnone", "--dry-run")
    assert (res.returncode, res.stdout, res.stderr) == want


def test_execsnoop_alone_reports_an_exec_outside(root, tmp_path):
    root.add("execsnoop")
    marker = f"tk-static-{os.getpid()}"
    with root.tool("execsnoop", "-j") as t:
        child = subprocess.Popen(["/bin/true", marker, "arg with space"])
        child.wait()
        out, err, rc = t.stop()
    assert rc == 0, err
    recs = json_lines(out)
    [r] = [r for r in recs if marker in r.get("argv", [])]
    assert (r["argv"], r["pid"], r["ppid"], r["ret"], r["comm"]) == \
        (["/bin/true", marker, "arg with space"], child.pid, os.getpid(), 0, "true")
    assert loss_record(recs) == {"type": "loss", "events_lost": 0, "map_inserts_failed": 0}


def test_syscount_alone_counts_exactly(root):
    n = 4321
    root.add("syscount")
    code = (f"import os, sys\nsys.stdin.readline()\n"
            f"for _ in range({n}): os.getppid()\nprint('done', flush=True)\nsys.stdin.read()\n")
    worker = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        with root.tool("syscount", "-j", "-p", worker.pid) as t:
            worker.stdin.write("go\n")
            worker.stdin.flush()
            assert worker.stdout.readline() == "done\n"
            out, err, rc = t.stop()
    finally:
        worker.kill()
        worker.wait()
    assert rc == 0 and err == "", err
    recs = json_lines(out)
    [getppid] = [r for r in recs if r.get("syscall") == "getppid"]
    assert (getppid["count"], getppid["errors"]) == (n, 0)
    assert loss_record(recs) == {"type": "loss", "events_lost": 0, "map_inserts_failed": 0}


def test_profile_alone_names_the_programs_functions(root, progs):  # noqa: F811
    """Symbols from the target's own files (static libelf and libdw),
    which the empty root does not hold: read through /proc."""
    root.add("profile")
    with Spinner(progs["pie"]) as s:
        with root.tool("profile", "-f", "-U", "-F", 199, "-p", s.pid) as t:
            s.go()
            out, err, rc = t.stop()
        s.close()
    assert rc == 0, err
    assert PROFILE_STDERR.fullmatch(err), err
    stacks = folded(out)
    chain = matching(stacks, chain_re("stk-pie"))
    assert len(chain) == 1 and sum(chain.values()) > 0, stacks


def doctor_verdicts(text):
    """{check: (yes/no, what it says)} of the Kernel, Features and
    Process sections."""
    sections = text.split("\nTools (in ")[0]
    return {m.group(1): (m.group(2), m.group(3))
            for m in re.finditer(r"^  (\S+)\s+(yes|no)\s+(.*)$", sections, re.M)}


def test_doctor_alone_agrees_with_the_installed_one(root):
    root.add("tracekit-doctor")
    root.add("execsnoop")
    alone = root.run("tracekit-doctor", timeout=120)
    installed = subprocess.run([str(BIN / "tracekit-doctor"), "--no-tools"],
                               capture_output=True, text=True, timeout=120)
    assert alone.returncode == installed.returncode, (alone, installed)
    got, want = doctor_verdicts(alone.stdout), doctor_verdicts(installed.stdout)
    assert set(got) == set(want) and len(got) > 10, (got, want)
    for check in want:
        # What names the doctor's own path, or a kernel configuration in
        # /boot, which the empty root does not have (/proc/config.gz it has).
        if check == "uprobes" or "/boot/" in want[check][1]:
            assert got[check][0] == want[check][0], check
        else:
            assert got[check] == want[check], check
    tools = alone.stdout.split("\nTools (in /)\n")[1]
    assert re.fullmatch(r"  execsnoop\s+yes\s+.*\n", tools), tools


def notifications(sock, until, timeout=30):
    msgs = []
    deadline = time.monotonic() + timeout
    while not until(msgs):
        sock.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            msgs.append(sock.recv(4096).decode())
        except socket.timeout:
            break
    return msgs


def watchdogs(msgs):
    return sum(m == "WATCHDOG=1" for m in msgs)


def test_tracekitd_alone_counts_exactly_and_notifies(root):
    """Abstract socket: a chroot does not hide it, as it would a path."""
    n = 777
    root.add("tracekitd")
    write_config(root.path / "tracekitd.conf", syscalls=True, execs=False, runqlat=False,
                 tcpconnect=False, vfsstat=False, tcpstates=False, drops=False, retrans=False,
                 hardirqs=False, softirqs=False, runqlen=False)
    name = f"tk-static-notify-{os.getpid()}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        d = Daemon(env={"NOTIFY_SOCKET": "@" + name, "WATCHDOG_USEC": "200000"})
        d.argv = root.argv("tracekitd", "--config", "/tracekitd.conf",
                           "--listen", f"127.0.0.1:{d.port}")
        with d:
            msgs = notifications(sock, lambda m: watchdogs(m) >= 2)
            before = samples(d.scrape())
            for _ in range(n):
                os.sched_get_priority_max(os.SCHED_FIFO)
            after = samples(d.scrape())
            out, err, rc = d.stop(signal.SIGTERM)
        msgs += notifications(sock, lambda m: "STOPPING=1" in m)
    assert rc == 0, err
    assert msgs[0].startswith("READY=1\nSTATUS=1 collector running (syscalls), serving "), msgs
    assert watchdogs(msgs) >= 2 and msgs[-1] == "STOPPING=1", msgs
    name = dict(syscall="sched_get_priority_max")
    assert (value(after, "tracekit_syscalls_total", **name) -
            value(before, "tracekit_syscalls_total", **name)) == n


# What systemd set, and whether the service must then ping the watchdog:
# libsystemd's sd_watchdog_enabled() ignores a WATCHDOG_PID that is not
# the caller's and a WATCHDOG_USEC that is not a positive number.
WATCHDOG_CASES = {"pings": ({"WATCHDOG_USEC": "200000"}, True),
                  "other pid": ({"WATCHDOG_USEC": "200000", "WATCHDOG_PID": "1"}, False),
                  "not a number": ({"WATCHDOG_USEC": "soon"}, False),
                  "zero": ({"WATCHDOG_USEC": "0"}, False)}


@pytest.mark.parametrize("socket_kind", ["path", "abstract"])
@pytest.mark.parametrize("case", WATCHDOG_CASES)
def test_static_sd_notify_says_what_libsystemd_says(tmp_path, socket_kind, case):
    """The dynamic tracekitd (libsystemd) and the static one (its own
    sd_notify: Debian has no static libsystemd) send the same messages."""
    env, pings = WATCHDOG_CASES[case]
    got = {}
    for build, path in (("dynamic", BIN / "tracekitd"), ("static", static_path("tracekitd"))):
        address = (str(tmp_path / f"notify-{build}") if socket_kind == "path"
                   else f"@tk-notify-{os.getpid()}-{build}")
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.bind(address.replace("@", "\0", 1))
            d = Daemon(env=dict(env, NOTIFY_SOCKET=address))
            d.argv[0] = str(path)
            with d:
                msgs = notifications(sock, lambda m: watchdogs(m) >= 2,
                                     timeout=30 if pings else 1)
                out, err, rc = d.stop(signal.SIGTERM)
            msgs += notifications(sock, lambda m: "STOPPING=1" in m)
        assert rc == 0, (build, err)
        got[build] = ([m.replace(f":{d.port}/", ":PORT/") for m in msgs if m != "WATCHDOG=1"],
                      watchdogs(msgs) >= 2)
    assert got["static"] == got["dynamic"], got
    assert got["static"][1] == pings
    assert got["static"][0][0].startswith("READY=1\n") and got["static"][0][-1] == "STOPPING=1"
