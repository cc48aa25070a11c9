"""tracekit-doctor end to end: its report checked against independent
evidence on whatever kernel runs the suite (this machine, or a kernel of the
VM matrix): files under /sys and /proc, bpftool's own feature probe, the
capability bits of /proc/PID/status, and each tool's own --dry-run. A
directory of scripts playing tools checks the tool runner: the extra
arguments of funclatency, a failing tool, a hanging tool, and programs that
are not tracekit tools and must not be run."""
import gzip
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import BIN, READY_TIMEOUT, json_lines, run, run_explained, tool_path

FEATURES = ["btf", "ringbuf", "perf_buffer", "tracepoints", "raw_tp", "tp_btf",
            "fentry", "kprobes", "uprobes", "tracefs", "lockdown",
            "perf_event_paranoid", "unprivileged_bpf", "bpf_stats",
            "capabilities", "memlock"]
# The one place, besides the doctor's own table, that knows which tools
# need an argument.
LABELS = {"funclatency": ["funclatency (kernel function)", "funclatency (user function)"],
          "stackcount": ["stackcount (tracepoint)", "stackcount (kernel function)",
                         "stackcount (user function)"],
          "funccount": ["funccount (tracepoint)", "funccount (kernel function)",
                        "funccount (user function)"],
          "trace": ["trace (tracepoint)", "trace (kernel function)", "trace (user function)"],
          "argdist": ["argdist (tracepoint)", "argdist (kernel function)",
                      "argdist (user function)"],
          "fsslower": ["fsslower (-t ext4)"], "fsdist": ["fsdist (-t ext4)"]}
ARGS = {"funclatency (kernel function)": ["vfs_read"],
        "funclatency (user function)": ["c:getpid"],
        "stackcount (tracepoint)": ["t:sched:sched_switch"],
        "stackcount (kernel function)": ["vfs_read"],
        "stackcount (user function)": ["c:getpid"],
        "funccount (tracepoint)": ["t:sched:sched_switch"],
        "funccount (kernel function)": ["vfs_read"],
        "funccount (user function)": ["c:getpid"],
        "trace (tracepoint)": ["t:sched:sched_switch"],
        "trace (kernel function)": ["k:vfs_read"],
        "trace (user function)": ["u:c:getpid"],
        "argdist (tracepoint)": ["-C", "t:sched:sched_switch"],
        "argdist (kernel function)": ["-C", "k:vfs_read"],
        "argdist (user function)": ["-C", "u:c:getpid"],
        "fsslower (-t ext4)": ["-t", "ext4"], "fsdist (-t ext4)": ["-t", "ext4"]}
FEATURE_OF = {"tp_btf": "tp_btf", "raw_tp": "raw_tp", "tp": "tracepoints",
              "fentry": "fentry", "fexit": "fentry", "kprobe": "kprobes",
              "kretprobe": "kprobes", "uprobe": "uprobes", "uretprobe": "uprobes",
              # profile's cpu-clock events: open to root whatever the
              # paranoia level, which the doctor reports
              "perf_event": "perf_event_paranoid"}
CAPS = {"CAP_SYS_ADMIN": 21, "CAP_SYS_RESOURCE": 24, "CAP_PERFMON": 38, "CAP_BPF": 39}


# Each tool's dry run gets as long as a tool may take to attach
# (READY_TIMEOUT): under TCG klockstat's alone takes 29 s on arm64 6.1,
# and more than the doctor's default 60 s beside seven others.
REPORT_ARGS = ["--timeout", str(READY_TIMEOUT)]
REPORT_TIMEOUT = 300 + 3 * READY_TIMEOUT


def doctor_json():
    r = run("tracekit-doctor", "--json", *REPORT_ARGS, timeout=REPORT_TIMEOUT)
    assert r.returncode == 0, r.stderr
    (report,) = json_lines(r.stdout)
    return report


@pytest.fixture(scope="module")
def json_report():
    """The JSON report, with the mount state at the time. The kernel
    matrix runs only tests of this one: a report of every tool costs
    about 30 s under TCG, so the text is made only where it is tested."""
    return doctor_json(), Path("/proc/self/mounts").read_text()


@pytest.fixture(scope="module")
def report(json_report):
    return json_report[0]


