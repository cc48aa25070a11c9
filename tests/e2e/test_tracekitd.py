"""tracekitd end to end: a daemon on a test port, workloads with known
counts, /metrics scraped before and after, exact deltas; promtool and a
real Prometheus server read it; systemd's own checks accept the unit;
signals, bad configs and bad requests behave."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from blockdev import BioTarget, MountedFs, bio_target, has_fs, loopdev  # noqa: F401
from conftest import BIN, ROOT, Tool, Workload, kernel_has, require, tool_path
from fsop import COMM as FS_COMM, EXPECTED as FS_EXPECTED, fs_target  # noqa: F401
from promserver import PrometheusServer, free_port
from promtext import samples, series, value  # noqa: F401  (test_tracekitd_cpu, _net)

NAME = "tracekitd"


def write_config(path, **collectors):
    """[collectors]: booleans as yes/no, strings (fs_types) as they are."""
    lines = ["[collectors]"] + [f"{k} = {v if isinstance(v, str) else 'yes' if v else 'no'}"
                                for k, v in collectors.items()]
    Path(path).write_text("\n".join(lines) + "\n")


class Daemon(Tool):
    def __init__(self, *args, config=None, env=None):
        self.port = free_port()
        self.tmp = tempfile.mkdtemp(prefix="tkd-")
        self.config = config or os.path.join(self.tmp, "tracekitd.conf")
        if not config:
            write_config(self.config, syscalls=True, execs=True, runqlat=True,
                         tcpconnect=False, vfsstat=False, tcpstates=False, drops=False,
                         retrans=False, hardirqs=False, softirqs=False, runqlen=False)
        super().__init__(NAME, "--config", self.config,
                         "--listen", f"127.0.0.1:{self.port}", *args, env=env)

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/metrics"

    def get(self, path="/metrics", method="GET"):
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", method=method)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, r.headers, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read().decode()

    def scrape(self):
        status, headers, body = self.get()
        assert status == 200, body
        assert headers["Content-Type"].startswith("text/plain; version=0.0.4"), headers
        return body

    def __exit__(self, *exc):
        super().__exit__(*exc)
        shutil.rmtree(self.tmp, ignore_errors=True)


def prog_ids():
    out = subprocess.run(["bpftool", "prog", "show", "-j"], capture_output=True,
                         text=True, check=True).stdout
    return {p["id"] for p in json.loads(out)}


@pytest.mark.kernel
def test_syscall_counts_and_errors_exact():
    n_ok, n_err = 1234, 77
    with Daemon() as d:
        before = samples(d.scrape())
        # sched_get_priority_max: a syscall nothing else here makes.
        for _ in range(n_ok):
            os.sched_get_priority_max(os.SCHED_FIFO)
        for _ in range(n_err):
            with pytest.raises(OSError):
                os.sched_get_priority_max(12345)  # EINVAL
        after = samples(d.scrape())
    name = dict(syscall="sched_get_priority_max")
    assert (value(after, "tracekit_syscalls_total", **name) -
            value(before, "tracekit_syscalls_total", **name)) == n_ok + n_err
    assert (value(after, "tracekit_syscall_errors_total", **name) -
            value(before, "tracekit_syscall_errors_total", **name)) == n_err


@pytest.mark.kernel
def test_execs_by_comm_exact_and_failures_by_errno():
    n_ok, n_fail = 25, 9
    with Daemon() as d:
        marker = os.path.join(d.tmp, f"tkd-ex{os.getpid() % 100000}")
        shutil.copy("/bin/true", marker)
        noexec = os.path.join(d.tmp, "not-executable")
        Path(noexec).write_text("#!/bin/sh\n")
        os.chmod(noexec, 0o644)
        before = samples(d.scrape())
        for _ in range(n_ok):
            subprocess.run([marker], check=True)
        for _ in range(n_fail):
            with pytest.raises(PermissionError):
                subprocess.run([noexec])
        after = samples(d.scrape())
    comm = os.path.basename(marker)[:15]
    assert value(before, "tracekit_execs_total", comm=comm) == 0
    assert value(after, "tracekit_execs_total", comm=comm) == n_ok
    assert (value(after, "tracekit_exec_failures_total", errno="EACCES") -
            value(before, "tracekit_exec_failures_total", errno="EACCES")) == n_fail


@pytest.mark.kernel
def test_runqlat_histogram_is_a_prometheus_histogram():
    with Daemon() as d:
        before = samples(d.scrape())
        for _ in range(50):
            time.sleep(0.001)  # each wakeup is a run queue wait
        after = samples(d.scrape())
    name = "tracekit_runqueue_latency_seconds"
    buckets = sorted(((float(dict(k)["le"]), v) for k, v in
                      series(after, name + "_bucket").items()))
    les = [le for le, _ in buckets]
    assert les[-1] == float("inf") and les[0] == 2e-06 and len(les) == 32
    assert all(b == 2 * a for a, b in zip(les[:-2], les[1:-1]))
    counts = [v for _, v in buckets]
    assert counts == sorted(counts), "buckets are cumulative"
    assert counts[-1] == value(after, name + "_count")
    assert value(after, name + "_count") - value(before, name + "_count") >= 50
    assert value(after, name + "_sum") > value(before, name + "_sum")


def test_health_metrics():
    with Daemon() as d:
        s = samples(d.scrape())
    for c in ("syscalls", "execs", "runqlat"):
        assert value(s, "tracekit_collector_up", collector=c) == 1
        assert value(s, "tracekit_events_lost_total", collector=c) == 0
        # A count of the kernel's, not caused by the test: present, not 0.
        assert value(s, "tracekit_probe_runs_missed_total", collector=c) >= 0
    assert ("tracekit_collector_up", frozenset({("collector", "tcpconnect")})) not in s
    probes = series(s, "tracekit_probe_attached")
    methods = {dict(k)["probe"]: dict(k)["method"] for k in probes
               if dict(k)["collector"] == "runqlat"}
    assert set(methods) == {"sched_wakeup", "sched_wakeup_new", "sched_switch"}
    assert set(methods.values()) <= {"tp_btf", "raw_tp"}
    # Start times live in the hash "start", or with tp_btf on 5.11+ in
    # task storage (no entries to count: not a hash).
    start = ("tracekit_map_max_entries",
             frozenset({("collector", "runqlat"), ("map", "start")}))
    if start in s:
        assert value(s, "tracekit_map_max_entries", collector="runqlat", map="start") == 10240
    else:
        assert methods["sched_switch"] == "tp_btf"
    assert value(s, "tracekit_series_limit") == 1000
    assert value(s, "process_resident_memory_bytes") > 0
    assert ("tracekit_bpf_stats_enabled", frozenset()) in s


@pytest.mark.kernel
def test_bpf_run_time_when_stats_enabled():
    path = "/proc/sys/kernel/bpf_stats_enabled"
    old = Path(path).read_text()
    Path(path).write_text("1\n")
    try:
        with Daemon() as d:
            os.sched_get_priority_max(os.SCHED_FIFO)
            s = samples(d.scrape())
    finally:
        Path(path).write_text(old)
    assert value(s, "tracekit_bpf_stats_enabled") == 1
    runs = series(s, "tracekit_bpf_runs_total")
    assert any(dict(k)["collector"] == "syscalls" and v > 0 for k, v in runs.items()), runs
    assert series(s, "tracekit_bpf_run_seconds_total")


def test_promtool_accepts_the_output(tmp_path):
    """The default collectors and the fs collector (its histograms)."""
    conf = tmp_path / "c.conf"
    write_config(conf, syscalls=True, execs=True, runqlat=True, tcpconnect=False,
                 vfsstat=False, fs=True)
    with Daemon(config=str(conf)) as d:
        subprocess.run(["/bin/true"], check=True)
        text = d.scrape()
    res = subprocess.run(["promtool", "check", "metrics"], input=text,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_label_values_escaped_for_any_comm():
    """A program named with a quote, a backslash and invalid UTF-8 is
    still one valid series."""
    with Daemon() as d:
        weird = os.path.join(d.tmp.encode(), b'q"b\\x\xff')
        shutil.copy("/bin/true", weird)
        subprocess.run([weird], check=True)
        text = d.scrape()
    assert 'tracekit_execs_total{comm="q\\"b\\\\x\ufffd"} 1' in text
    res = subprocess.run(["promtool", "check", "metrics"], input=text,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_cardinality_capped_with_overflow_series():
    n, cap = 120, 40
    with Daemon("--max-series", cap) as d:
        progs = []
        for i in range(n):
            p = os.path.join(d.tmp, f"tkd-churn-{i}")
            os.symlink("/bin/true", p)  # comm: the name exec'd
            progs.append(p)
        rss0 = value(samples(d.scrape()), "process_resident_memory_bytes")
        for p in progs:
            subprocess.run([p], check=True)
        s = samples(d.scrape())
    mine = {dict(k)["comm"]: v for k, v in series(s, "tracekit_execs_total").items()
            if dict(k)["comm"].startswith("tkd-churn-")}
    kept = len(series(s, "tracekit_execs_total")) - 1  # less the overflow series
    assert kept == cap
    assert all(v == 1 for v in mine.values())
    overflow = value(s, "tracekit_execs_total", comm="__overflow__")
    assert overflow >= n - len(mine)
    assert value(s, "tracekit_series_dropped_total", metric="tracekit_execs_total") == overflow
    assert value(s, "process_resident_memory_bytes") < rss0 + (8 << 20)


@pytest.mark.kernel
def test_sigterm_leaves_no_program_behind():
    before = prog_ids()
    d = Daemon()
    d.start()
    during = prog_ids() - before
    assert len(during) >= 9  # syscalls 1, execs 5, runqlat 3
    out, err, rc = d.stop(signal.SIGTERM)
    d.__exit__(None, None, None)
    assert rc == 0, err
    assert "stopped; all probes detached" in err
    # The kernel frees a program after an RCU grace period, not at once.
    deadline = time.monotonic() + 30
    while prog_ids() & during and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not (prog_ids() & during)


def test_sighup_reloads_config():
    with Daemon() as d:
        assert value(samples(d.scrape()), "tracekit_collector_up", collector="execs") == 1
        write_config(d.config, syscalls=True, execs=False, runqlat=True)
        d.proc.send_signal(signal.SIGHUP)
        for _ in range(100):
            s = samples(d.scrape())
            if ("tracekit_collector_up", frozenset({("collector", "execs")})) not in s:
                break
            time.sleep(0.1)
        assert ("tracekit_collector_up", frozenset({("collector", "execs")})) not in s
        assert value(s, "tracekit_collector_up", collector="syscalls") == 1
        assert not series(s, "tracekit_execs_total")
        # A bad file keeps what runs.
        Path(d.config).write_text("[collectors]\nexecs = perhaps\n")
        d.proc.send_signal(signal.SIGHUP)
        time.sleep(0.5)
        assert value(samples(d.scrape()), "tracekit_collector_up", collector="syscalls") == 1
        out, err, rc = d.stop(signal.SIGTERM)
    assert rc == 0
    assert "reloaded" in err
    assert "execs: bad value 'perhaps' (yes or no); keeping the running configuration" in err


def test_systemd_notify_ready_watchdog_stopping():
    sock_path = tempfile.mktemp(prefix="tkd-notify-")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(sock_path)
    sock.settimeout(30)
    try:
        d = Daemon(env={"NOTIFY_SOCKET": sock_path, "WATCHDOG_USEC": "200000"})
        d.start()
        msgs = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and sum("WATCHDOG=1" in m for m in msgs) < 2:
            msgs.append(sock.recv(4096).decode())
        d.stop(signal.SIGTERM)
        d.__exit__(None, None, None)
        while not any("STOPPING=1" in m for m in msgs):
            msgs.append(sock.recv(4096).decode())
    finally:
        sock.close()
        os.unlink(sock_path)
    assert msgs[0].startswith("READY=1\nSTATUS=3 collectors running (syscalls execs runqlat)")
    assert sum("WATCHDOG=1" in m for m in msgs) >= 2
    assert msgs[-1] == "STOPPING=1"


@pytest.mark.kernel
def test_capabilities_dropped_after_attach():
    with Daemon() as d:
        status = Path(f"/proc/{d.proc.pid}/status").read_text()
        assert d.scrape()  # reading maps still works
    caps = {k: int(v, 16) for k, v in re.findall(r"^(Cap\w+):\s+([0-9a-f]+)$", status, re.M)}
    want = (1 << 38) | (1 << 39)  # CAP_PERFMON, CAP_BPF
    assert caps["CapEff"] == want and caps["CapPrm"] == want and caps["CapBnd"] == want, caps


def test_bad_requests_get_errors_and_daemon_keeps_serving():
    with Daemon() as d:
        assert d.get("/nope")[0] == 404
        assert d.get("/metrics", method="POST")[0] == 405
        assert d.get("/")[0] == 200
        for raw in (b"GARBAGE\r\n\r\n", b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " +
                    b"a" * 100000 + b"\r\n\r\n", b"\x00\xff" * 1000 + b"\r\n\r\n"):
            with socket.create_connection(("127.0.0.1", d.port), timeout=30) as s:
                try:
                    s.sendall(raw)
                    reply = s.recv(200)
                except (ConnectionResetError, BrokenPipeError):
                    reply = b""
            # Junk that never forms a request line is closed at the
            # 10 s connection timeout; the others get a 4xx at once.
            assert reply == b"" or re.match(rb"HTTP/1.1 4\d\d ", reply), reply
        assert d.get()[0] == 200
        out, err, rc = d.stop(signal.SIGTERM)
    assert rc == 0


@pytest.mark.parametrize("content, line", [
    ("[tracekitd]\nlisten = 1.2.3:99\n", ":2: listen address '1.2.3:99' is not ADDRESS:PORT"),
    ("[collectors]\nexecs = maybe\n", ":2: execs: bad value 'maybe' (yes or no)"),
    ("[collectors]\nbiolatency = yes\n", ":2: unknown collector 'biolatency'"),
    ("[collectors]\nfs_types = ext4 zfs\n", ":2: fs_types: unknown file system 'zfs'"),
    ("[collectors]\nfs_types = xfs xfs\n", ":2: fs_types: repeated 'xfs'"),
    ("[daemon]\nx = 1\n", ":2: unknown section [daemon]"),
    ("[tracekitd]\nmax_series = -5\n", ":2: max_series: bad value '-5'"),
    ("junk\n", ":1: not 'key = value' or '[section]'"),
])
def test_bad_config_one_clear_line(tmp_path, content, line):
    conf = tmp_path / "bad.conf"
    conf.write_text(content)
    for extra in ([], ["--check-config"]):
        res = subprocess.run([tool_path(NAME), "--config", str(conf), *extra],
                             capture_output=True, text=True, timeout=30)
        assert res.returncode == 1
        assert res.stderr.count("\n") == 1 and res.stderr.startswith(f"tracekitd: {conf}{line}"), res.stderr


def test_lines_into_the_journal_carry_their_priority(tmp_path):
    """Under systemd, stderr is a stream into the journal, which
    JOURNAL_STREAM names (device:inode): each line then starts with its
    syslog priority (sd-daemon(3)) and not with the name the journal
    records itself. JOURNAL_STREAM inherited by a process whose stderr
    goes elsewhere changes nothing. tests/systemd reads the real journal."""
    conf = tmp_path / "bad.conf"
    conf.write_text("[collectors]\nexecs = perhaps\n")
    err, other = tmp_path / "stderr", tmp_path / "other"
    other.touch()
    line = f"{conf}:2: execs: bad value 'perhaps' (yes or no)\n"
    for stream, want in ((err, f"<3>{line}"), (other, f"tracekitd: {line}")):
        with open(err, "w") as f:
            st = os.stat(stream)
            res = subprocess.run([tool_path(NAME), "--config", str(conf)], stderr=f,
                                 env=dict(os.environ, JOURNAL_STREAM=f"{st.st_dev}:{st.st_ino}"))
        assert res.returncode == 1
        assert err.read_text() == want


def test_check_config_of_the_shipped_file():
    res = subprocess.run([tool_path(NAME), "--config", str(ROOT / "tools/tracekitd.conf"),
                          "--check-config"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout == (f"{ROOT}/tools/tracekitd.conf: valid (listen 127.0.0.1:9949, "
                          "max_series 1000, collectors: syscalls execs runqlat tcpconnect vfsstat "
                          "tcpstates drops retrans hardirqs softirqs runqlen)\n")


def test_missing_config_given_is_an_error():
    res = subprocess.run([tool_path(NAME), "--config", "/nonexistent/tk.conf"],
                         capture_output=True, text=True)
    assert (res.returncode, res.stderr) == (1, "tracekitd: /nonexistent/tk.conf: No such file or directory\n")


def test_listen_in_use_is_one_line():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        res = subprocess.run([tool_path(NAME), "--config", "/dev/null",
                              "--listen", f"127.0.0.1:{port}"],
                             capture_output=True, text=True, timeout=30)
    assert res.returncode == 1
    assert res.stderr.endswith(f"tracekitd: cannot listen on 127.0.0.1:{port}: Address already in use\n"), res.stderr


def kernel_functions_traceable():
    return kernel_has("fentry") or kernel_has("kprobe")


@pytest.mark.kernel
def test_collector_that_cannot_attach_is_reported_or_strict_exits(tmp_path):
    """vfsstat traces kernel functions only: where the kernel has neither
    fentry nor kprobes it is down, the others run; --strict exits."""
    conf = tmp_path / "c.conf"
    write_config(conf, syscalls=True, execs=False, runqlat=False, tcpconnect=False, vfsstat=True)
    if kernel_functions_traceable():
        with Daemon(config=str(conf)) as d:
            s = samples(d.scrape())
        assert value(s, "tracekit_collector_up", collector="vfsstat") == 1
        return
    with Daemon(config=str(conf)) as d:
        s = samples(d.scrape())
        out, err, rc = d.stop(signal.SIGTERM)
    assert value(s, "tracekit_collector_up", collector="vfsstat") == 0
    assert value(s, "tracekit_collector_up", collector="syscalls") == 1
    assert "tracekitd: collector vfsstat: cannot trace kernel function vfs_read" in err
    res = subprocess.run([tool_path(NAME), "--config", str(conf), "--strict",
                          "--listen", f"127.0.0.1:{free_port()}"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 1
    assert res.stderr.splitlines()[-1] == "tracekitd: collector vfsstat could not start, and strict is set"


@pytest.mark.kernel
@pytest.mark.parametrize("method", ["tp_btf", "tp", "fentry", "kprobe"])
def test_tcp_connects_counted_by_destination(tmp_path, method):
    """tcpconnect's tracepoint first (it runs on this host), its kernel
    functions where TRACEKIT_ATTACH names them; each connect once."""
    if method in ("fentry", "kprobe"):
        require(method)
    conf = tmp_path / "c.conf"
    write_config(conf, syscalls=False, execs=False, runqlat=False, tcpconnect=True, vfsstat=False,
                 tcpstates=False, drops=False)
    n = 17
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(64)
        port = srv.getsockname()[1]
        with Daemon(config=str(conf), env={"TRACEKIT_ATTACH": method}) as d:
            for _ in range(n):
                socket.create_connection(("127.0.0.1", port)).close()
                srv.accept()[0].close()
            text = d.scrape()
            _, err, rc = d.stop()
    assert rc == 0, err
    s = samples(text)
    assert value(s, "tracekit_tcp_connects_total", family="ipv4", daddr="127.0.0.1",
                 dport=str(port)) == n
    way = {"tp_btf": "the tracepoint", "tp": "the tracepoint"}.get(method, "the kernel functions")
    assert f"collector tcpconnect: by {way}" in err, err
    probes = {dict(k)["method"] for k in series(s, "tracekit_probe_attached")
              if dict(k)["collector"] == "tcpconnect"}
    assert probes == {"fentry": {"fentry", "fexit"},
                      "kprobe": {"kprobe", "kretprobe"}}.get(method, {method}), probes
    res = subprocess.run(["promtool", "check", "metrics"], input=text,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_real_prometheus_scrapes_it(tmp_path, loopdev, bio_target, fs_target):
    """Prometheus scrapes the daemon: a health series, the block
    collector's I/O count of the test's reads of its loop device, and the
    fs collector's count of the child's writes on an xfs of its own."""
    prom = shutil.which("prometheus")
    assert prom, "prometheus is installed by make deps"
    (tmp_path / "xfs").mkdir()
    fs = only_user_of(MountedFs(tmp_path / "xfs", "xfs"))
    conf = tmp_path / "c.conf"
    write_config(conf, syscalls=True, execs=True, runqlat=True, tcpconnect=False,
                 vfsstat=False, block=True, fs=True, fs_types="xfs")
    try:
        with Daemon(config=str(conf)) as d:
            with BioTarget(bio_target, loopdev.path) as w:
                w.read(4096, BLOCK_READS)
            with Workload(fs_target) as child:
                child.send(f"ops {fs.path / 'marked'}")
                child.finish()
            scrape_with_prometheus(tmp_path, d, prom, loopdev)
    finally:
        fs.close()


def scrape_with_prometheus(tmp_path, d, prom, loopdev):
    """A Prometheus server scraping d: the series the test asserts on."""
    with PrometheusServer(prom, tmp_path, d.port) as server:
        result = prometheus_query(server.port, 'tracekit_collector_up{collector="syscalls"}')
        ios = prometheus_query(
            server.port, f'tracekit_block_ios_total{{disk="{loopdev.name}",op="read"}}')
        writes = prometheus_query(
            server.port, 'tracekit_fs_op_latency_seconds_count{fs="xfs",op="write"}')
    err = server.err
    assert len(result) == 1, err[-2000:]
    assert result[0]["metric"]["job"] == "tracekit"
    assert result[0]["metric"]["collector"] == "syscalls"
    assert result[0]["value"][1] == "1"
    assert [r["value"][1] for r in ios] == [str(len(BLOCK_READS))], err[-2000:]
    assert [r["value"][1] for r in writes] == ["3"], err[-2000:]


def prometheus_query(port, query):
    """The result of an instant query, once the server has one (it
    scrapes every second); [] after two minutes without."""
    q = urllib.parse.quote(query)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/query?query={q}",
                                        timeout=10) as r:
                result = json.load(r)["data"]["result"]
            if result:
                return result
        except (urllib.error.URLError, ConnectionError):
            pass
        time.sleep(1)
    return []


def test_unit_file_passes_systemd_analyze_verify(tmp_path):
    unit = (ROOT / "tools/tracekitd.service").read_text().replace("@SBINDIR@", str(BIN))
    (tmp_path / "tracekitd.service").write_text(unit)
    res = subprocess.run(["systemd-analyze", "verify", str(tmp_path / "tracekitd.service")],
                         capture_output=True, text=True)
    assert res.returncode == 0 and res.stderr == "", res.stderr
    assert "Type=notify" in unit and "WatchdogSec=" in unit


def test_make_install_stages_everything(tmp_path):
    res = subprocess.run(["make", "-s", "-C", str(ROOT), f"BUILD={BIN.parent}",
                          f"DESTDIR={tmp_path}", "PREFIX=/usr", "install"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    for f in ("usr/sbin/tracekitd", "usr/lib/tracekit/execsnoop", "usr/lib/tracekit/profile",
              "etc/tracekit/tracekitd.conf", "lib/systemd/system/tracekitd.service"):
        assert (tmp_path / f).exists(), f
    unit = (tmp_path / "lib/systemd/system/tracekitd.service").read_text()
    assert "ExecStart=/usr/sbin/tracekitd --config /etc/tracekit/tracekitd.conf" in unit
    # The tools off PATH (Debian's libbpf-tools owns /usr/sbin/execsnoop):
    # sbin has the commands, two of them links to the tool directory.
    sbin = tmp_path / "usr/sbin"
    assert sorted(p.name for p in sbin.iterdir()) == ["tracekit", "tracekit-doctor", "tracekitd"]
    for c in ("tracekit", "tracekit-doctor"):
        assert os.readlink(sbin / c) == f"../lib/tracekit/{c}"
    tools = sorted(p.name for p in (tmp_path / "usr/lib/tracekit").iterdir())
    assert tools == sorted(p.name for p in BIN.iterdir() if p.name != "tracekitd")
    assert os.readlink(tmp_path / "usr/lib/tracekit/ext4slower") == "fsslower"
    # A page for every program (tests/e2e/test_man.py checks what they say).
    man8 = sorted(p.name for p in (tmp_path / "usr/share/man/man8").iterdir())
    assert man8 == sorted(f"{t}.8" if t in ("tracekit", "tracekit-doctor") else f"tracekit-{t}.8"
                          for t in tools) + ["tracekitd.8"]
    assert (tmp_path / "usr/share/man/man5/tracekitd.conf.5").is_file()
    completions = tmp_path / "usr/share/bash-completion/completions"
    assert sorted(p.name for p in completions.iterdir()) == ["tracekit", "tracekit-doctor"]
    assert os.readlink(completions / "tracekit-doctor") == "tracekit"


def test_installed_front_command_finds_the_tools_through_its_link(tmp_path):
    res = subprocess.run(["make", "-s", "-C", str(ROOT), f"BUILD={BIN.parent}",
                          f"DESTDIR={tmp_path}", "PREFIX=/usr", "install"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    front = tmp_path / "usr/sbin/tracekit"
    r = subprocess.run([front, "list", "--no-check", "-j"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "execsnoop" in [json.loads(l)["tool"] for l in r.stdout.splitlines()]
    r = subprocess.run([front, "execsnoop", "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("execsnoop (tracekit) "), r.stderr


BLOCK_READS = [4096 * k for k in (40, 3, 17, 9, 100, 61, 25)]
BLOCK_WRITES = [65536 * k for k in (7, 2, 12)]


@pytest.mark.kernel
def test_block_collector_counts_ios_bytes_and_latency_exactly(tmp_path, loopdev, bio_target):
    """block = yes: the test's O_DIRECT reads and writes of its loop
    device, exactly, per disk and operation: I/Os, bytes, and as many
    latencies in the histogram; promtool accepts the whole scrape."""
    conf = tmp_path / "c.conf"
    write_config(conf, syscalls=False, execs=False, runqlat=False, tcpconnect=False,
                 vfsstat=False, block=True)
    with Daemon(config=str(conf)) as d, BioTarget(bio_target, loopdev.path) as w:
        before = samples(d.scrape())
        w.read(4096, BLOCK_READS)
        w.write(65536, BLOCK_WRITES)
        text = d.scrape()
    after = samples(text)
    assert value(after, "tracekit_collector_up", collector="block") == 1

    def delta(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    disk = loopdev.name
    assert {k: v - value(before, "tracekit_block_ios_total", **dict(k))
            for k, v in series(after, "tracekit_block_ios_total").items()
            if dict(k)["disk"] == disk} == {
        frozenset({("disk", disk), ("op", "read")}): len(BLOCK_READS),
        frozenset({("disk", disk), ("op", "write")}): len(BLOCK_WRITES)}
    assert delta("tracekit_block_io_bytes_total", disk=disk, op="read") == 4096 * len(BLOCK_READS)
    assert delta("tracekit_block_io_bytes_total", disk=disk, op="write") == \
        65536 * len(BLOCK_WRITES)
    name = "tracekit_block_io_latency_seconds"
    for op, n in (("read", len(BLOCK_READS)), ("write", len(BLOCK_WRITES))):
        assert delta(name + "_count", disk=disk, op=op) == n
        assert delta(name + "_bucket", disk=disk, op=op, le="+Inf") == n
        assert delta(name + "_sum", disk=disk, op=op) > 0
        buckets = sorted((float(dict(k)["le"]), v) for k, v in
                         series(after, name + "_bucket").items()
                         if dict(k)["disk"] == disk and dict(k)["op"] == op)
        assert len(buckets) == 32 and buckets[0][0] == 2e-06
        counts = [v for _, v in buckets]
        assert counts == sorted(counts), "buckets are cumulative"
    res = subprocess.run(["promtool", "check", "metrics"], input=text,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_block_and_fs_collectors_are_off_unless_enabled(tmp_path):
    """Neither the defaults nor the shipped file run them."""
    conf = tmp_path / "c.conf"
    conf.write_text("[collectors]\nsyscalls = yes\n")
    for config in (str(conf), str(ROOT / "tools/tracekitd.conf")):
        with Daemon(config=config) as d:
            s = samples(d.scrape())
        up = {dict(k)["collector"] for k in series(s, "tracekit_collector_up")}
        assert "syscalls" in up and "block" not in up and "fs" not in up, up
        assert not series(s, "tracekit_block_ios_total")
        assert not series(s, "tracekit_fs_op_latency_seconds_count")


def only_user_of(fs):
    """fs, when no other mount has its type: the collector counts a file
    system type system-wide, so exact counts need the test's mount to be
    the only one (the root here is ext4: the tests use xfs and btrfs)."""
    with open("/proc/self/mounts") as f:
        others = [line.split()[1] for line in f
                  if line.split()[2] == fs.type and line.split()[1] != str(fs.path)]
    if others:
        fs.close()
        pytest.skip(f"{fs.type} is mounted elsewhere too ({others[0]}): "
                    "its operations there would count")
    return fs


FS_OPS = {op: sum(1 for o, _, _ in FS_EXPECTED if o == op) for op, _, _ in FS_EXPECTED}


@pytest.mark.kernel
@pytest.mark.parametrize("method", ["tp", "fentry", "kprobe"])
@pytest.mark.parametrize("fstype", ["xfs", "btrfs"])
def test_fs_collector_counts_each_operation_exactly(tmp_path, fs_target, fstype, method):
    """fs = yes: the child's 8 operations on a file system of the test's
    own (open, 3 writes, 2 reads, fsync, fstat), exactly, per operation:
    _count, +Inf == _count, 32 cumulative le buckets from 2 us; each way
    of tracing (the syscall tracepoints are this host's; the log says what
    they cannot see); promtool accepts the scrape."""
    if method != "tp":
        require(method)
    fs = only_user_of(MountedFs(tmp_path, fstype))
    conf = tmp_path / "c.conf"
    write_config(conf, syscalls=False, execs=False, runqlat=False, tcpconnect=False,
                 vfsstat=False, fs=True, fs_types=fstype)
    try:
        with Daemon(config=str(conf), env={"TRACEKIT_ATTACH": method}) as d, \
                Workload(fs_target) as child:
            before = samples(d.scrape())
            child.send(f"ops {fs.path / 'marked'}")
            child.finish()
            text = d.scrape()
            _, err, rc = d.stop()
    finally:
        fs.close()
    assert rc == 0, err
    after = samples(text)
    assert value(after, "tracekit_collector_up", collector="fs") == 1
    way = "syscall tracepoints" if method == "tp" else "its kernel functions"
    assert f"collector fs: {fstype} by {way}" in err, err
    assert ("cannot see mmap'd I/O" in err) == (method == "tp"), err

    name = "tracekit_fs_op_latency_seconds"

    def delta(metric, **labels):
        return value(after, metric, **labels) - value(before, metric, **labels)

    counts = {dict(k)["op"]: v - value(before, name + "_count", **dict(k))
              for k, v in series(after, name + "_count").items()}
    assert counts == {op: FS_OPS.get(op, 0)
                      for op in ("read", "write", "open", "fsync", "getattr")}, counts
    assert {dict(k)["fs"] for k in series(after, name + "_count")} == {fstype}
    for op, n in FS_OPS.items():
        assert delta(name + "_bucket", fs=fstype, op=op, le="+Inf") == n
        assert delta(name + "_sum", fs=fstype, op=op) > 0
        buckets = sorted((float(dict(k)["le"]), v) for k, v in
                         series(after, name + "_bucket").items()
                         if dict(k)["op"] == op)
        assert len(buckets) == 32 and buckets[0][0] == 2e-06  # the last: +Inf
        counts = [v for _, v in buckets]
        assert counts == sorted(counts), "buckets are cumulative"
        assert counts[-1] == value(after, name + "_count", fs=fstype, op=op)
    res = subprocess.run(["promtool", "check", "metrics"], input=text,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_fs_collector_skips_an_absent_file_system(tmp_path):
    """A file system the kernel has not is logged and left out; the
    collector runs for the others."""
    if has_fs("nfs"):
        pytest.skip("this kernel has nfs: no absent file system to name")
    conf = tmp_path / "c.conf"
    write_config(conf, syscalls=False, execs=False, runqlat=False, tcpconnect=False,
                 vfsstat=False, fs=True, fs_types="ext4 nfs")
    with Daemon(config=str(conf)) as d:
        s = samples(d.scrape())
        _, err, rc = d.stop()
    assert rc == 0, err
    assert "collector fs: nfs skipped: not in /proc/filesystems" in err, err
    assert value(s, "tracekit_collector_up", collector="fs") == 1
    assert {dict(k)["fs"] for k in series(s, "tracekit_fs_op_latency_seconds_count")} == {"ext4"}
