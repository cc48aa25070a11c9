"""TOOL -- COMMAND (libtrace/command.c), -o FILE and --unit NAME, common to
every tool: COMMAND is traced from its execve to its exit with all its
descendants and nothing else, checked against strace where strace answers
the same question."""
import errno
import os
import signal
import socket
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

from conftest import ALL_TOOLS, Tool, cgroup2_root, doctor, json_lines, own_cgroup, run, tool_path
from perfhw import has_cache_counters, has_cpufreq

# The arguments each tool needs besides -- COMMAND.
TOOL_ARGS = {"funclatency": ["c:getpid"], "stackcount": ["c:getpid"],
             "funccount": ["c:getpid"], "trace": ["u:c:getpid"],
             "argdist": ["-C", "u:c:getpid"], "fsslower": ["-t", "ext4"],
             "fsdist": ["-t", "ext4"]}
# Tools that count per disk or per network device, not per task:
# -- COMMAND is a usage error there (test_biopattern.py, test_netqtop.py).
NO_COMMAND = {"biopattern", "netqtop"}
NO_COMMAND |= {"tcpsynbl"}   # per listener, in softirq: no task
# Retransmits and RTT samples are made in softirq and timers: no task filter.
NO_COMMAND |= {"tcpretrans", "tcprtt"}
# Interrupts are no task's (test_hardirqs.py, test_softirqs.py).
NO_COMMAND |= {"hardirqs", "softirqs"}
KERNEL_FUNCTION_TOOLS = {"vfsstat", "cachestat"}
# Tools that need hardware besides BPF: where it is missing they exit 1
# with one line before COMMAND runs (test_llcstat.py, test_cpufreq.py).
HARDWARE_TOOLS = {"llcstat": has_cache_counters, "cpufreq": has_cpufreq}


@pytest.fixture
def workdir(tmp_path):
    (tmp_path / "present").write_text("contents\n")
    return tmp_path


# How COMMAND's tree is told apart: its own cgroup (the default), or its
# forks followed in BPF (where cgroup v2 cannot be written).
FILTERS = ["cgroup", "fork"]


def filter_env(how):
    return dict(os.environ, TRACEKIT_COMMAND_FILTER=how)