@pytest.fixture(scope="module")
def reports():
    """The JSON report and the text report, made back to back so that both
    describe one state of the machine: tests between them run tools that
    mount tracefs on a fresh boot (the doctor itself mounts nothing), so a
    report made earlier in the session can differ from the text made later."""
    report = doctor_json()
    t = run("tracekit-doctor", *REPORT_ARGS, timeout=REPORT_TIMEOUT)
    assert t.returncode == 0, t.stderr
    assert t.stderr == ""
    return report, t.stdout


def features(report):
    return report["features"]


def installed_labels():
    """What the doctor should find next to it: every tracekit tool."""
    labels = []
    for p in sorted(BIN.iterdir()):
        if (p.name in ("tracekit", "tracekit-doctor") or p.name.startswith("tracekitd")
                or not p.is_file() or not os.access(p, os.X_OK)):
            continue
        labels += LABELS.get(p.name, [p.name])
    return labels


def tool_of(label):
    return label.split(" ")[0]


def parse_dry_run(stdout):
    probes, transport = [], None
    for line in stdout.splitlines():
        if line.startswith("probe "):
            _, probe, method, target = line.split(" ", 3)
            probes.append({"probe": probe, "method": method, "target": target})
        elif line.startswith("transport "):
            transport = line.split(" ", 1)[1]
    return probes, transport


def kernel_config():
    """The kernel's configuration text, or None."""
    try:
        return gzip.open("/proc/config.gz", "rt").read()
    except OSError:
        pass
    try:
        return Path(f"/boot/config-{os.uname().release}").read_text()
    except OSError:
        return None


def private_mounts(script):
    """Run a shell script in a mount namespace of its own."""
    return subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                          capture_output=True, text=True, timeout=300)


# ---- the JSON report ----

@pytest.mark.kernel
def test_json_is_one_line_with_every_feature():
    r = run("tracekit-doctor", "--json", "--no-tools")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    assert r.stdout.count("\n") == 1 and r.stdout.endswith("\n")
    (rep,) = json_lines(r.stdout)
    assert rep["type"] == "doctor"
    assert rep["kernel"] == os.uname().release
    assert list(rep["features"]) == FEATURES
    for name, f in rep["features"].items():
        assert isinstance(f["ok"], bool), name
        assert isinstance(f["detail"], str) and f["detail"], name
        assert "\n" not in f["detail"], name
    assert rep["tools"] == {}  # --no-tools


def test_full_report_shape(report):
    assert report["type"] == "doctor"
    assert list(report["features"]) == FEATURES
    for label, t in report["tools"].items():
        assert isinstance(t["ok"], bool), label
        if t["ok"]:
            assert set(t) == {"ok", "probes", "transport"}, label
            for p in t["probes"]:
                assert set(p) == {"probe", "method", "target"}
        else:
            assert set(t) == {"ok", "error"}, label


@pytest.mark.kernel
def test_btf_matches_sysfs(report):
    f = features(report)["btf"]
    if Path("/sys/kernel/btf/vmlinux").exists():
        assert f["ok"], f["detail"]
        assert f["detail"].startswith("/sys/kernel/btf/vmlinux: ")
        assert int(re.search(r"(\d+) types", f["detail"]).group(1)) > 1000
    else:
        assert "CONFIG_DEBUG_INFO_BTF" in f["detail"]


@pytest.mark.kernel
def test_maps_agree_with_bpftool(report):
    if not shutil.which("bpftool"):
        pytest.skip("no bpftool")
    # 5 s alone in the arm64 guest (TCG); once over 120 s in CI's full
    # run, for no cause found: run_explained says where it waits.
    r = run_explained(["bpftool", "feature", "probe", "kernel", "-j"], timeout=120)
    assert r.returncode == 0, r.stderr
    probe = json.loads(r.stdout)
    maps, progs = probe["map_types"], probe["program_types"]
    f = features(report)
    assert f["ringbuf"]["ok"] == maps["have_ringbuf_map_type"], f["ringbuf"]["detail"]
    assert f["perf_buffer"]["ok"] == maps["have_perf_event_array_map_type"]
    # Loading is half of attaching: what attaches, bpftool can load.
    for feature, prog_type in [("raw_tp", "have_raw_tracepoint_prog_type"),
                               ("tracepoints", "have_tracepoint_prog_type"),
                               ("kprobes", "have_kprobe_prog_type"),
                               ("uprobes", "have_kprobe_prog_type")]:
        if f[feature]["ok"]:
            assert progs[prog_type], feature


