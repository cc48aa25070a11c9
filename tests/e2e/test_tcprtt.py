"""tcprtt end to end: a connection from the test's namespace to a sender
in another (netem.Flow) that sends it data; tcprtt, filtered to the
receiving end (its local address, unique to the test, and the sender's
port), counts samples of that flow only: more than none and at most one
per segment the socket received once established (ss: segs_in, less the
SYN-ACK). Per-address histograms (-b/-B) name only the flow's address.
With netem delaying the namespace's packets by D (kernel matrix), every
sample is at least D."""
import re
import subprocess

import pytest

from conftest import Tool, json_lines, loss_record, run
from netem import Flow, netem

METHODS = ["tp_btf", "raw_tp", "tp"]
TARGET = {"tp_btf": "tcp_probe", "raw_tp": "tcp_probe", "tp": "tcp/tcp_probe"}


def hists(out):
    recs = json_lines(out)
    loss = loss_record(recs)
    assert (loss["events_lost"], loss["map_inserts_failed"]) == (0, 0)
    assert all(r["type"] == "histogram" for r in recs[:-1]), recs
    return recs[:-1]


def total(recs):
    return sum(r["total"] for r in recs)


def segs_in(f):
    """The receiving socket's segs_in (ss -ti), while it is established."""
    src = f.caddr if f.ip == 4 else f"[{f.caddr}]"
    out = subprocess.run(["ss", "-tinH", "src", src, "sport", str(f.sport)],
                         check=True, capture_output=True, text=True).stdout
    return int(re.search(r"\bsegs_in:(\d+)", out).group(1))


def receive(f, n=300000):
    """connect, n bytes from the sender; the receiver's segs_in then."""
    f.connect()
    f.send(n)
    return segs_in(f)


@pytest.mark.kernel
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("ip", [4, 6])
def test_samples_of_a_flow(netns, method, ip):
    """-a (the receiver's address) -P (the sender's port): between one and
    segs_in - 1 samples; -p of a port nobody uses and -A of the wrong end:
    none."""
    env = {"TRACEKIT_ATTACH": method}
    with Flow(netns, ip) as f:
        mine = ["-a", f.caddr, "-P", f.port]
        with Tool("tcprtt", "-j", "-v", *mine, env=env) as t, \
                Tool("tcprtt", "-j", *mine, "-p", "1", env=env) as no_port, \
                Tool("tcprtt", "-j", "-a", f.caddr, "-A", f.caddr, env=env) as no_addr:
            segs = receive(f)
            outs = [tool.stop() for tool in (t, no_port, no_addr)]
        f.close()
    for out, err, rc in outs:
        assert rc == 0, err
    assert f"tcprtt: probe rtt: {method} {TARGET[method]}" in outs[0][1].splitlines()
    (h,) = hists(outs[0][0])
    assert h["unit"] == "usecs" and 0 < h["total"] <= segs - 1, (h, segs)
    assert h["avg"] > 0
    assert total(hists(outs[1][0])) == 0
    assert total(hists(outs[2][0])) == 0


@pytest.mark.kernel
def test_by_address(netns):
    """-b -p PORT (the sender's end, in the namespace): one histogram, of
    the sender's address; -B -a (the receiver's end): of the sender's
    address as its remote one; -4 on an IPv6 flow: nothing."""
    with Flow(netns, 6) as f:
        with Tool("tcprtt", "-j", "-b", "-p", f.port) as by_l, \
                Tool("tcprtt", "-j", "-B", "-a", f.caddr) as by_r, \
                Tool("tcprtt", "-j", "-B", "-4", "-P", f.port) as v4:
            receive(f)
            outs = [tool.stop() for tool in (by_l, by_r, v4)]
        f.close()
    for out, err, rc in outs:
        assert rc == 0, err
    (h,) = hists(outs[0][0])
    assert h["laddr"] == f.addr and h["total"] > 0, h
    (h,) = hists(outs[1][0])
    assert h["raddr"] == f.addr and h["total"] > 0, h
    assert hists(outs[2][0]) == []


