"""biolatency end to end: a workload makes a known number of O_DIRECT
reads and writes of loop devices; the histograms must count exactly
those, per disk, per flags, and for the disk or process filtered."""
import json
import subprocess
import time

import pytest

from blockdev import BioTarget, bio_target, loopdev, loopdev_b  # noqa: F401
from conftest import Tool, json_lines, loss_record, run, tool_map_id

READS = [4096 * k for k in (40, 3, 17, 9, 100, 61, 25)]
WRITES = [65536 * k for k in (7, 2, 12)]


def hists(out):
    recs = json_lines(out)
    assert loss_record(recs) == {"type": "loss", "events_lost": 0, "map_inserts_failed": 0}
    return [r for r in recs if r["type"] == "histogram"]


@pytest.mark.kernel
def test_per_disk_counts_and_disk_filter(loopdev, loopdev_b, bio_target):
    """-D: each loop disk's histogram counts exactly its requests; -d A
    (run at the same time) counts A's alone."""
    with Tool("biolatency", "-j", "-D") as all_disks, \
            Tool("biolatency", "-j", "-d", loopdev.name) as only_a, \
            BioTarget(bio_target, loopdev.path) as a, \
            BioTarget(bio_target, loopdev_b.path) as b:
        a.read(4096, READS)
        a.write(65536, WRITES)
        b.read(4096, READS[:4])
        out_all, err, rc = all_disks.stop()
        assert rc == 0, err
        out_a, err, rc = only_a.stop()
        assert rc == 0, err
    by_disk = {h["disk"]: h for h in hists(out_all)}
    assert by_disk[loopdev.name]["total"] == 10
    assert by_disk[loopdev_b.name]["total"] == 4
    assert (by_disk[loopdev.name]["major"], by_disk[loopdev.name]["minor"]) == \
        tuple(map(int, open(f"/sys/class/block/{loopdev.name}/dev").read().split(":")))
    (h,) = hists(out_a)
    assert "disk" not in h and h["total"] == 10 and h["unit"] == "usecs"
    assert sum(b["count"] for b in h["buckets"]) == 10


@pytest.mark.kernel
def test_per_flags(loopdev, bio_target):
    with Tool("biolatency", "-j", "-F", "-Q", "-d", loopdev.name) as t, \
            BioTarget(bio_target, loopdev.path) as w:
        w.read(4096, READS)
        w.write(65536, WRITES)
        out, err, rc = t.stop()
    assert rc == 0, err
    # O_DIRECT writes are REQ_SYNC; reads are too on some kernels (6.18's
    # block device reads), not on others.
    got = {h["flags"]: h["total"] for h in hists(out)}
    reads = "Sync-Read" if "Sync-Read" in got else "Read"
    assert got == {reads: 7, "Sync-Write": 3}


@pytest.mark.kernel
def test_pid_filter(loopdev, bio_target):
    with BioTarget(bio_target, loopdev.path) as a, \
            BioTarget(bio_target, loopdev.path) as b:
        with Tool("biolatency", "-j", "-m", "-p", b.pid) as t:
            a.read(4096, READS)
            b.write(65536, WRITES)
            b.read(4096, READS[:5])
            out, err, rc = t.stop()
    assert rc == 0, err
    (h,) = hists(out)
    assert h["total"] == 8 and h["unit"] == "msecs"


@pytest.mark.kernel
def test_each_interval_counts_its_own_requests(loopdev, bio_target):
    """With an interval and no -D or -F (the one per-CPU histogram, whose
    counts userspace differences between intervals): the intervals up to
    the one that shows the 7 reads count exactly 7, and the ones after
    it exactly the 3 writes made then."""
    with Tool("biolatency", "-j", "-d", loopdev.name, "1") as t, \
            BioTarget(bio_target, loopdev.path) as w:
        w.read(4096, READS)
        before, seen = 0, []
        while before < len(READS):
            line = t.proc.stdout.readline()
            assert line, "biolatency ended early"
            seen.append(line)
            rec = json.loads(line)
            if rec["type"] == "histogram":
                assert sum(b["count"] for b in rec["buckets"]) == rec["total"]
                before += rec["total"]
        assert before == len(READS)
        w.write(65536, WRITES)
        out, err, rc = t.stop()
    assert rc == 0, err
    assert sum(h["total"] for h in hists(out)) == len(WRITES), (seen, out)


