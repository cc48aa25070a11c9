"""tracekitd as a user runs it: Debian's packages installed in a Debian
system booted with systemd as PID 1, the unit's whole sandbox on. The
tests run in file order, each on the state the one before left (the
packages installed, the daemon running or stopped)."""
import json
import os
import re
import time
from pathlib import Path

from promtext import samples, value

ROOT = Path(__file__).resolve().parent.parent.parent
UNIT = "tracekitd.service"
CONF = "/etc/tracekit/tracekitd.conf"
URL = "http://127.0.0.1:9949/metrics"
DROPIN = "/run/systemd/system/tracekitd.service.d"


def show(guest, *props):
    out = guest.sh(f"systemctl show -p {','.join(props)} {UNIT}")
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def wait_for(what, probe, timeout=120):
    """probe()'s first true value, polled each second."""
    deadline = time.monotonic() + timeout
    while True:
        v = probe()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(1)


def scrape(guest):
    return samples(guest.sh(f"curl -sSf {URL}"))


def configured_collectors(guest):
    """The collectors the installed config enables, as tracekitd reads it."""
    out = guest.sh(f"tracekitd --config {CONF} --check-config")
    m = re.search(r"collectors:((?: \w+)*)\)$", out.strip())
    assert m, out
    return m.group(1).split()


def status_text(names):
    return (f"{len(names)} collectors running ({' '.join(names)}), "
            "serving http://127.0.0.1:9949/metrics")


def journal(guest, since=None):
    """tracekitd's own lines in the journal: [(priority, message)]."""
    out = guest.sh(f"journalctl -b -u {UNIT} -o json --no-pager"
                   + (f" --since=@{since}" if since else ""))
    lines = []
    for raw in out.splitlines():
        e = json.loads(raw)
        if e.get("SYSLOG_IDENTIFIER") == "tracekitd":
            lines.append((int(e["PRIORITY"]), e["MESSAGE"]))
    return lines


def manager_says(guest, since):
    """systemd's own messages about the unit since a time (seconds since
    the epoch in the guest)."""
    out = guest.sh(f"journalctl -b _PID=1 --since=@{since} -o cat --no-pager")
    return [line for line in out.splitlines() if "tracekitd" in line]


def guest_time(guest):
    return int(guest.sh("date +%s"))


def running(guest, pid=None):
    """The unit's state once it is active and, given pid, on another
    main process."""
    s = show(guest, "ActiveState", "SubState", "MainPID", "NRestarts", "Result")
    if s["ActiveState"] == "active" and s["SubState"] == "running" and \
            s["MainPID"] != "0" and s["MainPID"] != pid:
        return s
    return None


def restarted_after(guest, cmd, why):
    """Runs cmd against the running daemon ({pid}: its main PID); systemd
    restarts it, once, and its log says why."""
    s = wait_for("running", lambda: running(guest))
    since = guest_time(guest)
    guest.sh(cmd.format(pid=s["MainPID"]))
    after = wait_for("restarted", lambda: running(guest, s["MainPID"]), timeout=180)
    assert int(after["NRestarts"]) == int(s["NRestarts"]) + 1
    said = manager_says(guest, since)
    assert any(why in line for line in said), said


def test_boots_to_a_running_system(guest):
    want = os.environ.get("TK_GUEST_RELEASE")
    if want:
        assert guest.sh("uname -r").strip() == want
    state = guest.run("systemctl is-system-running --wait", timeout=600)
    failed = guest.run("systemctl --failed --no-legend --plain").out
    assert state.out.strip() == "running", failed


def test_packages_install_and_start_it(guest):
    r = guest.run("dpkg -i /root/debs/*.deb", timeout=600)
    assert r.rc == 0, r
    # What dpkg printed about the unit is what a user sees: no warning.
    assert "warning" not in (r.out + r.err).lower(), r
    assert guest.sh(f"systemctl is-enabled {UNIT}").strip() == "enabled"
    assert guest.run(f"systemctl is-active {UNIT}").out.strip() == "active"


def test_enable_now_returns_once_it_is_ready(guest):
    guest.sh(f"systemctl disable --now {UNIT}")
    assert guest.run(f"systemctl is-active {UNIT}").out.strip() == "inactive"
    # Type=notify: systemctl returns when tracekitd said READY=1, which
    # it says once every collector has attached.
    guest.sh(f"systemctl enable --now {UNIT}", timeout=300)
    s = show(guest, "Type", "NotifyAccess", "ActiveState", "SubState", "StatusText",
             "UnitFileState")
    assert (s["Type"], s["NotifyAccess"], s["ActiveState"], s["SubState"],
            s["UnitFileState"]) == ("notify", "main", "active", "running", "enabled")
    # Every collector the shipped config enables runs under the sandbox.
    assert s["StatusText"] == status_text(configured_collectors(guest))