@pytest.mark.kernel
def test_kprobes_iff_kprobe_pmu(report):
    f = features(report)["kprobes"]
    pmu = Path("/sys/bus/event_source/devices/kprobe").exists()
    assert f["ok"] == pmu, f["detail"]
    if not f["ok"]:
        assert "CONFIG_KPROBES" in f["detail"]
        config = kernel_config()
        if config is not None and "# CONFIG_KPROBES is not set" in config:
            assert "CONFIG_KPROBES is not set" in f["detail"]


@pytest.mark.kernel
def test_uprobes_iff_uprobe_pmu(report):
    f = features(report)["uprobes"]
    assert f["ok"] == Path("/sys/bus/event_source/devices/uprobe").exists(), f["detail"]
    if f["ok"]:  # on a function of the doctor itself
        assert os.path.realpath(BIN / "tracekit-doctor") in f["detail"]


@pytest.mark.kernel
def test_fentry_explains_itself(report):
    f = features(report)["fentry"]
    if not f["ok"]:
        assert "CONFIG_FUNCTION_TRACER" in f["detail"] or "BTF" in f["detail"]
        assert "vfs_read" in f["detail"]


@pytest.mark.kernel
def test_tracepoint_chain_needs_btf(report):
    f = features(report)
    if f["tp_btf"]["ok"] or f["fentry"]["ok"]:
        assert f["btf"]["ok"]


@pytest.mark.kernel
def test_sysctls_match_proc(report):
    f = features(report)
    paranoid = int(Path("/proc/sys/kernel/perf_event_paranoid").read_text())
    assert f["perf_event_paranoid"]["value"] == paranoid
    assert f["perf_event_paranoid"]["detail"].startswith(f"{paranoid}: ")
    assert f["perf_event_paranoid"]["ok"]  # as root
    unpriv = int(Path("/proc/sys/kernel/unprivileged_bpf_disabled").read_text())
    assert f["unprivileged_bpf"]["value"] == unpriv
    assert f"kernel.unprivileged_bpf_disabled={unpriv}" in f["unprivileged_bpf"]["detail"]
    stats = Path("/proc/sys/kernel/bpf_stats_enabled")
    if stats.exists():
        assert f["bpf_stats"]["value"] == int(stats.read_text())


def test_capabilities_match_proc_status(report):
    f = features(report)["capabilities"]
    # The doctor runs with the test's capabilities.
    status = Path("/proc/self/status").read_text()
    eff = int(re.search(r"^CapEff:\s+([0-9a-f]+)", status, re.M).group(1), 16)
    last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    have = re.search(r"effective: ([A-Z_ ]+|none)", f["detail"]).group(1).split()
    for name, bit in CAPS.items():
        if bit > last:  # a kernel before CAP_BPF and CAP_PERFMON
            assert name not in f["detail"]
        else:
            assert (name in have) == bool(eff >> bit & 1), (name, f["detail"])
    assert f["ok"] == bool(eff >> 21 & 1 or (last >= 39 and eff >> 38 & 1 and eff >> 39 & 1))


def test_memlock_matches_rlimit(report):
    f = features(report)["memlock"]
    soft, _ = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    if soft == resource.RLIM_INFINITY:
        assert f["value"] is None
    else:
        assert f["value"] == soft


@pytest.mark.kernel
def test_lockdown_matches_securityfs(report):
    f = features(report)["lockdown"]
    # securityfs may not be mounted: read it in a namespace of our own.
    r = private_mounts("mountpoint -q /sys/kernel/security || "
                       "mount -t securityfs none /sys/kernel/security; "
                       "cat /sys/kernel/security/lockdown 2>/dev/null || echo '[none]'")
    assert r.returncode == 0, r.stderr
    mode = re.search(r"\[(\w+)\]", r.stdout).group(1)
    assert f["mode"] == mode
    assert f["detail"].startswith(mode + ":")
    assert f["ok"] == (mode != "confidentiality")


@pytest.mark.kernel
def test_tracefs_state_matches_mounts(json_report):
    report, mounts = json_report
    f = features(report)["tracefs"]
    assert f["ok"], f["detail"]
    mounted = [line.split()[1] for line in mounts.splitlines()
               if line.split()[2] == "tracefs"]
    if "/sys/kernel/tracing" in mounted:
        assert f["detail"] == "mounted at /sys/kernel/tracing"
    elif not mounted:
        assert f["detail"].startswith("not mounted; mountable"), f["detail"]