@pytest.mark.kernel
def test_kernel_stamp_where_the_queue_keeps_statistics(loopdev, bio_target):
    """A queue with writeback throttling keeps I/O statistics: the kernel
    stamps each request's start (rq->io_start_time_ns, RQF_STATS), and
    biolatency takes that stamp instead of writing its own slot
    (bpf/tk_block.bpf.h). Every read is counted, and no slot of
    tk_block_stamps got an issue time while the reads were made: proof
    that the flag bits tk_block_configure set (the kernel's BTF
    enumerators, or the #defines of kernels before them) are this
    kernel's. A wrong bit shows as a slot written, or as reads missing.
    The test's disk is the only one it makes I/O on; a disk that keeps no
    statistics (bfq turns throttling off) doing I/O meanwhile would write
    slots too: none does on the machines this runs on."""
    wbt = f"/sys/block/{loopdev.name}/queue/wbt_lat_usec"
    try:
        with open(wbt) as f:
            before = f.read().strip()
    except OSError:
        before = None   # 5.10 cannot show it before it is on
    try:
        with open(wbt, "w") as f:   # on (it is by default): 2 ms, the default
            f.write("2000")
    except OSError as e:
        pytest.skip(f"no writeback throttling to turn on ({wbt}: {e.strerror}), so "
                    "the kernel keeps no I/O statistics on this disk")
    try:
        with Tool("biolatency", "-j", "-d", loopdev.name) as t, \
                BioTarget(bio_target, loopdev.path) as w:
            start = time.monotonic_ns()
            w.read(4096, READS)
            w.write(65536, WRITES)
            end = time.monotonic_ns()
            r = subprocess.run(["bpftool", "map", "dump", "id",
                                str(tool_map_id(t.proc.pid, "tk_block_stamps")), "-j"],
                               capture_output=True, text=True, check=True)
            out, err, rc = t.stop()
    finally:
        if before is not None:   # the loop disk's queue outlives the test
            with open(wbt, "w") as f:
                f.write(before)
    assert rc == 0, err
    (h,) = hists(out)
    assert h["total"] == len(READS) + len(WRITES)
    slots = [e["formatted"]["value"] for e in json.loads(r.stdout)]
    assert len(slots) == 8192
    written = [v for v in slots if start <= v["issue_ns"] <= end]
    assert written == []


def test_text_histogram_per_disk_with_extension(loopdev, bio_target):
    with Tool("biolatency", "-D", "-e", "-d", loopdev.name) as t, \
            BioTarget(bio_target, loopdev.path) as w:
        w.read(4096, READS[:5])
        out, err, rc = t.stop()
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[:3] == ["", "", f"disk = {loopdev.name}"]
    assert lines[3].split() == ["usecs", ":", "count", "distribution"]
    counts = [int(l.split()[4]) for l in lines[4:] if "->" in l]
    assert sum(counts) == 5
    assert lines[-1].endswith(", count: 5") and lines[-1].startswith("avg = ")


def test_interval_count_prints_each_interval():
    r = run("biolatency", "-j", "-d", "1", "1", "2", timeout=30)
    # -d here is the disk: "1" is no disk
    assert r.returncode == 2
    r = run("biolatency", "-j", "--duration", "30", "1", "2", timeout=60)
    assert r.returncode == 0, r.stderr
    recs = json_lines(r.stdout)
    assert [x["type"] for x in recs] == ["histogram", "histogram", "loss"]


@pytest.mark.parametrize("args,needle", [
    (["-D", "-F"], "-D/--disks and -F/--flags cannot be combined"),
    (["-d", "tk-no-such-disk"], "--disk value 'tk-no-such-disk': no such disk"),
    (["-d", "a/b"], "--disk value 'a/b'"),
    (["x"], "x"),
    (["1", "0"], "0"),
    (["-X"], "-X"),
])
def test_usage_errors_exit_2_one_line(args, needle):
    r = run("biolatency", *args)
    assert r.returncode == 2, r
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("biolatency: ") and needle in lines[0]
    assert "--help" in lines[0]
