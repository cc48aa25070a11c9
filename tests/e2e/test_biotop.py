"""biotop end to end: workloads make O_DIRECT reads and writes of a loop
device; each process's rows must hold exactly its requests and bytes."""
import pytest

from blockdev import TARGET_COMM, BioTarget, bio_target, loopdev, loopdev_b  # noqa: F401
from conftest import Tool, json_lines, loss_record, run

READS = [4096 * k for k in (40, 3, 17, 9, 100, 61, 25)]
WRITES = [65536 * k for k in (7, 2, 12)]


def rows(out):
    recs = json_lines(out)
    assert loss_record(recs) == {"type": "loss", "events_lost": 0, "map_inserts_failed": 0}
    return [r for r in recs if r["type"] == "biotop"]


@pytest.mark.kernel
def test_bytes_per_process_and_disk(loopdev, loopdev_b, bio_target):
    # One interval, ended by SIGINT: every row is in it.
    with Tool("biotop", "-j", "-C", "-d", loopdev.name, "600") as t, \
            BioTarget(bio_target, loopdev.path) as a, \
            BioTarget(bio_target, loopdev_b.path) as b:
        a.read(4096, READS)
        a.write(65536, WRITES)
        b.read(4096, READS)
        out, err, rc = t.stop()
    assert rc == 0, err
    got = sorted((r["pid"], r["comm"], r["disk"], r["direction"], r["io"], r["bytes"])
                 for r in rows(out))
    # -d: b's requests (on the other loop disk) and the loop devices' own
    # I/O of their backing files are left out.
    assert got == [(a.pid, TARGET_COMM, loopdev.name, "R", 7, 7 * 4096),
                   (a.pid, TARGET_COMM, loopdev.name, "W", 3, 3 * 65536)]


@pytest.mark.kernel
def test_pid_filter(loopdev, bio_target):
    with BioTarget(bio_target, loopdev.path) as a, \
            BioTarget(bio_target, loopdev.path) as b:
        with Tool("biotop", "-j", "-p", b.pid, "600") as t:
            a.read(4096, READS)
            b.write(65536, WRITES[:2])
            out, err, rc = t.stop()
    assert rc == 0, err
    assert [(r["pid"], r["direction"], r["io"], r["bytes"]) for r in rows(out)] == \
        [(b.pid, "W", 2, 2 * 65536)]


def test_text_rows_sorted_by_bytes(loopdev, bio_target):
    with Tool("biotop", "-C", "-d", loopdev.name, "600") as t, \
            BioTarget(bio_target, loopdev.path) as a:
        a.read(4096, READS)
        a.write(65536, WRITES)
        out, err, rc = t.stop()
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == "" and " loadavg: " in lines[1] and lines[2] == ""
    assert lines[3].split() == ["PID", "COMM", "D", "MAJ", "MIN", "DISK", "I/O", "Kbytes",
                                "AVGms"]
    major, minor = open(f"/sys/class/block/{loopdev.name}/dev").read().split(":")
    assert [l.split()[:8] for l in lines[4:]] == [
        [str(a.pid), TARGET_COMM, "W", major, minor.strip(), loopdev.name, "3", "192"],
        [str(a.pid), TARGET_COMM, "R", major, minor.strip(), loopdev.name, "7", "28"]]


def test_maxrows_and_count():
    r = run("biotop", "-C", "-r", "1", "1", "2", timeout=60)
    assert r.returncode == 0, r.stderr
    assert sum(1 for l in r.stdout.splitlines() if " loadavg: " in l) == 2


@pytest.mark.parametrize("args,needle", [
    (["-d", "tk-no-such-disk"], "--disk value 'tk-no-such-disk': no such disk"),
    (["-r", "0"], "--maxrows"),
    (["-r", "many"], "--maxrows"),
    (["0"], "0"),
    (["-Q"], "-Q"),
])
def test_usage_errors_exit_2_one_line(args, needle):
    r = run("biotop", *args)
    assert r.returncode == 2, r
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("biotop: ") and needle in lines[0]
    assert "--help" in lines[0]