@pytest.mark.kernel
def test_unmounted_tracefs_is_probed_and_left_unmounted():
    """With tracefs unmounted, the doctor finds it mountable and still
    attaches a classic tracepoint, and leaves it unmounted, even after
    running the tools (stackcount's dry run of a tracepoint mounts
    tracefs, in a mount namespace the doctor gives it)."""
    doc = tool_path("tracekit-doctor")
    r = private_mounts(
        "umount -l /sys/kernel/debug/tracing 2>/dev/null; "
        "umount -l /sys/kernel/tracing 2>/dev/null; "
        "grep -q ' tracefs ' /proc/self/mounts && exit 77; "
        f"{doc} --json || exit 1; "
        "grep -c ' tracefs ' /proc/self/mounts; true")
    if r.returncode == 77:
        pytest.skip("tracefs cannot be unmounted here")
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    rep = json.loads(out[0])
    assert out[1] == "0"  # still not mounted
    f = rep["features"]
    assert f["tracefs"]["ok"]
    assert f["tracefs"]["detail"].startswith("not mounted; mountable")
    assert f["tracepoints"]["ok"], f["tracepoints"]["detail"]
    assert "tracefs not mounted" in f["tracepoints"]["detail"]
    t = rep["tools"].get("stackcount (tracepoint)")
    assert t is None or t["ok"], t


@pytest.mark.kernel
def test_leaves_mounts_and_probe_events_as_they_were():
    def state():
        # The files first: /sys/kernel/debug/tracing is an automount on
        # some kernels (the VM matrix's), which reading it mounts, and the
        # mounts must be listed after this probe's own effect.
        events = ""
        for root in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
            for kind in ("kprobe_events", "uprobe_events"):
                p = Path(root, kind)
                if p.exists():
                    events += p.read_text()
        mounts = sorted(line for line in Path("/proc/self/mounts").read_text().splitlines()
                        if " tracefs " in line or " securityfs " in line)
        return mounts, events

    before = state()
    r = run("tracekit-doctor", "--no-tools")
    assert r.returncode == 0, r.stderr
    assert state() == before
    assert "tk_doctor" not in before[1]


# ---- the tools ----

def test_every_tool_is_reported(report):
    assert list(report["tools"]) == installed_labels()


@pytest.mark.kernel
def test_tool_reports_match_their_own_dry_run(report):
    # Eight at a time, as the doctor runs them: a dry run mostly waits
    # for its probes' teardown.
    labels = list(report["tools"])
    with ThreadPoolExecutor(8) as pool:
        results = pool.map(lambda label: run(tool_of(label), "--dry-run",
                                             *ARGS.get(label, []), timeout=120), labels)
    for label, r in zip(labels, results):
        t = report["tools"][label]
        if t["ok"]:
            assert r.returncode == 0, (label, r.stderr)
            probes, transport = parse_dry_run(r.stdout)
            assert t["probes"] == probes, label
            assert t["transport"] == transport, label
            # What a tool attached with, the kernel has.
            for p in probes:
                assert features(report)[FEATURE_OF[p["method"]]]["ok"], (label, p)
        else:
            assert r.returncode == 1, (label, r.returncode, r.stderr)
            lines = r.stderr.splitlines()
            assert len(lines) == 1, (label, r.stderr)
            assert t["error"] == lines[0]
            assert t["error"].startswith(tool_of(label) + ": ")


@pytest.mark.kernel
def test_tools_and_features_say_the_same(report):
    """A tool that cannot trace kernel functions fails where the doctor
    finds neither fentry nor kprobes, and names the same fixes."""
    f = features(report)
    kfuncs = f["fentry"]["ok"] or f["kprobes"]["ok"]
    for label, t in report["tools"].items():
        if not t["ok"] and "cannot trace kernel function" in t["error"]:
            assert not kfuncs, (label, t["error"])
            if "CONFIG_KPROBES" in f["kprobes"]["detail"]:
                assert "CONFIG_KPROBES" in t["error"], t["error"]
    k = report["tools"].get("funclatency (kernel function)")
    if k is not None:
        assert k["ok"] == kfuncs, k
    u = report["tools"].get("funclatency (user function)")
    if u is not None:
        assert u["ok"] == f["uprobes"]["ok"], u


# ---- text ----

