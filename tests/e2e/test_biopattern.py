"""biopattern end to end: a workload makes a pattern of O_DIRECT reads
and writes on a loop device whose sequential/random split the test
knows; biopattern must count exactly that split."""
import pytest

from blockdev import BioTarget, bio_target, loopdev, loopdev_b  # noqa: F401
from conftest import Tool, json_lines, loss_record, run

MIB = 1 << 20


def make_pattern(w):
    """4 random requests, 5 sequential ones: 6 of 4 KiB, 3 of 64 KiB."""
    w.read(4096, [0, 4096, 8192, 12288])          # R S S S
    w.read(4096, [MIB, MIB + 4096])               # R S
    w.write(65536, [4 * MIB, 4 * MIB + 65536, 8 * MIB])  # R S R


BYTES = 6 * 4096 + 3 * 65536


@pytest.mark.kernel
def test_exact_split_on_the_loop_disk(loopdev, loopdev_b, bio_target):
    with Tool("biopattern", "-j", "-d", loopdev.name) as t, \
            BioTarget(bio_target, loopdev.path) as w, \
            BioTarget(bio_target, loopdev_b.path) as other:
        make_pattern(w)
        other.read(4096, [0, 8192])
        out, err, rc = t.stop()
    assert rc == 0, err
    recs = json_lines(out)
    assert loss_record(recs) == {"type": "loss", "events_lost": 0, "map_inserts_failed": 0}
    (r,) = [x for x in recs if x["type"] == "biopattern"]
    assert (r["disk"], r["random"], r["sequential"], r["count"], r["bytes"]) == \
        (loopdev.name, 4, 5, 9, BYTES)


@pytest.mark.kernel
def test_text_per_disk(loopdev, loopdev_b, bio_target):
    with Tool("biopattern") as t, \
            BioTarget(bio_target, loopdev.path) as w, \
            BioTarget(bio_target, loopdev_b.path) as other:
        make_pattern(w)
        other.read(4096, [0, 4096, 65536])          # R S R
        out, err, rc = t.stop()
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["DISK", "%RND", "%SEQ", "COUNT", "KBYTES"]
    rows = {l.split()[0]: l.split()[1:] for l in lines[1:]}
    assert rows[loopdev.name] == ["44", "55", "9", str(BYTES // 1024)]
    assert rows[loopdev_b.name] == ["66", "33", "3", "12"]


@pytest.mark.parametrize("args,needle", [
    (["-d", "tk-no-such-disk"], "--disk value 'tk-no-such-disk': no such disk"),
    (["-p", "1"], "task filters"),
    (["1", "-1"], "-1"),
    (["-P"], "-P"),
])
def test_usage_errors_exit_2_one_line(args, needle):
    r = run("biopattern", *args)
    assert r.returncode == 2, r
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("biopattern: ") and needle in lines[0]
    assert "--help" in lines[0]
