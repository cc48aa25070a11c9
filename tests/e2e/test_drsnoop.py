"""drsnoop end to end: a writer the test starts in a memory cgroup of its
own, held at a limit well below what it writes, must reclaim page cache
itself; the tool must report that reclaim by the writer's PID, as memcg
reclaim, with pages reclaimed, and nothing of the writer under --direct
(the system is not short of memory)."""
import uuid

import pytest

from conftest import Tool, json_lines, loss_record, run
from memcg import MemCgroup

LIMIT = 32 << 20
WRITE = 160 << 20

# Named argv[1]; says "ready" and waits for a line, then writes argv[2]
# bytes to the file argv[3] in 1 MiB writes, fdatasync every 4 MiB (clean
# page cache is what a limited cgroup reclaims without swap), says its
# pid and exits.
WRITER = r"""
import ctypes, os, sys
ctypes.CDLL(None).prctl(15, sys.argv[1].encode(), 0, 0, 0)
print("ready", flush=True)
sys.stdin.readline()
fd = os.open(sys.argv[3], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
block = b"r" * (1 << 20)
for i in range(int(sys.argv[2]) >> 20):
    os.write(fd, block)
    if i % 4 == 3:
        os.fdatasync(fd)
os.close(fd)
print(os.getpid(), flush=True)
"""


def write_in_cgroup(tmp_path, comm, tool_args):
    cg = MemCgroup("tk-drsnoop", LIMIT)
    try:
        w = cg.start(["/usr/bin/python3", "-c", WRITER, comm, str(WRITE),
                      str(tmp_path / "data")])
        assert w.stdout.readline() == "ready\n"
        with Tool("drsnoop", *tool_args) as t:
            w.stdin.write("\n")
            w.stdin.flush()
            pid = int(w.stdout.readline())
            assert w.wait(timeout=300) == 0
            out, err, rc = t.stop()
    finally:
        cg.remove()
    assert rc == 0, err
    return pid, out


# drsnoop's tests run on this host, as issue 19 asks; the tracepoints'
# arguments (order, nr_reclaimed) have not changed since 2.6, and in the
# VMs /tmp is tmpfs, whose pages a cgroup without swap cannot reclaim
# (memory.high throttles the writer instead).
def test_limited_writer_reclaims(tmp_path):
    comm = "tkdr-" + uuid.uuid4().hex[:6]
    pid, out = write_in_cgroup(tmp_path, comm, ["-j"])
    records = json_lines(out)
    mine = [r for r in records if r.get("type") == "reclaim" and r["pid"] == pid]
    assert mine, records[-5:]
    assert {(r["comm"], r["tid"], r["kind"]) for r in mine} == {(comm, pid, "memcg")}
    # 160 MiB through a 32 MiB cgroup: at least the difference reclaimed
    # (4 KiB pages), each reclaim taking some time.
    assert sum(r["pages"] for r in mine) >= (WRITE - LIMIT) // 4096 // 2, mine
    assert all(r["lat_ns"] > 0 and r["order"] >= 0 for r in mine)
    assert loss_record(records) == {"type": "loss", "events_lost": 0, "map_inserts_failed": 0}


def test_direct_only_leaves_cgroup_reclaim_out(tmp_path):
    comm = "tkdr-" + uuid.uuid4().hex[:6]
    pid, out = write_in_cgroup(tmp_path, comm, ["-j", "--direct"])
    assert [r for r in json_lines(out) if r.get("pid") == pid] == []


def test_text_columns(tmp_path):
    comm = "tkdr-" + uuid.uuid4().hex[:6]
    pid, out = write_in_cgroup(tmp_path, comm, ["-U"])
    lines = out.splitlines()
    assert lines[0] == "UID   COMM           PID     LAT(ms) PAGES"
    mine = [l for l in lines[1:] if l[6:20].rstrip() == comm[:14]]
    assert mine, out
    for l in mine:
        assert l[:6] == "0     " and l[21:27] == f"{pid:<6}", l
        lat, pages = l[28:].split()
        assert float(lat) >= 0 and int(pages) >= 0, l


def has_zone_stat():
    with open("/proc/kallsyms") as f:
        return any(l.split()[2:3] == ["vm_zone_stat"] for l in f)


def test_free_memory_column(tmp_path):
    """-v: FREE(KB), the kernel's free pages when the reclaim ended; at
    most all of memory, and more than nothing."""
    if not has_zone_stat():
        r = run("drsnoop", "-v")
        assert (r.returncode, r.stdout) == (1, "")
        assert "vm_zone_stat" in r.stderr and r.stderr.count("\n") == 1, r.stderr
        pytest.skip("/proc/kallsyms has no vm_zone_stat here (CONFIG_KALLSYMS_ALL off): "
                    "-v fails in one line, checked (the column itself is checked nowhere yet: "
                    "the VMs, which list it, have no disk file system for the workload)")
    comm = "tkdr-" + uuid.uuid4().hex[:6]
    pid, out = write_in_cgroup(tmp_path, comm, ["-j", "-v"])
    with open("/proc/meminfo") as f:
        total = int(f.readline().split()[1])
    mine = [r for r in json_lines(out) if r.get("pid") == pid]
    assert mine and all(0 < r["free_kb"] <= total for r in mine), mine


@pytest.mark.parametrize("args,words", [
    (["-x"], ["'-x'"]),
    (["--direct=1"], ["--direct"]),
    (["7"], ["'7'"]),
])
def test_usage_errors(args, words):
    r = run("drsnoop", *args)
    assert (r.returncode, r.stdout) == (2, ""), r
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("drsnoop: "), r.stderr
    for w in words:
        assert w in r.stderr, r.stderr