def test_text_sections_and_rows(reports):
    report, text = reports
    lines = text.splitlines()
    assert lines[0].startswith(f"Kernel {os.uname().release} {os.uname().machine} ")
    for heading in ("Features", "Process (pid "):
        assert any(line.startswith(heading) for line in lines), heading
    assert f"Tools (in {BIN})" in lines
    rows = {}
    for line in lines:
        m = re.match(r"  (\S.*?) +(yes|no) +(\S.*)$", line)
        if m:
            rows[m.group(1)] = (m.group(2), m.group(3), m.start(2))
    for name in FEATURES:
        assert rows[name][0] == ("yes" if report["features"][name]["ok"] else "no"), name
        assert rows[name][1] == report["features"][name]["detail"]
    for label, t in report["tools"].items():
        status, detail, _ = rows[label]
        assert status == ("yes" if t["ok"] else "no"), label
        if not t["ok"]:
            assert detail == t["error"]
        else:
            for method in {p["method"] for p in t["probes"]}:
                n = sum(p["method"] == method for p in t["probes"])
                assert f"{method} ({n} probe{'s' if n > 1 else ''})" in detail
            if t["transport"]:
                assert detail.endswith(f"; transport {t['transport']}")
    # One status column for every row.
    assert len({col for _, _, col in rows.values()}) == 1


def test_verbose_lists_each_probe(report):
    r = run("tracekit-doctor", "-v", timeout=300)
    assert r.returncode == 0, r.stderr
    for t in report["tools"].values():
        for p in t.get("probes", []):
            assert re.search(rf"^ +{re.escape(p['probe'])} {p['method']} {re.escape(p['target'])}$",
                             r.stdout, re.M), p


# ---- usage ----

@pytest.mark.parametrize("args, needle", [
    (["--timeout", "soon"], "--timeout"),
    (["--timeout", "0"], "--timeout"),
    (["--bogus"], "--bogus"),
    (["execsnoop"], "execsnoop"),
    (["--timeout"], "--timeout"),
    (["--parallel", "0"], "--parallel"),
    (["--parallel", "many"], "--parallel"),
])
def test_usage_errors_exit_2_one_line(args, needle):
    r = run("tracekit-doctor", *args)
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("tracekit-doctor: ")
    assert needle in lines[0]


def test_help():
    r = run("tracekit-doctor", "--help")
    assert r.returncode == 0
    assert "--no-tools" in r.stdout and "--timeout" in r.stdout


# ---- the tool runner, on scripts that play tools ----

MARK = "# TRACEKIT_READY_FD: marks a tracekit tool\n"


@pytest.fixture
def fake_bin(tmp_path):
    """The doctor next to scripts: a tool that works, one that fails, one
    that hangs, funclatency (echoing its argument), and programs that
    must not be run (they leave a file behind if they are)."""
    shutil.copy(tool_path("tracekit-doctor"), tmp_path / "tracekit-doctor")
    ran = tmp_path / "ran"
    ran.mkdir()

    def script(name, body, mark=True, mode=0o755):
        p = tmp_path / name
        p.write_text("#!/bin/sh\n" + (MARK if mark else "") + body + "\n")
        p.chmod(mode)

    script("good", '[ "$1" = --dry-run ] || exit 2\n'
                   'echo "probe hits tp_btf sched_switch"\n'
                   'echo "probe other raw_tp sys enter"\n'
                   'echo "transport perf"')
    script("bad", 'echo "bad: cannot trace tracepoint x/y: no such thing; use a kernel with CONFIG_Y=y" >&2\n'
                  'exit 1')
    # It starts a child that holds the pipes too: both must go.
    script("hangs", f'sleep 1000 & echo "$$ $!" > {ran}/tmp; mv {ran}/tmp {ran}/hangs.pids; wait')
    script("funclatency", 'echo "probe func fentry $2"')
    script("not-a-tool", f"touch {ran}/not-a-tool", mark=False)
    script("tracekitd", f"touch {ran}/tracekitd")
    script("tracekitd-helper", f"touch {ran}/tracekitd-helper")
    script("not-executable", f"touch {ran}/not-executable", mode=0o644)
    (tmp_path / "subdir").mkdir()
    return tmp_path


def assert_killed(fake_bin):
    """The hanging tool and its child are gone (or zombies of init)."""
    for pid in (fake_bin / "ran" / "hangs.pids").read_text().split():
        deadline = time.monotonic() + 10
        while True:
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except FileNotFoundError:
                break
            if state == "Z":
                break
            assert time.monotonic() < deadline, f"pid {pid} still runs"
            time.sleep(0.05)


