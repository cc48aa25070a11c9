"""execsnoop end to end: exec the test's own marker argv, check it exactly."""
import os
import signal
import subprocess
import sys
import tempfile
import uuid

import pytest

from conftest import ROOT, Tool, json_lines, loss_record, run


def marker():
    return "tkmark-" + uuid.uuid4().hex[:12]


def records_with(records, needle):
    return [r for r in records if r.get("type") == "exec" and needle in r["argv"]]


@pytest.mark.kernel
def test_exec_success_exact_argv_json():
    m = marker()
    with Tool("execsnoop", "-j") as t:
        child = subprocess.Popen(["/bin/true", m, "arg with space", ""])
        child.wait()
        out, err, rc = t.stop()
    assert rc == 0, err
    recs = json_lines(out)
    [r] = records_with(recs, m)
    assert r["argv"] == ["/bin/true", m, "arg with space", ""]
    assert r["argc"] == 4
    assert r["ret"] == 0
    assert r["pid"] == child.pid
    assert r["ppid"] == os.getpid()
    assert r["uid"] == 0
    assert r["comm"] == "true"
    assert r["args_truncated"] is False
    assert loss_record(recs) == {"type": "loss", "events_lost": 0, "map_inserts_failed": 0}


@pytest.mark.kernel
def test_exec_from_a_second_thread():
    """A thread other than the leader execs: the kernel gives it the
    leader's pid (de_thread), so the thread id seen at the syscall's entry
    is gone at sched_process_exec. The exec is still reported, once, with
    its argv and the process's pid."""
    m = marker()
    code = ("import os, sys, threading\n"
            "t = threading.Thread(target=os.execv, args=(sys.argv[1], sys.argv[1:]))\n"
            "t.start()\n"
            "t.join()\n")
    with Tool("execsnoop", "-j") as t:
        child = subprocess.Popen([sys.executable, "-c", code, "/bin/true", m, "two"])
        assert child.wait() == 0
        out, err, rc = t.stop()
    assert rc == 0, err
    recs = json_lines(out)
    # The python3 exec that started the child has the marker too.
    [r] = [r for r in records_with(recs, m) if r["argv"][0] == "/bin/true"]
    assert (r["argv"], r["ret"], r["pid"], r["comm"]) == (["/bin/true", m, "two"], 0,
                                                          child.pid, "true"), r
    assert loss_record(recs) == {"type": "loss", "events_lost": 0, "map_inserts_failed": 0}


@pytest.mark.kernel
def test_failed_exec_reports_enoent():
    m = marker()
    missing = f"/nonexistent-{m}/prog"
    with Tool("execsnoop", "-j") as t:
        with pytest.raises(FileNotFoundError):
            subprocess.Popen([missing, m, "second"])
        out, err, rc = t.stop()
    assert rc == 0, err
    [r] = records_with(json_lines(out), m)
    assert r["ret"] == -2
    assert r["error"] == "ENOENT"
    assert r["argv"] == [missing, m, "second"]


def test_text_columns_and_failed_only():
    ok, bad = marker(), marker()
    with Tool("execsnoop", "--failed-only") as t:
        subprocess.run(["/bin/true", ok])
        with pytest.raises(FileNotFoundError):
            subprocess.Popen([f"/nonexistent/{bad}", bad])
        out, err, rc = t.stop()
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["PCOMM", "PID", "PPID", "RET", "ARGS"]
    assert ok not in out
    [line] = [l for l in lines if bad in l]
    fields = line.split()
    assert fields[3] == "-2"
    assert fields[4:] == [f"/nonexistent/{bad}", bad]


def test_fails_flag_is_bccs_include_failed():
    """bcc's -x/--fails adds failed execs to the successful ones, which
    tracekit shows by default: both kinds are printed, as without it."""
    ok, bad = marker(), marker()
    for flag in ("-x", "--fails"):
        with Tool("execsnoop", "-j", flag) as t:
            subprocess.run(["/bin/true", ok])
            with pytest.raises(FileNotFoundError):
                subprocess.Popen([f"/nonexistent/{bad}", bad])
            out, err, rc = t.stop()
        assert rc == 0, err
        recs = json_lines(out)
        assert [r["ret"] for r in records_with(recs, ok)] == [0]
        assert [r["ret"] for r in records_with(recs, bad)] == [-2]


# A parent whose comm the test names, pinned to one CPU, that forks a
# child exec'ing ARGV once it reads a line: its own exec is long done when
# the tracer starts, so the child's exec is the only one it causes.
PARENT = r"""
import os, sys
with open("/proc/self/comm", "w") as f:
    f.write(sys.argv[1])
os.sched_setaffinity(0, {int(sys.argv[2])})
print("ready", flush=True)
sys.stdin.readline()
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[3], sys.argv[3:])
os.waitpid(pid, 0)
print(pid, flush=True)
"""