def test_every_collector_is_up_in_the_metrics(guest):
    s = scrape(guest)
    for name in configured_collectors(guest):
        assert value(s, "tracekit_collector_up", collector=name) == 1, name


def test_every_collector_runs_under_the_sandbox(guest):
    """The ones off by default too (block, fs, netdev, cpudist), all at
    once, from a start (a reload would start them with fewer privileges:
    the next tests)."""
    guest.sh(f"cp {CONF} /root/tracekitd.conf.orig && "
             f"sed -i '/^\\[collectors\\]/,$ s/^\\(\\w\\+\\) = no$/\\1 = yes/' {CONF} && "
             f"systemctl restart {UNIT}",
             timeout=300)
    try:
        names = configured_collectors(guest)
        assert {"block", "fs", "netdev", "cpudist"} <= set(names), names
        assert show(guest, "StatusText")["StatusText"] == status_text(names)
    finally:
        guest.sh(f"cp /root/tracekitd.conf.orig {CONF} && systemctl restart {UNIT}", timeout=300)


def test_metrics_count_what_the_test_makes(guest):
    n_ok, n_err, n_exec = 1234, 77, 25
    guest.sh("cp /bin/true /usr/local/bin/tkd-marker")
    before = scrape(guest)
    guest.sh(f"tk-syscalls {n_ok} {n_err}")
    guest.sh(f"for i in $(seq {n_exec}); do tkd-marker; done")
    after = scrape(guest)
    name = dict(syscall="sched_get_priority_max")
    assert (value(after, "tracekit_syscalls_total", **name)
            - value(before, "tracekit_syscalls_total", **name)) == n_ok + n_err
    assert (value(after, "tracekit_syscall_errors_total", **name)
            - value(before, "tracekit_syscall_errors_total", **name)) == n_err
    assert value(before, "tracekit_execs_total", comm="tkd-marker") == 0
    assert value(after, "tracekit_execs_total", comm="tkd-marker") == n_exec


def collector_is_up(guest, name):
    return ("tracekit_collector_up", frozenset({("collector", name)})) in scrape(guest)


def test_reload_applies_an_edited_config_and_keeps_a_good_one(guest):
    names = configured_collectors(guest)
    assert "execs" in names
    pid = show(guest, "MainPID")["MainPID"]
    since = guest_time(guest)
    guest.sh(f"cp {CONF} /root/tracekitd.conf.orig && "
             f"sed -i 's/^execs = yes$/execs = no/' {CONF}")
    guest.sh(f"systemctl reload {UNIT}")
    # systemctl returns once kill -HUP has: the daemon reloads after.
    wait_for("execs stopped by the reload", lambda: not collector_is_up(guest, "execs"))
    assert collector_is_up(guest, "syscalls")
    wait_for("the new status", lambda: show(guest, "StatusText")["StatusText"]
             == status_text([n for n in names if n != "execs"]))
    # A file it cannot read keeps what runs, and says why.
    guest.sh(f"sed -i 's/^execs = no$/execs = perhaps/' {CONF}")
    guest.sh(f"systemctl reload {UNIT}")
    bad = wait_for("the bad reload's warning", lambda: [
        m for p, m in journal(guest, since) if "perhaps" in m])
    assert not collector_is_up(guest, "execs")
    assert collector_is_up(guest, "syscalls")
    guest.sh(f"cp /root/tracekitd.conf.orig {CONF} && systemctl reload {UNIT}")
    wait_for("execs back", lambda: collector_is_up(guest, "execs"))
    s = show(guest, "MainPID", "NRestarts", "ActiveState")
    assert (s["MainPID"], s["NRestarts"], s["ActiveState"]) == (pid, "0", "active")
    assert re.fullmatch(r"reload: /etc/tracekit/tracekitd.conf:\d+: execs: bad value "
                        r"'perhaps' \(yes or no\); keeping the running configuration",
                        bad[0]), bad


def test_reload_says_restart_for_a_collector_it_cannot_start(guest):
    """tracekitd gives up CAP_SYS_ADMIN once attached. Debian's kernels
    (kernel.perf_event_paranoid 3, their default) open perf events only
    to CAP_SYS_ADMIN: runqlen's sampler, enabled by a reload, cannot
    start; the log says so and what to do, and a restart starts it."""
    assert guest.sh("cat /proc/sys/kernel/perf_event_paranoid").strip() == "3"
    since = guest_time(guest)
    guest.sh(f"sed -i 's/^runqlen = yes$/runqlen = no/' {CONF} && systemctl reload {UNIT}")
    wait_for("runqlen stopped", lambda: not collector_is_up(guest, "runqlen"))
    guest.sh(f"sed -i 's/^runqlen = no$/runqlen = yes/' {CONF} && systemctl reload {UNIT}")
    said = wait_for("the refusal", lambda: [m for p, m in journal(guest, since)
                                            if m.startswith("collector runqlen:")])
    assert said == ["collector runqlen: cannot open perf event cpu-clock 99 Hz on CPU 0: "
                    "Permission denied; run as root, or lower kernel.perf_event_paranoid; "
                    "tracekitd gave up its start-up privileges once attached: restart it "
                    "(systemctl restart tracekitd) to start this collector"], said
    assert value(scrape(guest), "tracekit_collector_up", collector="runqlen") == 0
    guest.sh(f"systemctl restart {UNIT}", timeout=300)
    assert value(scrape(guest), "tracekit_collector_up", collector="runqlen") == 1