def test_text(netns):
    """bcc's layout: the usecs (or -m msecs) star histogram; -B -e: a
    section line per address with its average."""
    with Flow(netns, 4) as f:
        with Tool("tcprtt", "-a", f.caddr) as plain, \
                Tool("tcprtt", "-m", "-B", "-e", "-a", f.caddr) as by:
            receive(f)
            outs = [tool.stop() for tool in (plain, by)]
        f.close()
    for out, err, rc in outs:
        assert rc == 0, err
    lines = outs[0][0].splitlines()
    assert lines[:3] == ["Tracing TCP RTT... Hit Ctrl-C to end.", "",
                         "     usecs               : count    distribution"], lines
    assert all(re.fullmatch(r" +\d+ -> \d+ +: \d+ +\|\**\ *\|", l) for l in lines[3:]), lines
    lines = outs[1][0].splitlines()
    # [AVG n]: in ms, rounded down (0 on an idle veth; more on a busy machine)
    assert lines[:3] == ["Tracing TCP RTT... Hit Ctrl-C to end.", "", ""], lines
    assert re.fullmatch(re.escape(f"Remote Address = {f.addr} [AVG ") + r"\d+\]", lines[3]), lines
    assert lines[4] == "     msecs               : count    distribution"


DELAY_MS = 100


@pytest.mark.kernel
@pytest.mark.parametrize("ip", [4, 6])
def test_netem_delay_is_the_floor(netns, ip):
    """netem delays every packet the namespace sends by DELAY_MS: the
    receiver's RTT (its ACKs answered by the sender's data) is at least
    that, in every sample: no bucket under 64 ms (the log2 bucket of
    100 ms is 64 -> 127), the average at least DELAY_MS and under a
    generous bound; in microseconds likewise, read from the socket
    (tp_btf) and from the tracepoint's record (tp)."""
    netem(netns, "delay", f"{DELAY_MS}ms")
    with Flow(netns, ip) as f:
        with Tool("tcprtt", "-j", "-m", "-a", f.caddr, "-P", f.port) as t, \
                Tool("tcprtt", "-j", "-a", f.caddr, "-P", f.port) as us, \
                Tool("tcprtt", "-j", "-a", f.caddr, "-P", f.port,
                     env={"TRACEKIT_ATTACH": "tp"}) as record:
            segs = receive(f, 100000)
            outs = [tool.stop() for tool in (t, us, record)]
        f.close()
    for out, err, rc in outs:
        assert rc == 0, err
    (h,) = hists(outs[0][0])
    assert h["unit"] == "msecs" and 0 < h["total"] <= segs - 1, (h, segs)
    assert min(b["low"] for b in h["buckets"] if b["count"]) >= 64, h["buckets"]
    assert DELAY_MS <= h["avg"] < DELAY_MS + 5000, h
    # In microseconds, from the socket and (tp) from the record's srtt:
    # the same unit on every kernel.
    for out in (outs[1][0], outs[2][0]):
        (h,) = hists(out)
        assert min(b["low"] for b in h["buckets"] if b["count"]) >= 65536, h["buckets"]
        assert DELAY_MS * 1000 <= h["avg"] < (DELAY_MS + 5000) * 1000, h


def test_intervals():
    """-i 1 -d 2 (bcc's interval and duration): a histogram per second,
    two in all (JSON: one record each), and a third only when the end came
    while the second was being printed (libtrace prints once more then,
    so that nothing counted before the end is left out)."""
    r = run("tcprtt", "-j", "-i", "1", "-d", "2", "-a", "192.0.2.1")
    assert r.returncode == 0, r.stderr
    recs = hists(r.stdout)
    assert len(recs) in (2, 3) and total(recs) == 0, recs


@pytest.mark.parametrize("args,words", [
    (["-a", "x"], ["--laddr", "'x'"]),
    (["-A", "1.2.3"], ["--raddr", "'1.2.3'"]),
    (["-p", "0"], ["--lport", "'0'"]),
    (["-P", "65536"], ["--rport", "'65536'"]),
    (["-b", "-B"], ["-b", "-B"]),
    (["-4", "-6"], ["--ipv4", "--ipv6"]),
    (["-6", "-a", "10.0.0.1"], ["-a", "-6"]),
    (["-i", "0"], ["--interval", "'0'"]),
    (["--pid", "1"], ["task filters"]),
    (["-D"], ["'-D'", "-v"]),
    (["5"], ["'5'"]),
])
def test_usage_errors(args, words):
    r = run("tcprtt", *args)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("tcprtt: "), r.stderr
    for w in words:
        assert w in r.stderr, r.stderr