class Parent:
    def __init__(self, argv):
        self.comm = "tkpar-" + uuid.uuid4().hex[:8]
        self.cpu = max(os.sched_getaffinity(0))
        self.proc = subprocess.Popen(
            [sys.executable, "-c", PARENT, self.comm, str(self.cpu)] + argv,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline() == "ready\n"

    def go(self):
        """The child's exec; returns the child's pid."""
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()
        child = int(self.proc.stdout.readline())
        assert self.proc.wait() == 0
        return child


def quoted_argv(m):
    return ["/bin/true", m, 'say "hi" twice', "two words", ""]


@pytest.mark.kernel
def test_parent_comm_cpu_quote_and_ppid_columns():
    """-M -C -q -P together: bcc's column order COMM PID PCOMM PPID CPU
    RET ARGS, the parent's comm as it set it, the CPU it is pinned to,
    each argument in quotes with its own quotes as \", and only the
    children of -P's process (the test's own exec of the marker is not)."""
    m = marker()
    parent = Parent(quoted_argv(m))
    with Tool("execsnoop", "-M", "-C", "-q", "-P", parent.proc.pid) as t:
        subprocess.run(["/bin/true", m, "not a child of the parent"])
        child = parent.go()
        out, err, rc = t.stop()
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == "COMM             PID    PCOMM            PPID   CPU  RET ARGS"
    assert [l for l in lines[1:] if m in l] == [
        f"{'true':<16} {child:<6} {parent.comm:<16} {parent.proc.pid:<6} "
        f"{parent.cpu:<4}   0 "
        f'"/bin/true" "{m}" "say \\"hi\\" twice" "two words" ""']


def test_each_column_flag_alone_and_json_fields():
    m = marker()
    parent = Parent(quoted_argv(m))
    with Tool("execsnoop", "-j", "--ppid", parent.proc.pid) as t:
        child = parent.go()
        out, err, rc = t.stop()
    assert rc == 0, err
    # JSON carries ppid, pcomm and cpu always, like uid without -U.
    [r] = [r for r in json_lines(out) if r["type"] == "exec"]
    assert (r["pid"], r["ppid"], r["pcomm"], r["cpu"], r["argv"]) == (
        child, parent.proc.pid, parent.comm, parent.cpu, quoted_argv(m))

    for flags, header, cols in (
            (["-M"], "COMM             PID    PCOMM            PPID   RET ARGS",
             lambda c, p: f"{'true':<16} {c:<6} {p.comm:<16} {p.proc.pid:<6}   0 "),
            (["-C"], "PCOMM            PID    PPID   CPU  RET ARGS",
             lambda c, p: f"{'true':<16} {c:<6} {p.proc.pid:<6} {p.cpu:<4}   0 "),
            (["-q"], "PCOMM            PID    PPID   RET ARGS",
             lambda c, p: f"{'true':<16} {c:<6} {p.proc.pid:<6}   0 ")):
        parent = Parent(quoted_argv(m))
        with Tool("execsnoop", "--print-pcomm" if flags == ["-M"] else flags[0],
                  "-P", parent.proc.pid) as t:
            child = parent.go()
            out, err, rc = t.stop()
        assert rc == 0, err
        lines = out.splitlines()
        args = (f'"/bin/true" "{m}" "say \\"hi\\" twice" "two words" ""'
                if flags == ["-q"] else f'/bin/true {m} say "hi" twice two words ')
        assert lines == [header, cols(child, parent) + args], flags


def test_quote_keeps_control_bytes_escaped_and_truncation_mark():
    m = marker()
    args = ["/bin/true", m, 'a"b', "line\nbreak"] + [f"x{i}" for i in range(3)]
    with Tool("execsnoop", "--quote", "--max-args", "4", "-l", m) as t:
        subprocess.run(args)
        out, err, rc = t.stop()
    assert rc == 0, err
    [line] = [l for l in out.splitlines() if m in l]
    assert line.endswith(f'0 "/bin/true" "{m}" "a\\"b" "line\\x0abreak" ...')


@pytest.mark.kernel
def test_first_exec_of_untouched_argv_page(tmp_path):
    """The marker argument lives in a page the exec'ing program never
    touched; reading argv at sys_enter would miss it."""
    m = marker()
    prog = tmp_path / "fresh_exec"
    subprocess.run(["cc", "-O2", f'-DMARKER="{m}"', "-o", str(prog),
                    str(ROOT / "tests/e2e/progs/fresh_exec.c")], check=True)
    with Tool("execsnoop", "-j") as t:
        subprocess.run([str(prog), "/bin/true"], check=True)
        out, err, rc = t.stop()
    [r] = records_with(json_lines(out), m)
    assert r["argv"] == ["/bin/true", m]
    assert r["ret"] == 0


def test_json_escapes_any_argv_bytes():
    m = marker()
    weird = b"new\nline \"quoted\" back\\slash tab\t bell\x07 bad\xff\xfe end"
    with Tool("execsnoop", "-j", "-l", m) as t:
        subprocess.run([b"/bin/true", m.encode(), weird])
        out, err, rc = t.stop()
    [r] = records_with(json_lines(out), m)
    assert r["argv"][2] == 'new\nline "quoted" back\\slash tab\t bell\x07 bad\ufffd\ufffd end'


def test_text_escapes_control_bytes_one_line():
    m = marker()
    with Tool("execsnoop", "-l", m) as t:
        subprocess.run(["/bin/true", m, "two\nlines"])
        out, err, rc = t.stop()
    [line] = [l for l in out.splitlines() if m in l]
    assert line.endswith(f"/bin/true {m} two\\x0alines")


def test_line_filter_and_name_filter():
    m, other = marker(), marker()
    with Tool("execsnoop", "-j", "-l", m, "-n", "true") as t:
        subprocess.run(["/bin/true", m])
        subprocess.run(["/bin/true", other])
        subprocess.run(["/bin/echo", m], stdout=subprocess.DEVNULL)
        out, err, rc = t.stop()
    recs = [r for r in json_lines(out) if r["type"] == "exec"]
    assert [r["argv"] for r in recs] == [["/bin/true", m]]


@pytest.mark.kernel
def test_pid_filter_excludes_others():
    m = marker()
    # The filtered pid is a sleeping shell that execs /bin/true with the
    # marker once the tracer is ready; another process execs it too.
    rfd, wfd = os.pipe()
    shell = subprocess.Popen(["/bin/sh", "-c", f"read x; exec /bin/true {m} mine"],
                             stdin=rfd)
    os.close(rfd)
    with Tool("execsnoop", "-j", "-p", shell.pid) as t:
        subprocess.run(["/bin/true", m, "other"])
        os.write(wfd, b"go\n")
        shell.wait()
        out, err, rc = t.stop()
    os.close(wfd)
    recs = [r for r in json_lines(out) if r["type"] == "exec"]
    assert [r["argv"] for r in recs] == [["/bin/true", m, "mine"]]
    assert recs[0]["pid"] == shell.pid


@pytest.mark.kernel
def test_max_args_truncation_marked():
    m = marker()
    args = ["/bin/true", m] + [f"a{i}" for i in range(28)]  # 30 arguments
    with Tool("execsnoop", "-l", m) as t:
        subprocess.run(args)
        out, _, _ = t.stop()
    with Tool("execsnoop", "-j", "-l", m, "--max-args", "30") as t:
        subprocess.run(args)
        jout, _, _ = t.stop()
    [line] = [l for l in out.splitlines() if m in l]
    assert line.endswith(" ".join(args[:20]) + " ...")
    [r] = records_with(json_lines(jout), m)
    assert r["argv"] == args and r["argc"] == 30 and r["args_truncated"] is False


@pytest.mark.kernel
def test_argv_over_8192_bytes_is_truncated():
    m = marker()
    big = "x" * 5000
    with Tool("execsnoop", "-j", "-l", m, "--max-args", "10") as t:
        subprocess.run(["/bin/true", m, big, big, "last"])
        out, _, _ = t.stop()
    [r] = records_with(json_lines(out), m)
    assert r["argc"] == 5
    assert r["args_truncated"] is True
    assert r["argv"][:3] == ["/bin/true", m, big]
    # 8192 bytes of argv: the fourth argument is cut, "last" is gone.
    assert len("\0".join(r["argv"])) == 8192
    assert len(r["argv"]) == 4 and big.startswith(r["argv"][3])


@pytest.mark.kernel
def test_perf_buffer_transport_same_events():
    m = marker()
    with Tool("execsnoop", "-j", "-v", env={"TRACEKIT_TRANSPORT": "perf"}) as t:
        subprocess.run(["/bin/true", m])
        out, err, rc = t.stop()
    assert "event transport: perf buffer" in err
    [r] = records_with(json_lines(out), m)
    assert r["argv"] == ["/bin/true", m]


def test_sigterm_ends_cleanly_with_loss_record():
    with Tool("execsnoop", "-j") as t:
        out, err, rc = t.stop(signal.SIGTERM)
    assert rc == 0
    assert json_lines(out)[-1]["type"] == "loss"


def test_duration_ends_by_itself():
    r = run("execsnoop", "-d", "0.5")
    assert r.returncode == 0
    assert r.stdout.splitlines()[0].split() == ["PCOMM", "PID", "PPID", "RET", "ARGS"]


def test_time_and_uid_columns():
    m = marker()
    with Tool("execsnoop", "-T", "-U", "-l", m) as t:
        subprocess.run(["/bin/true", m])
        out, _, _ = t.stop()
    lines = out.splitlines()
    assert lines[0].split() == ["TIME", "UID", "PCOMM", "PID", "PPID", "RET", "ARGS"]
    [line] = [l for l in lines if m in l]
    f = line.split()
    assert len(f[0]) == 8 and f[0][2] == ":" and f[1] == "0" and f[2] == "true"


@pytest.mark.parametrize("user", ["nobody", "65534"])
@pytest.mark.kernel
def test_uid_filter_by_name_or_number(user):
    """-u takes a user name, as bcc's execsnoop does, or a UID: of two
    execs of the marker, one as root and one as nobody, only nobody's."""
    m = marker()
    with Tool("execsnoop", "-j", "-u", user, "-l", m) as t:
        subprocess.run(["/bin/true", m, "root"], check=True)
        subprocess.run(["/bin/true", m, "nobody"], check=True, user=65534, group=65534,
                       extra_groups=[])
        out, err, rc = t.stop()
    assert rc == 0, err
    execs = records_with(json_lines(out), m)
    assert [(r["argv"], r["uid"]) for r in execs] == [(["/bin/true", m, "nobody"], 65534)]


def test_sigpipe_ends_quietly():
    m = marker()
    t = Tool("execsnoop", "-l", m).start()
    t.proc.stdout.readline()   # the header
    t.proc.stdout.close()      # the reader goes away, like `| head -1`
    subprocess.run(["/bin/true", m])
    subprocess.run(["/bin/true", m])
    rc = t.proc.wait(timeout=20)
    err = t.proc.stderr.read()
    assert rc == -signal.SIGPIPE
    assert err == b""


@pytest.mark.kernel
def test_mounts_tracefs_when_missing():
    """In a mount namespace without tracefs (nor debugfs, whose tracing/
    directory would do), execsnoop mounts it at /sys/kernel/tracing."""
    script = ("umount /sys/kernel/tracing 2>/dev/null; "
              "umount -l /sys/kernel/debug 2>/dev/null; "
              "grep -q ' tracefs ' /proc/self/mounts && exit 99; exec \"$@\"")
    wrapper = ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh"]
    m = marker()
    with Tool("execsnoop", "-j", wrapper=wrapper) as t:
        with open(f"/proc/{t.proc.pid}/mounts") as f:
            mounts = [l.split()[1:3] for l in f]
        subprocess.run(["/bin/true", m])
        out, err, rc = t.stop()
    assert rc == 0, err
    assert ["/sys/kernel/tracing", "tracefs"] in mounts
    assert len(records_with(json_lines(out), m)) == 1


@pytest.mark.parametrize("args,needle", [
    (["--max-args", "0"], "--max-args"),
    (["--max-args", "x"], "--max-args"),
    (["-p", "abc"], "--pid"),
    (["-u", "-1"], "--uid"),
    (["-d", "0"], "--duration"),
    (["--bogus"], "--bogus"),
    (["-Z"], "-Z"),
    (["-l"], "-l"),
    (["-c", "/nonexistent-cgroup"], "--cgroup"),
    (["-n", "a-name-longer-than-15"], "--name"),
    (["-P", "abc"], "--ppid"),
    (["-P", "0"], "--ppid"),
    (["-P"], "-P"),
    (["--ppid", "-3"], "--ppid"),
    (["stray"], "stray"),
])
def test_usage_errors_exit_2_one_line(args, needle):
    r = run("execsnoop", *args)
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("execsnoop: ")
    assert needle in lines[0]
    assert "--help" in lines[0]


def test_help_states_limits_and_examples():
    r = run("execsnoop", "--help")
    assert r.returncode == 0
    assert "8192 bytes" in r.stdout and "Examples:" in r.stdout
    assert "--max-args" in r.stdout and "--json" in r.stdout


@pytest.mark.kernel
def test_full_buffer_losses_reported():
    """A 4 KiB ring buffer cannot hold an exec event with 6000 bytes of
    argv: each is dropped in the kernel, counted, and reported at exit."""
    m = marker()
    big = "y" * 6000
    with Tool("execsnoop", "--buffer-kb", "4", "-l", m) as t:
        for _ in range(3):
            subprocess.run(["/bin/true", m, big])
        out, err, rc = t.stop()
    assert rc == 0
    assert m not in out
    [line] = err.splitlines()
    assert line.startswith("execsnoop: lost ") and "raise --buffer-kb (now 4)" in line
    assert int(line.split()[2]) >= 3
    with Tool("execsnoop", "-j", "--buffer-kb", "4", "-l", m) as t:
        for _ in range(3):
            subprocess.run(["/bin/true", m, big])
        out, err, rc = t.stop()
    loss = loss_record(json_lines(out))
    assert loss["events_lost"] >= 3 and err == ""