def test_watchdog_is_kept(guest):
    """The shipped WatchdogSec: systemd sees a ping each half period,
    and never restarts it."""
    s = show(guest, "WatchdogUSec", "WatchdogTimestampMonotonic", "MainPID", "NRestarts")
    assert s["WatchdogUSec"] == "30s"
    seen = [int(s["WatchdogTimestampMonotonic"])]

    def new_ping():
        t = int(show(guest, "WatchdogTimestampMonotonic")["WatchdogTimestampMonotonic"])
        if t != seen[-1]:
            seen.append(t)
        return len(seen) >= 3

    wait_for("two watchdog pings", new_ping, timeout=90)
    assert 0 < seen[2] - seen[1] <= 30_000_000
    after = show(guest, "MainPID", "NRestarts")
    assert (after["MainPID"], after["NRestarts"]) == (s["MainPID"], s["NRestarts"])


def test_a_hung_daemon_is_killed_by_the_watchdog_and_restarted(guest):
    """What the pings are for: a daemon that stops (SIGSTOP) misses them.
    Shorter timers in a runtime drop-in, so that the test takes seconds."""
    guest.sh(f"mkdir -p {DROPIN} && printf '[Service]\\nWatchdogSec=10s\\n"
             f"TimeoutAbortSec=5s\\nRestartSec=1s\\n' > {DROPIN}/test-watchdog.conf && "
             f"systemctl daemon-reload && systemctl restart {UNIT}", timeout=300)
    try:
        restarted_after(guest, "kill -STOP {pid}", "Watchdog timeout")
    finally:
        guest.sh(f"rm -r {DROPIN} && systemctl daemon-reload && systemctl restart {UNIT}",
                 timeout=300)


def test_a_crash_restarts_it(guest):
    # RestartSec=5s, then the start.
    restarted_after(guest, f"systemctl kill -s SEGV {UNIT}", "status=11/SEGV")
    assert scrape(guest)


def test_journal_holds_its_lines_with_their_priorities(guest):
    lines = journal(guest)
    names = configured_collectors(guest)
    started = (5, f"{len(names)} collectors running ({' '.join(names)}); "
                  "metrics at http://127.0.0.1:9949/metrics")
    # Started by dpkg, by enable --now, by four restarts since.
    assert lines.count(started) >= 4, lines
    assert (5, "reloaded /etc/tracekit/tracekitd.conf") in lines
    assert (5, "stopped; all probes detached") in lines
    assert [p for p, m in lines if "perhaps" in m] == [4]
    # Nothing the journal records itself (the name) or should have
    # parsed (a priority prefix) is left in a message.
    assert not [m for p, m in lines if m.startswith(("tracekitd:", "<"))], lines


def held_bpf(guest):
    """Ids of the BPF programs and links tracekitd holds: its fds' fdinfo
    names them (prog_id, link_id)."""
    pid = show(guest, "MainPID")["MainPID"]
    out = guest.sh(f"grep -h '^prog_id:\\|^link_id:' /proc/{pid}/fdinfo/*")
    ids = {"prog_id": set(), "link_id": set()}
    for line in out.splitlines():
        k, v = line.split(":")
        ids[k].add(int(v))
    return ids["prog_id"], ids["link_id"]


def bpf_ids(guest, kind):
    return {o["id"] for o in json.loads(guest.sh(f"bpftool -j {kind} show"))}


def test_stop_leaves_no_bpf_program_or_link(guest):
    progs, links = held_bpf(guest)
    assert len(progs) >= len(configured_collectors(guest)), progs
    assert links, links
    assert progs <= bpf_ids(guest, "prog") and links <= bpf_ids(guest, "link")
    guest.sh(f"systemctl stop {UNIT}", timeout=120)
    assert guest.run(f"systemctl is-active {UNIT}").out.strip() == "inactive"
    # The kernel frees a program after an RCU grace period, not at once.
    wait_for("tracekitd's programs and links freed",
             lambda: not (bpf_ids(guest, "prog") & progs) and not (bpf_ids(guest, "link") & links),
             timeout=60)


