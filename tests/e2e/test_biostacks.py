"""biostacks end to end: a workload makes O_DIRECT reads and writes of a
loop device; its histograms must count exactly those requests, under
kernel stacks that come from its pread64 and pwrite64 calls."""
import pytest

from blockdev import TARGET_COMM, BioTarget, bio_target, loopdev  # noqa: F401
from conftest import Tool, json_lines, loss_record, run

READS = [4096 * k for k in (40, 3, 17, 9, 100, 61, 25)]
WRITES = [65536 * k for k in (7, 2, 12)]


def through(h, call):
    return any(call in frame for frame in h["stack"])


@pytest.mark.kernel
def test_counts_per_stack(loopdev, bio_target):
    with Tool("biostacks", "-j", "-d", loopdev.name) as t, \
            BioTarget(bio_target, loopdev.path) as w:
        w.read(4096, READS)
        w.write(65536, WRITES)
        out, err, rc = t.stop()
    assert rc == 0, err
    recs = json_lines(out)
    assert loss_record(recs) == {"type": "loss", "events_lost": 0, "map_inserts_failed": 0}
    hists = [r for r in recs if r["type"] == "histogram"]
    assert {(h["pid"], h["comm"], h["disk"]) for h in hists} == \
        {(w.pid, TARGET_COMM, loopdev.name)}
    reads = sum(h["total"] for h in hists if through(h, "pread64"))
    writes = sum(h["total"] for h in hists if through(h, "pwrite64"))
    assert (reads, writes, sum(h["total"] for h in hists)) == (7, 3, 10)
    for h in hists:
        # innermost first, from the request's making; no tracing frames
        assert "blk_mq_submit_bio" in h["stack"][:3], h["stack"]
        assert not h["stack"][0].startswith("bpf_"), h["stack"]


def test_text_report(loopdev, bio_target):
    with Tool("biostacks", "-m", "-d", loopdev.name) as t, \
            BioTarget(bio_target, loopdev.path) as w:
        w.read(4096, READS[:2])
        out, err, rc = t.stop()
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].split() == [TARGET_COMM, str(w.pid), loopdev.name]
    head = lines.index("     msecs               : count    distribution")
    assert any("pread64" in l for l in lines[1:head])
    assert sum(int(l.split()[4]) for l in lines[head + 1:] if "->" in l) == 2


@pytest.mark.parametrize("args,needle", [
    (["-d", "tk-no-such-disk"], "--disk value 'tk-no-such-disk': no such disk"),
    (["5"], "5"),
    (["-Q"], "-Q"),
])
def test_usage_errors_exit_2_one_line(args, needle):
    r = run("biostacks", *args)
    assert r.returncode == 2, r
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("biostacks: ") and needle in lines[0]
    assert "--help" in lines[0]
