"""bitesize end to end: two workloads with different names make O_DIRECT
reads and writes of sizes the test chooses on a loop device; each name's
histogram must hold exactly its requests, in their size buckets."""
import shutil

import pytest

from blockdev import TARGET_COMM, BioTarget, bio_target, loopdev  # noqa: F401
from conftest import Tool, json_lines, loss_record, run

OTHER_COMM = "bio-other"
READS = [4096 * k for k in (40, 3, 17, 9, 100, 61, 25)]
WRITES = [65536 * k for k in (7, 2, 12)]
BIG = [16384 * k for k in (300, 200)]


@pytest.fixture
def other_target(bio_target):
    path = bio_target.parent / OTHER_COMM
    shutil.copy(bio_target, path)
    return path


def buckets(h):
    return [(b["low"], b["high"], b["count"]) for b in h["buckets"]]


def make_io(a, b):
    a.read(4096, READS)
    a.write(65536, WRITES)
    b.read(16384, BIG)


@pytest.mark.kernel
def test_histogram_per_process(loopdev, bio_target, other_target):
    with Tool("bitesize", "-j", "-d", loopdev.name) as t, \
            BioTarget(bio_target, loopdev.path) as a, \
            BioTarget(other_target, loopdev.path) as b:
        make_io(a, b)
        out, err, rc = t.stop()
    assert rc == 0, err
    recs = json_lines(out)
    assert loss_record(recs) == {"type": "loss", "events_lost": 0, "map_inserts_failed": 0}
    hists = {r["comm"]: r for r in recs if r["type"] == "histogram"}
    assert set(hists) == {TARGET_COMM, OTHER_COMM}
    assert buckets(hists[TARGET_COMM]) == [(4, 7, 7), (64, 127, 3)]
    assert buckets(hists[OTHER_COMM]) == [(16, 31, 2)]
    assert hists[TARGET_COMM]["unit"] == "kbytes" and hists[TARGET_COMM]["total"] == 10


@pytest.mark.kernel
def test_name_filter(loopdev, bio_target, other_target):
    with Tool("bitesize", "-j", "-n", "other") as t, \
            BioTarget(bio_target, loopdev.path) as a, \
            BioTarget(other_target, loopdev.path) as b:
        make_io(a, b)
        out, err, rc = t.stop()
    assert rc == 0, err
    hists = [r for r in json_lines(out) if r["type"] == "histogram"]
    assert [(h["comm"], buckets(h)) for h in hists] == [(OTHER_COMM, [(16, 31, 2)])]


def test_text_output(loopdev, bio_target):
    with Tool("bitesize", "-d", loopdev.name) as t, \
            BioTarget(bio_target, loopdev.path) as a:
        a.read(4096, READS)
        a.write(65536, WRITES[:1])
        out, err, rc = t.stop()
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[:3] == ["", f"Process Name = '{TARGET_COMM}'",
                         "     Kbytes              : count    distribution"]
    rows = [l.split() for l in lines[3:]]
    assert [(r[0], r[2], r[4]) for r in rows] == [
        ("0", "1", "0"), ("2", "3", "0"), ("4", "7", "7"), ("8", "15", "0"),
        ("16", "31", "0"), ("32", "63", "0"), ("64", "127", "1")]


@pytest.mark.parametrize("args,needle", [
    (["-d", "tk-no-such-disk"], "--disk value 'tk-no-such-disk': no such disk"),
    (["-d", ""], "--disk value ''"),
    (["1", "x"], "x"),
    (["-Q"], "-Q"),
])
def test_usage_errors_exit_2_one_line(args, needle):
    r = run("bitesize", *args)
    assert r.returncode == 2, r
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("bitesize: ") and needle in lines[0]
    assert "--help" in lines[0]