# Unit options whose property in systemctl show has another name or form.
PROPERTY = {"WatchdogSec": "WatchdogUSec", "RestartSec": "RestartUSec",
            "TimeoutStopSec": "TimeoutStopUSec"}


def unit_options(guest):
    """[Service] of the installed unit: [(key, value)], in order."""
    text = guest.sh(f"cat $(systemctl show -P FragmentPath {UNIT})")
    section, out = None, []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line
        elif section == "[Service]":
            k, v = line.split("=", 1)
            out.append((k, v))
    return out


def as_shown(key, v):
    """key=v in the form systemctl show gives it: sizes in bytes, sets
    (which it prints in its own order and case) sorted and lower case."""
    if key == "MemoryMax" and v[-1:] in ("K", "M", "G"):
        return str(int(v[:-1]) << {"K": 10, "M": 20, "G": 30}[v[-1]])
    if key in ("CapabilityBoundingSet", "RestrictAddressFamilies"):
        return " ".join(sorted(v.lower().split()))
    return v


def test_every_unit_option_is_in_effect(guest):
    """Each option of the unit is one this systemd knows and applies (an
    unknown or misspelt one is only logged, and would protect nothing),
    and the sandbox is on the running daemon."""
    guest.sh(f"systemctl start {UNIT}", timeout=300)
    opts = unit_options(guest)
    keys = [PROPERTY.get(k, k) for k, _ in opts]
    shown = show(guest, *keys)
    for key, v in opts:
        prop = PROPERTY.get(key, key)
        assert prop in shown, f"{key}: systemctl show has no {prop}"
        got = shown[prop]
        if key in ("ExecStart", "ExecReload"):
            assert f"argv[]={v} ;" in got, (key, got)
        elif key == "SystemCallFilter":
            assert {"bpf", "perf_event_open", "mount", "read"} <= set(got.split()), got
        else:
            assert as_shown(key, got) == as_shown(key, v), (key, v, got)
    # systemd logs a key it does not know, or a value it cannot parse,
    # when it loads the unit.
    complaints = [line for line in guest.sh(
        "journalctl -b _PID=1 -o cat --no-pager").splitlines()
        if "tracekitd.service:" in line and ("nknown" in line or "parse" in line
                                              or "gnoring" in line)]
    assert not complaints, complaints
    pid = show(guest, "MainPID")["MainPID"]
    status = guest.sh(f"cat /proc/{pid}/status")
    field = dict(re.findall(r"^(\w+):\s+(.*)$", status, re.M))
    assert field["NoNewPrivs"] == "1"            # NoNewPrivileges
    assert field["Seccomp"] == "2"               # SystemCallFilter and the Restrict*
    mounts = {}
    for line in guest.sh(f"cat /proc/{pid}/mountinfo").splitlines():
        f = line.split()
        sep = f.index("-")
        # root, mount options, file system type, its super block's options
        mounts[f[4]] = (f[3], f[5].split(","), f[sep + 1], f[sep + 3].split(","))

    def inaccessible(point):
        return mounts[point][0].startswith("/systemd/inaccessible/")

    # What each file system option makes of the daemon's mounts.
    assert "ro" in mounts["/"][1]                                  # ProtectSystem=strict
    assert all(inaccessible(p) for p in ("/home", "/root", "/run/user"))   # ProtectHome
    assert re.fullmatch(r"/tmp/systemd-private-\w+-tracekitd.service-\w+/tmp",
                        mounts["/tmp"][0])                          # PrivateTmp
    assert mounts["/dev"][2] == "tmpfs"                             # PrivateDevices
    assert guest.run(f"ls /proc/{pid}/root/dev/vda").rc != 0         # (no disk in it)
    assert inaccessible("/proc/kmsg")                               # ProtectKernelLogs
    assert inaccessible("/usr/lib/modules")                         # ProtectKernelModules
    uts = guest.sh(f"readlink /proc/{pid}/ns/uts /proc/1/ns/uts").split()
    assert uts[0] != uts[1]                                         # ProtectHostname
    assert "ro" in mounts["/sys/fs/cgroup"][1]                      # ProtectControlGroups
    assert "ro" in mounts["/proc/sys"][1] and "ro" in mounts["/sys"][1]   # ProtectKernelTunables
    assert "hidepid=invisible" in mounts["/proc"][3], mounts["/proc"]   # ProtectProc


def readme_score():
    m = re.search(r"`systemd-analyze security tracekitd` rates it \*\*(\d+\.\d) (\w+)\*\*",
                  (ROOT / "README.md").read_text())
    assert m, "README states no systemd-analyze security score"
    return m.groups()


def test_security_exposure_is_the_one_the_readme_states(guest):
    out = guest.sh(f"systemd-analyze security --no-pager {UNIT}")
    m = re.search(r"Overall exposure level for tracekitd.service: (\d+\.\d) (\w+)", out)
    assert m, out
    assert m.groups() == readme_score(), out

