"""A tool started in a PID namespace (unshare --pid --fork --mount-proc, as
in a container) shows and takes that namespace's PIDs (bpf/tk_pidns.bpf.h,
libtrace/pidns.c); a task outside it shows as PID 0. In a fresh namespace
the PIDs are known in advance: the tool is 1, its COMMAND 2, and so on."""
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import json_lines, run, tool_path

UNSHARE = ["unshare", "--pid", "--fork", "--mount-proc"]


def in_pidns(*argv, env=None, **kw):
    return subprocess.run([*UNSHARE, *map(str, argv)], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, **(env or {})), **kw)


@pytest.mark.parametrize("how", ["cgroup", "fork"])
@pytest.mark.kernel
def test_execsnoop_shows_the_namespaces_pids(how):
    r = in_pidns(tool_path("execsnoop"), "-j", "--", "sh", "-c", "/bin/true x",
                 env={"TRACEKIT_COMMAND_FILTER": how})
    assert (r.returncode, r.stderr) == (0, "")
    records = json_lines(r.stdout)
    assert [(x["argv"], x["pid"], x["ppid"], x["pcomm"]) for x in records[:-1]] == [
        (["sh", "-c", "/bin/true x"], 2, 1, "execsnoop"), (["/bin/true", "x"], 3, 2, "sh")]


@pytest.mark.kernel
def test_syscount_per_process_keys_by_the_namespaces_pid(cmdtree):
    r = in_pidns(tool_path("syscount"), "-P", "-j", "--", cmdtree, "getpid", 5)
    assert (r.returncode, r.stderr) == (0, "")
    assert [(x["pid"], x["comm"]) for x in json_lines(r.stdout)[:-1]] == [(2, "cmdtree")]


@pytest.mark.kernel
def test_runqlat_per_process_and_offcputime_see_the_namespaces_pids():
    """The woken task is not current: its PID is read from its struct pid
    at the namespace's level."""
    r = in_pidns(tool_path("runqlat"), "-P", "-j", "--", "sh", "-c", "sleep 0.01; sleep 0.01")
    assert (r.returncode, r.stderr) == (0, "")
    pids = {x["pid"] for x in json_lines(r.stdout)[:-1]}
    assert {3, 4} <= pids <= {2, 3, 4}, pids
    r = in_pidns(tool_path("offcputime"), "-j", "--", "sh", "-c", "sleep 0.01")
    assert (r.returncode, r.stderr) == (0, "")
    pids = {(x["pid"], x["tid"]) for x in json_lines(r.stdout)[:-1]}
    assert (3, 3) in pids and pids <= {(2, 2), (3, 3)}, pids


# Runs as PID 1 of the namespace: opensnoop -p 1 is started, then this
# process opens MARKER 3 times and a child of it twice.
PID_FILTER_SCRIPT = textwrap.dedent("""
    import os, select, subprocess, signal, sys
    tool, marker = sys.argv[1:3]
    r, w = os.pipe()
    p = subprocess.Popen([tool, "-j", "-p", "1"], stdout=subprocess.PIPE,
                         env=dict(os.environ, TRACEKIT_READY_FD=str(w)), pass_fds=(w,))
    os.close(w)
    assert select.select([r], [], [], 60)[0] and os.read(r, 16) == b"ready\\n"
    for _ in range(3):
        open(marker).close()
    subprocess.run([sys.executable, "-c", f"open({marker!r}).close(); open({marker!r}).close()"],
                   check=True)
    p.send_signal(signal.SIGINT)
    sys.stdout.write(p.communicate(timeout=60)[0].decode())
""")


@pytest.mark.kernel
def test_pid_filter_takes_the_namespaces_pid(tmp_path):
    marker = tmp_path / "pidns-marker"
    marker.write_text("x")
    r = in_pidns(sys.executable, "-c", PID_FILTER_SCRIPT, tool_path("opensnoop"), marker)
    assert r.returncode == 0, r.stderr
    opens = [(x["pid"], x["tid"]) for x in json_lines(r.stdout)[:-1]
             if x["path"] == str(marker)]
    assert opens == [(1, 1)] * 3


@pytest.mark.kernel
def test_task_outside_the_namespace_shows_as_pid_0(tmp_path):
    """With --all, an open by a process outside the namespace (this test)
    is shown, with PID 0: it has no PID in there."""
    marker = tmp_path / "outside-marker"
    marker.write_text("x")
    out = tmp_path / "out.json"
    p = subprocess.Popen([*UNSHARE, tool_path("opensnoop"), "-j", "--all", "-o", str(out),
                          "--", "sh", "-c", "echo started; read x"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline() == "started\n"
        open(marker).close()
        _, err = p.communicate("go\n", timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert (p.returncode, err) == (0, "")
    opens = [(x["pid"], x["tid"]) for x in json_lines(out.read_text())[:-1]
             if x["path"] == str(marker)]
    assert opens == [(0, 0)]


def test_help_says_what_pids_mean():
    r = run("opensnoop", "--help")
    assert "In a PID namespace" in r.stdout and "shows as PID 0" in r.stdout
