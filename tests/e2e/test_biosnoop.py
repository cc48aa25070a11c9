"""biosnoop end to end: a workload makes O_DIRECT reads and writes of a
loop device at offsets the test chooses; each must be reported once,
with its size, sector, operation, disk and the workload's pid and comm."""
import pytest

from blockdev import (SECTOR, TARGET_COMM, BioTarget, assert_reported,  # noqa: F401
                      bio_target, loopdev)
from conftest import Tool, json_lines, loss_record, run

# 7 reads of 4 KiB and 3 writes of 64 KiB, none adjacent to another (so
# no two can merge), in an order that is not the sectors' order.
READS = [4096 * k for k in (40, 3, 17, 9, 100, 61, 25)]
WRITES = [65536 * k for k in (7, 2, 12)]


def own(records, pid):
    return [r for r in records if r.get("type") == "bio" and r["pid"] == pid]


def make_io(target):
    target.read(4096, READS)
    target.write(65536, WRITES)


@pytest.mark.kernel
@pytest.mark.parametrize("method", ["tp_btf", "raw_tp"])
def test_exact_requests_on_the_loop_disk(loopdev, bio_target, method):
    """Each attach method reads the tracepoints' arguments and the
    request's fields (CO-RE) alike."""
    with Tool("biosnoop", "-j", "-v", "-d", loopdev.name,
              env={"TRACEKIT_ATTACH": method}) as t, \
            BioTarget(bio_target, loopdev.path) as w:
        make_io(w)
        out, err, rc = t.stop()
    assert rc == 0, err
    for probe in ("block_getrq", "block_rq_issue", "block_rq_complete"):
        assert f"biosnoop: probe {probe}: {method} {probe}" in err.splitlines()
    recs = json_lines(out)
    assert loss_record(recs) == {"type": "loss", "events_lost": 0, "map_inserts_failed": 0}
    # -d: nothing of another disk, though the loop device's own reads
    # and writes of its backing file went to the disk under /tmp.
    assert {r["disk"] for r in recs if r["type"] == "bio"} == {loopdev.name}
    mine = own(recs, w.pid)
    got = sorted((r["rwbs"][0], r["sector"], r["bytes"]) for r in mine)
    want = sorted([("R", o // SECTOR, 4096) for o in READS] +
                  [("W", o // SECTOR, 65536) for o in WRITES])
    assert_reported(got, want, recs)
    for r in mine:
        assert r["comm"] == TARGET_COMM and r["tid"] == w.pid
        assert r["error"] == 0 and r["latency_ns"] > 0
        # O_DIRECT writes are synchronous (REQ_SYNC): blktrace's "WS".
        assert r["rwbs"] == ("WS" if r["rwbs"][0] == "W" else r["rwbs"])


@pytest.mark.kernel
def test_pid_filter_keeps_one_process(loopdev, bio_target):
    with BioTarget(bio_target, loopdev.path) as a, \
            BioTarget(bio_target, loopdev.path) as b:
        with Tool("biosnoop", "-j", "-p", a.pid) as t:
            b.read(4096, READS)
            a.write(65536, WRITES)
            b.write(65536, WRITES)
            a.read(4096, READS[:2])
            out, err, rc = t.stop()
    assert rc == 0, err
    recs = [r for r in json_lines(out) if r["type"] == "bio"]
    assert {r["pid"] for r in recs} == {a.pid}
    assert sorted((r["rwbs"][0], r["sector"]) for r in recs) == sorted(
        [("W", o // SECTOR) for o in WRITES] + [("R", o // SECTOR) for o in READS[:2]])


@pytest.mark.kernel
def test_queue_time_and_pattern(loopdev, bio_target):
    """-P: 4 reads one after another (the first random: nothing before
    it on this disk), a jump back (random), then 2 more in a row."""
    offsets = [0, 4096, 8192, 12288, 1 << 20, (1 << 20) + 4096, (1 << 20) + 8192]
    with Tool("biosnoop", "-j", "-Q", "-P", "-d", loopdev.name) as t, \
            BioTarget(bio_target, loopdev.path) as w:
        w.read(4096, offsets)
        out, err, rc = t.stop()
    assert rc == 0, err
    recs = json_lines(out)
    mine = own(recs, w.pid)
    found = assert_reported([r["sector"] for r in mine], [o // SECTOR for o in offsets], recs)
    # The pattern is the issue's, which the BPF program sees also for a
    # request whose completion it missed.
    patterns = ["random", "sequential", "sequential", "sequential",
                "random", "sequential", "sequential"]
    assert [r["pattern"] for r in mine] == [patterns[i] for i in found]
    # The loop queue does I/O accounting: each request is stamped.
    assert all(isinstance(r["queue_ns"], int) and r["queue_ns"] >= 0 for r in mine)


def test_text_columns(loopdev, bio_target):
    with Tool("biosnoop", "-Q", "-d", loopdev.name) as t, \
            BioTarget(bio_target, loopdev.path) as w:
        w.read(4096, READS[:3])
        w.write(65536, WRITES[:1])
        out, err, rc = t.stop()
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["TIME(s)", "COMM", "PID", "DISK", "T", "SECTOR", "BYTES",
                                "QUE(ms)", "LAT(ms)"]
    rows = [l.split() for l in lines[1:]]
    mine = [r[1:7] for r in rows if r[2] == str(w.pid)]
    assert mine == [[TARGET_COMM, str(w.pid), loopdev.name, "R", str(o // SECTOR), "4096"]
                    for o in READS[:3]] + \
        [[TARGET_COMM, str(w.pid), loopdev.name, "W", str(WRITES[0] // SECTOR), "65536"]]
    assert float(rows[0][0]) == 0.0


@pytest.mark.parametrize("args,needle", [
    (["-d", "tk-no-such-disk"], "--disk value 'tk-no-such-disk': no such disk"),
    (["-d", ""], "--disk value ''"),
    (["-d", "../loop0"], "--disk value '../loop0'"),
    (["-m", "fast"], "--min"),
    (["-m", "-1"], "--min"),
    (["-X"], "-X"),
    (["5"], "5"),
])
def test_usage_errors_exit_2_one_line(args, needle):
    r = run("biosnoop", *args)
    assert r.returncode == 2, r
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("biosnoop: ") and needle in lines[0]
    assert "--help" in lines[0]