def test_runner_on_fake_tools(fake_bin):
    t0 = time.monotonic()
    r = subprocess.run([str(fake_bin / "tracekit-doctor"), "--json", "--timeout", "2"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert time.monotonic() - t0 < 60
    (rep,) = json_lines(r.stdout)
    tools = rep["tools"]
    assert list(tools) == ["bad", "funclatency (kernel function)",
                           "funclatency (user function)", "good", "hangs"]
    assert tools["good"] == {"ok": True, "transport": "perf", "probes": [
        {"probe": "hits", "method": "tp_btf", "target": "sched_switch"},
        {"probe": "other", "method": "raw_tp", "target": "sys enter"}]}
    assert tools["bad"] == {"ok": False, "error":
                            "bad: cannot trace tracepoint x/y: no such thing; use a kernel with CONFIG_Y=y"}
    assert tools["hangs"] == {"ok": False, "error":
                              "hangs: no answer within 2 s (killed by tracekit-doctor)"}
    assert tools["funclatency (kernel function)"]["probes"][0]["target"] == "vfs_read"
    assert tools["funclatency (user function)"]["probes"][0]["target"] == "c:getpid"
    assert tools["funclatency (user function)"]["transport"] is None
    assert sorted(os.listdir(fake_bin / "ran")) == ["hangs.pids"]
    assert_killed(fake_bin)


def test_runner_text_on_fake_tools(fake_bin):
    r = subprocess.run([str(fake_bin / "tracekit-doctor"), "--timeout", "1"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    tools = r.stdout.split(f"Tools (in {fake_bin})\n")[1].splitlines()
    assert tools == [
        "  bad                            no   bad: cannot trace tracepoint x/y: no such thing; use a kernel with CONFIG_Y=y",
        "  funclatency (kernel function)  yes  fentry (1 probe)",
        "  funclatency (user function)    yes  fentry (1 probe)",
        "  good                           yes  tp_btf (1 probe), raw_tp (1 probe); transport perf",
        "  hangs                          no   hangs: no answer within 1 s (killed by tracekit-doctor)",
    ]


@pytest.mark.parametrize("parallel", ["2", "1"])
def test_dry_runs_overlap_and_are_reported_in_order(fake_bin, parallel):
    """Dry runs run at once (--parallel, default 8): "aa" answers only
    once "zz" has started, which it can only if both run together; the
    report keeps the order of names although zz finishes first. One at a
    time, aa waits 10 s in vain and says so."""
    for name in ("bad", "good", "funclatency", "hangs"):
        (fake_bin / name).unlink()
    ran = fake_bin / "ran"
    (fake_bin / "aa").write_text(
        "#!/bin/sh\n" + MARK + f"for i in $(seq 100); do [ -e {ran}/zz ] && "
        "{ echo 'probe a tp_btf sched_switch'; exit 0; }; sleep 0.1; done\n"
        "echo 'aa: zz never started' >&2; exit 1\n")
    (fake_bin / "zz").write_text("#!/bin/sh\n" + MARK + f"touch {ran}/zz\n"
                                 "echo 'probe z raw_tp sys_enter'\n")
    for name in ("aa", "zz"):
        (fake_bin / name).chmod(0o755)
    r = subprocess.run([str(fake_bin / "tracekit-doctor"), "--timeout", "30",
                        "--parallel", parallel], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    tools = r.stdout.split(f"Tools (in {fake_bin})\n")[1].splitlines()
    aa = ("yes  tp_btf (1 probe)" if parallel == "2" else "no   aa: zz never started")
    assert tools == [f"  {'aa':<20}  {aa}", f"  {'zz':<20}  yes  raw_tp (1 probe)"]


def test_sigint_stops_the_running_tool(fake_bin):
    for name in ("bad", "good", "funclatency"):
        (fake_bin / name).unlink()
    proc = subprocess.Popen([str(fake_bin / "tracekit-doctor"), "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (fake_bin / "ran" / "hangs.pids").exists():
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 1
    assert err == "tracekit-doctor: interrupted: 1 of 1 tool checks not done\n"
    (rep,) = json_lines(out)  # what was probed before, still one line
    assert rep["tools"] == {}
    assert_killed(fake_bin)