def run_command_tool(tool, *args, how="cgroup"):
    """Run a tool to completion as run() does, and check that it left no
    transient cgroup behind (tracekit-TOOL-PID, beside the test's own
    cgroup or at the root). Other tools may be running -- COMMAND at the
    same time: only this one's PID is looked for."""
    p = subprocess.Popen([tool_path(tool), *map(str, args)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=filter_env(how))
    out, err = p.communicate(timeout=120)
    with open("/proc/self/cgroup") as f:
        own = [l[3:].strip() for l in f if l.startswith("0::")][0]
    root = cgroup2_root()
    for parent in (root + own.rstrip("/"), root):
        assert not os.path.exists(f"{parent}/tracekit-{tool}-{p.pid}")
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def require_kernel_functions():
    features = doctor()["features"]
    if not (features["fentry"]["ok"] or features["kprobes"]["ok"]):
        pytest.skip("this kernel traces no kernel function (no kprobes, fentry refused); "
                    "make check-vm runs it under other kernels")


def strace_table(text):
    """{syscall: (calls, errors)} from a strace -c table (syscount -S
    prints the same one)."""
    rows = {}
    lines = text.splitlines()
    dashes = [i for i, line in enumerate(lines) if line.startswith("------")]
    for line in lines[dashes[0] + 1:dashes[1]]:
        f = line.split()
        name, calls = f[-1], int(f[3])
        errors = int(f[4]) if len(f) == 6 else 0
        rows[name] = (calls, errors)
    return rows


@pytest.mark.parametrize("how", FILTERS)
@pytest.mark.kernel
def test_syscount_summary_equals_strace_c(how, cmdtree_static, workdir, tmp_path):
    """Every syscall of a tree that forks, execs, runs a thread and fails
    some calls on purpose: the same calls and errors as strace -f -c."""
    ours, theirs = tmp_path / "syscount.out", tmp_path / "strace.out"
    r = run_command_tool("syscount", "-S", "-o", ours, "--", cmdtree_static, "work", workdir,
                         how=how)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    s = subprocess.run(["strace", "-f", "-c", "-o", str(theirs), cmdtree_static, "work",
                        str(workdir)], capture_output=True, text=True)
    assert s.returncode == 0, s.stderr
    expected = strace_table(theirs.read_text())
    # The workload's own: two execs, five missing files, two close(-1).
    assert expected["execve"] == (2, 0) and expected["openat"][1] == 5, expected
    assert expected["close"][1] == 2, expected
    assert strace_table(ours.read_text()) == expected


def strace_opens(prefix):
    """{tid: [(path, result)]} from strace -ff -o PREFIX: one file per
    thread, so no line is split by another thread's."""
    opens = {}
    for f in Path(prefix).parent.glob(Path(prefix).name + ".*"):
        seq = []
        for line in f.read_text().splitlines():
            if not line.startswith(("open(", "openat(", "openat2(")):
                continue
            path = line.split('"')[1]
            result = line.rsplit(" = ", 1)[1].split()
            ret = int(result[0])
            seq.append((path, ret if ret >= 0 else -getattr(errno, result[1])))
        opens[int(f.suffix[1:])] = seq
    return opens


@pytest.mark.parametrize("how", FILTERS)
@pytest.mark.kernel
def test_opensnoop_equals_strace(how, cmdtree, workdir, tmp_path):
    """The same paths with the same results, in the same order in each
    thread, as strace -f -e trace=open,openat,openat2."""
    out = tmp_path / "opensnoop.json"
    r = run_command_tool("opensnoop", "-j", "-o", out, "--", cmdtree, "work", workdir,
                         how=how)
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    ours = defaultdict(list)
    records = json_lines(out.read_text())
    assert records[-1] == {"type": "loss", "events_lost": 0, "map_inserts_failed": 0,
                            "runs_missed": 0}
    for rec in records[:-1]:
        ours[rec["tid"]].append((rec["path"], rec["ret"]))
    prefix = tmp_path / "strace"
    s = subprocess.run(["strace", "-f", "-ff", "-qq", "-s", "4096", "-e",
                        "trace=open,openat,openat2", "-o", str(prefix), cmdtree, "work",
                        str(workdir)], capture_output=True, text=True)
    assert s.returncode == 0, s.stderr
    theirs = strace_opens(prefix)
    # Thread ids differ between the two runs: compare the threads' lists.
    assert sorted(ours.values()) == sorted(v for v in theirs.values() if v)
    assert sum(p.endswith("/present") for v in ours.values() for p, _ in v) == 4


def released_command(tool, outfile, *extra, how="cgroup"):
    """Run tool -j -o OUTFILE [extra] -- sh (which says "started", waits
    for a line on stdin, then execs /bin/true inside); while it waits, a
    process outside its tree execs /bin/true outside. Returns the tool's
    result and its records."""
    script = "echo started; read x; /bin/true inside"
    p = subprocess.Popen([tool_path(tool), "-j", "--output", str(outfile), *extra, "--", "sh",
                          "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=filter_env(how))
    try:
        assert p.stdout.readline() == "started\n"
        subprocess.run(["/bin/true", "outside"], check=True)
        out, err = p.communicate("go\n", timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    return p.returncode, out, err, json_lines(outfile.read_text())


@pytest.mark.parametrize("how", FILTERS)
@pytest.mark.kernel
def test_execsnoop_shows_exactly_the_tree(how, tmp_path):
    """COMMAND's own exec is the first event, then its children's; an exec
    outside the tree made while it runs is not shown. stdin and stdout
    pass through to COMMAND."""
    rc, out, err, records = released_command("execsnoop", tmp_path / "out.json", how=how)
    assert (rc, out, err) == (0, "", "")
    assert [r["argv"] for r in records[:-1]] == [
        ["sh", "-c", "echo started; read x; /bin/true inside"], ["/bin/true", "inside"]]
    assert records[-1]["type"] == "loss" and records[-1]["events_lost"] == 0


def test_all_shows_every_process_while_command_runs(tmp_path):
    rc, out, err, records = released_command("execsnoop", tmp_path / "out.json", "--all")
    assert (rc, out, err) == (0, "", "")
    argvs = [r["argv"] for r in records[:-1]]
    # Every process's execs: another's may come before COMMAND's own (the
    # disk writer's dd of issue 12's loaded series did). COMMAND's exec,
    # then the outsider's (made once COMMAND has started), then its
    # child's.
    own = ["sh", "-c", "echo started; read x; /bin/true inside"]
    assert own in argvs and ["/bin/true", "outside"] in argvs and ["/bin/true", "inside"] in argvs
    assert argvs.index(own) < argvs.index(["/bin/true", "outside"]) < \
        argvs.index(["/bin/true", "inside"])


@pytest.mark.parametrize("how", FILTERS)
@pytest.mark.kernel
def test_double_forked_daemon_is_counted_an_outsider_is_not(how, cmdtree, tmp_path):
    """A daemon COMMAND double-forks (setsid) makes N sched_yield calls:
    counted N, while a process outside the tree makes the same call all
    along. The daemon outlives COMMAND: it keeps running, moved back to
    the tool's cgroup, and the transient cgroup is gone."""
    n = 1234
    outsider = subprocess.Popen([cmdtree, "yield"])
    out = tmp_path / "out.json"
    try:
        r = run_command_tool("syscount", "-j", "--syscall", "sched_yield", "-o", out,
                             "--", cmdtree, "daemon", n, how=how)
        assert (r.returncode, r.stderr) == (0, "")
        daemon = int(r.stdout)
        try:
            records = json_lines(out.read_text())
            assert [(x["syscall"], x["count"]) for x in records[:-1]] == [("sched_yield", n)]
            assert records[-1]["events_lost"] == 0
            assert os.path.exists(f"/proc/{daemon}")
            with open(f"/proc/{daemon}/cgroup") as f:
                daemon_cg = [l for l in f.read().splitlines() if l.startswith("0::")]
            with open("/proc/self/cgroup") as f:
                own_cg = [l for l in f.read().splitlines() if l.startswith("0::")]
            assert daemon_cg == own_cg
        finally:
            os.kill(daemon, signal.SIGKILL)
    finally:
        outsider.kill()
        outsider.wait()


@pytest.mark.parametrize("how", FILTERS)
@pytest.mark.parametrize("tool", sorted(set(ALL_TOOLS) - NO_COMMAND))
def test_every_tool_ends_with_command_and_its_status(tool, how, cmdtree, tmp_path):
    """Each tool runs COMMAND, ends when it exits with its status, and
    writes its final output (the loss record last) to -o FILE."""
    if tool in KERNEL_FUNCTION_TOOLS:
        require_kernel_functions()
    if tool in HARDWARE_TOOLS and not HARDWARE_TOOLS[tool]():
        pytest.skip(f"{tool} needs hardware this machine lacks (test_{tool}.py checks its one line)")
    out = tmp_path / "out.json"
    # --output: the long name is every tool's (memleak's -o is bcc's
    # --older-than).
    r = run_command_tool(tool, "-j", "--output", out, *TOOL_ARGS.get(tool, []), "--", "sh", "-c",
                         f"{cmdtree} getpid 7; echo to-stdout; echo to-stderr >&2; exit 3",
                         how=how)
    assert (r.returncode, r.stdout, r.stderr) == (3, "to-stdout\n", "to-stderr\n")
    records = json_lines(out.read_text())
    assert records[-1]["type"] == "loss" and records[-1]["events_lost"] == 0


@pytest.mark.parametrize("how", FILTERS)
@pytest.mark.parametrize("tool, args, key", [
    ("funclatency", ["c:getpid"], lambda rs: [r["total"] for r in rs
                                              if r["type"] == "histogram"]),
    ("stackcount", ["c:getpid"], lambda rs: [r["value"] for r in rs if r["type"] == "stack"]),
    ("syscount", ["--syscall", "getpid"], lambda rs: [r["count"] for r in rs
                                                      if r["type"] == "syscall"]),
])
@pytest.mark.kernel
def test_counts_only_the_command(tool, args, key, how, cmdtree, tmp_path):
    """Uprobes attach to every process, syscalls are everyone's: the
    transient cgroup keeps exactly COMMAND's calls, with a process outside
    making the same ones all along."""
    outsider = subprocess.Popen(["sh", "-c", f"while :; do {cmdtree} getpid 50; done"])
    try:
        out = tmp_path / "out.json"
        r = run_command_tool(tool, "-j", "--output", out, *args, "--", cmdtree, "getpid", 777,
                             how=how)
        assert (r.returncode, r.stderr) == (0, "")
        assert key(json_lines(out.read_text())) == [777]
    finally:
        outsider.kill()
        outsider.wait()


@pytest.mark.kernel
def test_tcpconnect_sees_the_commands_connect():
    """On the kernel's first method: the tracepoint where it has one."""
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(4)
        port = srv.getsockname()[1]
        outsider = socket.create_connection(("127.0.0.1", port))
        r = run("tcpconnect", "-j", "--", "python3", "-c",
                f"import socket; socket.create_connection(('127.0.0.1', {port})).close()")
        outsider.close()
    assert (r.returncode, r.stderr) == (0, "")
    records = json_lines(r.stdout)
    assert [(x["daddr"], x["dport"]) for x in records[:-1]] == [("127.0.0.1", port)]


def test_sigint_goes_to_command_and_ends_both(tmp_path):
    """kill -INT to the tool: COMMAND gets it too, the tool prints its
    final output and exits as COMMAND did (128+2)."""
    p = subprocess.Popen([tool_path("execsnoop"), "-j", "--", "sleep", "1000"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = p.stdout.readline()
        assert '"argv":["sleep","1000"]' in first, first
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert (p.returncode, err) == (128 + signal.SIGINT, "")
    assert json_lines(out)[-1]["type"] == "loss"


@pytest.mark.parametrize("script, status", [
    ("exit 0", 0), ("exit 7", 7), ("kill -TERM $$", 128 + signal.SIGTERM),
    ("kill -KILL $$", 128 + signal.SIGKILL),
])
def test_exit_status_is_the_commands(script, status):
    r = run("opensnoop", "-j", "--", "sh", "-c", script)
    assert (r.returncode, r.stderr) == (status, "")


def test_run_as_user(tmp_path):
    out = tmp_path / "out.json"
    r = run("execsnoop", "-j", "-o", out, "--run-as", "nobody", "--", "id", "-u")
    nobody = int(subprocess.run(["id", "-u", "nobody"], capture_output=True,
                                text=True).stdout)
    assert (r.returncode, r.stdout, r.stderr) == (0, f"{nobody}\n", "")
    (rec,) = json_lines(out.read_text())[:-1]
    assert (rec["argv"], rec["uid"]) == (["id", "-u"], nobody)


@pytest.mark.kernel
def test_run_as_user_has_none_of_the_tools_capabilities():
    r = run("execsnoop", "-o", "/dev/null", "--run-as", "nobody", "--", "grep",
            "^Cap[IPEA]", "/proc/self/status")
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout.split() == ["CapInh:", "0" * 16, "CapPrm:", "0" * 16, "CapEff:", "0" * 16,
                                "CapAmb:", "0" * 16]


@pytest.mark.parametrize("command, status, words", [
    (["no-such-command-tk"], 127, "cannot run 'no-such-command-tk': command not found"),
    (["/no/such/file"], 127, "cannot run '/no/such/file': No such file or directory"),
    (["/etc/passwd"], 126, "cannot run '/etc/passwd': Permission denied"),
    (["/etc"], 126, "cannot run '/etc': Is a directory"),
])
def test_command_that_cannot_run(command, status, words):
    r = run_command_tool("execsnoop", "--", *command)
    assert (r.returncode, r.stdout, r.stderr) == (status, "", f"execsnoop: {words}\n")


@pytest.mark.parametrize("args, words", [
    (["-p", "1", "--", "true"], "-p, --tid and --ppid do not go with -- COMMAND"),
    (["--tid", "1", "--", "true"], "-p, --tid and --ppid do not go with -- COMMAND"),
    (["--all"], "--all goes with -- COMMAND"),
    (["-a"], "--all goes with -- COMMAND"),
    (["--run-as", "nobody"], "--run-as goes with -- COMMAND"),
    (["--run-as", "no-such-user-tk", "--", "true"], "invalid --run-as value 'no-such-user-tk'"),
    (["--"], "'--' must be followed by a COMMAND"),
    (["--dry-run", "--", "true"], "--dry-run does not run COMMAND"),
    (["--cgroup", "/sys", "--", "true"], "--cgroup and --unit go with -- COMMAND only with --all"),
    (["-o", "", "--", "true"], "invalid --output value ''"),
    (["--unit", "no-such-unit-tk"], "no systemd unit 'no-such-unit-tk.service' has a cgroup"),
    (["--unit", "a/b"], "invalid --unit value 'a/b'"),
])
def test_usage_errors(args, words):
    r = run("opensnoop", *args)
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr.startswith(f"opensnoop: {words}") and r.stderr.count("\n") == 1, r.stderr


def test_a_dash_dash_that_is_an_options_value_is_not_command():
    """-n -- names the comm "--"; the second -- starts COMMAND."""
    r = run("execsnoop", "-j", "-n", "--", "--", "true")
    assert (r.returncode, r.stderr) == (0, "")
    assert [x["type"] for x in json_lines(r.stdout)] == ["loss"]


def test_output_file_that_cannot_be_written():
    r = run("opensnoop", "-o", "/no/such/dir/out", "--", "true")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == ("opensnoop: cannot write '/no/such/dir/out': "
                        "No such file or directory\n")


def test_output_without_command(tmp_path):
    """-o on its own: the whole output, header first, in FILE."""
    out = tmp_path / "out.txt"
    marker = tmp_path / "output-marker"
    marker.write_text("x")
    with Tool("opensnoop", "-o", out) as tool:
        with open(marker):
            pass
        stdout, stderr, rc = tool.stop()
    assert (rc, stdout, stderr) == (0, "", "")
    lines = out.read_text().splitlines()
    assert lines[0].split() == ["PID", "COMM", "FD", "ERR", "PATH"]
    assert sum(line.endswith(str(marker)) for line in lines) == 1


@pytest.mark.kernel
def test_unit_filters_by_the_units_cgroup(cmdtree, tmp_path):
    """--unit NAME: only tasks in the unit's cgroup, found by name under
    the cgroup v2 hierarchy (no suffix: .service)."""
    unit = f"tk-test-{os.getpid()}"
    cg = Path(cgroup2_root()) / "tracekit-test.slice" / f"{unit}.service"
    cg.mkdir(parents=True)
    marker = tmp_path / "unit-marker"
    marker.write_text("x")
    try:
        with Tool("opensnoop", "-j", "--unit", unit) as tool:
            inside = subprocess.run(
                ["sh", "-c", f'echo $$ > {cg}/cgroup.procs && exec cat {marker} {marker}'],
                capture_output=True, text=True)
            subprocess.run(["cat", str(marker)], check=True, capture_output=True)
            out, err, rc = tool.stop()
        assert inside.returncode == 0, inside.stderr
        assert (rc, err) == (0, "")
        paths = [r["path"] for r in json_lines(out)[:-1]]
        assert paths.count(str(marker)) == 2
    finally:
        cg.rmdir()
        cg.parent.rmdir()


def test_print_cgroup_names_the_transient_cgroup():
    """--print-cgroup: COMMAND's tasks are in tracekit-TOOL-PID, beside
    the cgroup the tool was started in."""
    p = subprocess.Popen([tool_path("execsnoop"), "-j", "--print-cgroup", "--", "sh", "-c",
                          "/bin/true x"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    out, err = p.communicate(timeout=120)
    assert (p.returncode, err) == (0, "")
    expected = own_cgroup().rstrip("/") + f"/tracekit-execsnoop-{p.pid}"
    assert [(r["argv"][0], r["cgroup"]) for r in json_lines(out)[:-1]] == [
        ("sh", expected), ("/bin/true", expected)]


def test_print_cgroup_text_column(tmp_path):
    """Without COMMAND: an exec in a cgroup the test makes shows its path
    in the CGROUP column, before ARGS."""
    name = f"tk-print-cgroup-{os.getpid()}"
    cg = Path(cgroup2_root()) / name
    cg.mkdir()
    try:
        with Tool("execsnoop", "--print-cgroup", "-n", "true") as tool:
            subprocess.run(["sh", "-c", f"echo $$ > {cg}/cgroup.procs && exec /bin/true {name}"],
                           check=True)
            out, err, rc = tool.stop()
    finally:
        cg.rmdir()
    assert (rc, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].split() == ["PCOMM", "PID", "PPID", "RET", "CGROUP", "ARGS"]
    (line,) = [l for l in lines if l.endswith(f"/bin/true {name}")]
    assert line.split()[4] == f"/{name}"
    assert lines[0].index("CGROUP") == line.index(f"/{name}")


@pytest.mark.parametrize("how, says", [
    ("cgroup", "execsnoop: COMMAND runs in the transient cgroup "),
    ("fork", "execsnoop: COMMAND's processes are followed through fork in BPF\n"),
])
def test_verbose_says_how_command_is_followed(how, says):
    r = run_command_tool("execsnoop", "-v", "--", "true", how=how)
    assert r.returncode == 0, r.stderr
    assert says in r.stderr


def test_bad_command_filter_setting():
    r = run("execsnoop", "--", "true", env={"TRACEKIT_COMMAND_FILTER": "pid"})
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == "execsnoop: TRACEKIT_COMMAND_FILTER=pid: expected cgroup or fork\n"


@pytest.mark.kernel
def test_cgroup_left_by_a_killed_tool_is_removed():
    """A tool killed outright leaves its empty transient cgroup; the next
    tool that runs a COMMAND removes those of tools that are gone, and
    leaves another PID namespace's (its PIDs mean something else)."""
    gone = subprocess.run(["sh", "-c", "echo $$"], capture_output=True, text=True)
    pid = int(gone.stdout)
    home = Path(cgroup2_root() + own_cgroup().rstrip("/"))
    stale, other_ns = home / f"tracekit-execsnoop-{pid}", home / f"tracekit-execsnoop-{pid}.7"
    stale.mkdir()
    other_ns.mkdir()
    try:
        r = run_command_tool("execsnoop", "-v", "--", "true")
        assert r.returncode == 0, r.stderr
        assert f"removed {stale}, left by a tool that was killed" in r.stderr
        assert not stale.exists() and other_ns.exists()
    finally:
        for d in (stale, other_ns):
            if d.exists():
                d.rmdir()
