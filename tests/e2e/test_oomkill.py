"""oomkill end to end: a process the test starts in a memory cgroup of its
own, limited to 32 MiB, touches 256 MiB of anonymous memory and is
OOM-killed; the tool must report it as both trigger and victim, with its
name, its memory cgroup and (where the kernel passes the victim's task,
6.8 and later) pages of at least its limit."""
import os
import re
import signal
import subprocess
import uuid

import pytest

from conftest import Tool, json_lines, loss_record, run
from memcg import MemCgroup

LIMIT = 32 << 20

# Named argv[1]; says "ready" and waits for a line, then touches 256 MiB
# a page at a time until the OOM killer ends it.
HOG = r"""
import ctypes, sys
ctypes.CDLL(None).prctl(15, sys.argv[1].encode(), 0, 0, 0)
print("ready", flush=True)
sys.stdin.readline()
b = bytearray(256 << 20)
for i in range(0, len(b), 4096):
    b[i] = 1
print("survived", flush=True)
"""


def killed_in_cgroup(comm, tool_args):
    cg = MemCgroup("tk-oom", LIMIT, hard=True)
    try:
        hog = cg.start(["/usr/bin/python3", "-c", HOG, comm])
        assert hog.stdout.readline() == "ready\n"
        with Tool("oomkill", *tool_args) as t:
            hog.stdin.write("\n")
            hog.stdin.flush()
            assert hog.wait(timeout=300) == -signal.SIGKILL, hog.stdout.read()
            out, err, rc = t.stop()
    finally:
        if hog.poll() is None:
            hog.kill()
            hog.wait()
        cg.remove()
    assert rc == 0, err
    return hog.pid, cg, out


def kernel_report(pid):
    """The kernel's own line for the kill (dmesg): "Killed process PID
    (COMM) total-vm:..kB, anon-rss:AkB, file-rss:FkB, shmem-rss:SkB, ...",
    and its oom-kill line's task_memcg; ((A + F + S) kB, memcg)."""
    log = subprocess.run(["dmesg"], capture_output=True, text=True, check=True).stdout
    (killed,) = re.findall(rf"Killed process {pid} \(.*?\) total-vm:\d+kB, "
                           r"anon-rss:(\d+)kB, file-rss:(\d+)kB, shmem-rss:(\d+)kB", log)
    (memcg,) = re.findall(rf"oom-kill:.*task_memcg=(\S+),task=\S+,pid={pid},", log)
    return sum(map(int, killed)), memcg


@pytest.mark.kernel
def test_oom_kill_of_a_limited_process():
    comm = "tkoom-" + uuid.uuid4().hex[:6]
    pid, cg, out = killed_in_cgroup(comm, ["-j"])
    records = json_lines(out)
    mine = [r for r in records if r.get("type") == "oom_kill" and r["victim_pid"] == pid]
    assert len(mine) == 1, records
    r = mine[0]
    assert (r["pid"], r["comm"], r["victim_comm"], r["memcg"]) == (pid, comm, comm, cg.path), r
    assert r["victim_tid"] == pid
    # The kernel's own report of the kill agrees: the same cgroup, and
    # the same resident memory (the same counters, read while the victim,
    # which is the trigger here, stands still in the OOM path). Before
    # 6.2 the counters are not percpu_counters and pages is unknown.
    kb, memcg = kernel_report(pid)
    assert memcg == cg.path
    if r["pages"] is not None:
        assert r["pages"] * (os.sysconf("SC_PAGE_SIZE") // 1024) == kb, (r, kb)
    assert loss_record(records) == {"type": "loss", "events_lost": 0, "map_inserts_failed": 0}


def test_text_line():
    comm = "tkoom-" + uuid.uuid4().hex[:6]
    pid, cg, out = killed_in_cgroup(comm, [])
    lines = out.splitlines()
    assert lines[0] == "Tracing OOM kills... Ctrl-C to stop."
    (line,) = [l for l in lines[1:] if f'OOM kill of PID {pid} ("{comm}")' in l]
    assert line[2] == ":" and line[5] == ":", line
    assert line[8:].startswith(f' Triggered by PID {pid} ("{comm}"), OOM kill of PID {pid} '
                               f'("{comm}"), '), line
    assert f" pages, memcg {cg.path}, loadavg: " in line, line


@pytest.mark.parametrize("args,words", [
    (["-x"], ["'-x'"]),
    (["7"], ["'7'"]),
])
def test_usage_errors(args, words):
    r = run("oomkill", *args)
    assert (r.returncode, r.stdout) == (2, ""), r
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("oomkill: "), r.stderr
    for w in words:
        assert w in r.stderr, r.stderr
