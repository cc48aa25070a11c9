"""netqtop end to end: UDP datagrams of fixed sizes over the veth pair
into a namespace (netns.py), both ways; the packets and bytes each end
of the pair received and sent are exactly those datagrams.

Nothing else crosses the pair while the tool runs: IPv6 is disabled on
both ends before it starts (no neighbour discovery, MLD or router
solicitations), and each end knows the other's MAC address as a
permanent neighbour (no ARP)."""
import os
import select
import socket
import subprocess
import sys

import pytest

from conftest import Tool, json_lines, loss_record, run

METHODS = ["tp_btf", "raw_tp", "tp"]
ETH, IP4, UDP = 14, 20, 8
# (count, payload) into the namespace (host end TX, peer end RX) and out
# of it (peer end TX, host end RX): sizes in different buckets.
OUT = [(7, 10), (5, 100)]       # RX lengths 38 and 128
IN = [(4, 1000), (3, 3000)]     # TX lengths 1042 and 3042 (3000 > MTU:
                                # 2 IP fragments each, see below)
BUCKETS = [(0, 63), (64, 511), (512, 2047), (2048, 16383), (16384, 65535), (65536, None)]

# In the namespace: a UDP socket on ADDR, "ready PORT"; "send ADDR PORT N
# SIZE" sends N datagrams of SIZE bytes, "recv N" reads N datagrams.
PEER = r"""
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 0))
print("ready", s.getsockname()[1], flush=True)
for line in sys.stdin:
    w = line.split()
    if w[0] == "send":
        for _ in range(int(w[3])):
            s.sendto(b"x" * int(w[4]), (w[1], int(w[2])))
    else:
        for _ in range(int(w[1])):
            s.recv(65536)
    print("done", flush=True)
"""


def quiet_pair(ns):
    """No IPv6 and no ARP on the pair (see the module's docstring)."""
    def mac(argv):
        return subprocess.run(argv, check=True, capture_output=True, text=True).stdout.split(
            "link/ether")[1].split()[0]
    host_mac = mac(["ip", "link", "show", ns.host_if])
    peer_mac = mac(ns.argv("ip", "link", "show", ns.peer_if))
    subprocess.run(["sysctl", "-qw", f"net.ipv6.conf.{ns.host_if}.disable_ipv6=1"], check=True)
    ns.run("sysctl", "-qw", f"net.ipv6.conf.{ns.peer_if}.disable_ipv6=1")
    subprocess.run(["ip", "neigh", "replace", ns.peer4, "lladdr", peer_mac, "dev", ns.host_if,
                    "nud", "permanent"], check=True)
    ns.run("ip", "neigh", "replace", ns.addr4, "lladdr", host_mac, "dev", ns.peer_if,
           "nud", "permanent")


class Peer:
    def __init__(self, ns):
        self.proc = subprocess.Popen(ns.argv(sys.executable, "-c", PEER, ns.peer4),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, bufsize=1)
        words = self.proc.stdout.readline().split()
        assert words[:1] == ["ready"], words
        self.port = int(words[1])

    def ask(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline() == "done\n", line

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def traffic(ns):
    """OUT's datagrams from the namespace to here, IN's from here to the
    namespace, each batch received in full before the next."""
    me = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    me.bind((ns.addr4, 0))
    peer = Peer(ns)
    try:
        for n, size in OUT:
            peer.ask(f"send {ns.addr4} {me.getsockname()[1]} {n} {size}")
            for _ in range(n):
                assert len(me.recv(65536)) == size
        for n, size in IN:
            for _ in range(n):
                me.sendto(b"y" * size, (ns.peer4, peer.port))
            peer.ask(f"recv {n}")
    finally:
        peer.close()
        me.close()


def packets(batches, link, mtu=1500):
    """{length: count} the device sees of batches of (count, payload):
    the IP datagram, fragmented at mtu, plus the link header on TX."""
    seen = {}
    for n, size in batches:
        data = UDP + size
        per = (mtu - IP4) // 8 * 8          # payload of a non-last fragment
        while data > mtu - IP4:
            seen[IP4 + per + link] = seen.get(IP4 + per + link, 0) + n
            data -= per
        seen[IP4 + data + link] = seen.get(IP4 + data + link, 0) + n
    return seen


def expected(batches, link):
    seen = packets(batches, link)
    sizes = [sum(c for l, c in seen.items() if lo <= l and (hi is None or l <= hi))
             for lo, hi in BUCKETS]
    return sum(seen.values()), sum(l * c for l, c in seen.items()), sizes


def totals(records, dev, direction):
    """Packets, bytes and buckets summed over every interval and queue."""
    recs = [r for r in records if r["type"] == "queue" and r["dev"] == dev
            and r["direction"] == direction]
    for r in recs:
        assert [(b["low"], b["high"]) for b in r["sizes"]] == BUCKETS, r
        assert r["unit"] == "bytes" and r["interval_s"] > 0, r
        assert sum(b["count"] for b in r["sizes"]) == r["packets"], r
    return (sum(r["packets"] for r in recs), sum(r["bytes"] for r in recs),
            [sum(r["sizes"][i]["count"] for r in recs) for i in range(len(BUCKETS))])


@pytest.mark.kernel
@pytest.mark.parametrize("method", METHODS)
def test_exact_packets_both_ends(netns, method):
    """Every device: the host end receives OUT and sends IN, the peer end
    the other way round; the same packets, the TX side 14 bytes longer."""
    quiet_pair(netns)
    with Tool("netqtop", "-j", "-v", env={"TRACEKIT_ATTACH": method}) as t:
        traffic(netns)
        out, err, rc = t.stop()
    assert rc == 0, err
    assert f"netqtop: probe rx: {method} " in err and f"netqtop: probe tx: {method} " in err, err
    records = json_lines(out)
    loss = loss_record(records)
    assert (loss["events_lost"], loss["map_inserts_failed"]) == (0, 0)
    assert totals(records, netns.host_if, "rx") == expected(OUT, 0)
    assert totals(records, netns.host_if, "tx") == expected(IN, ETH)
    assert totals(records, netns.peer_if, "tx") == expected(OUT, ETH)
    assert totals(records, netns.peer_if, "rx") == expected(IN, 0)
    # The two ends are told apart by namespace too.
    host = {r["netns"] for r in records if r.get("dev") == netns.host_if}
    peer = {r["netns"] for r in records if r.get("dev") == netns.peer_if}
    assert len(host) == 1 and len(peer) == 1 and host != peer


@pytest.mark.kernel
def test_one_device_every_queue(netns):
    """-n DEV: that device only, a record for each of its queues each
    interval (idle ones with 0), several intervals summing up exactly."""
    quiet_pair(netns)
    queues = os.listdir(f"/sys/class/net/{netns.host_if}/queues")
    nq = {d: len([q for q in queues if q.startswith(d + "-")]) for d in ("rx", "tx")}
    with Tool("netqtop", "-j", "-n", netns.host_if, "-i", "1") as t:
        traffic(netns)
        # At least two intervals: wait for the first one's records.
        buf = b""
        while b'"seq":2' not in buf:
            select.select([t.proc.stdout], [], [], 10)
            chunk = os.read(t.proc.stdout.fileno(), 65536)
            assert chunk, "netqtop ended"
            buf += chunk
        traffic(netns)
        out, err, rc = t.stop()
    assert rc == 0, err
    records = json_lines(buf.decode() + out)
    loss_record(records)
    assert {r["dev"] for r in records if r["type"] == "queue"} == {netns.host_if}
    seqs = sorted({r["seq"] for r in records if r["type"] == "queue"})
    assert seqs == list(range(1, len(seqs) + 1)) and len(seqs) >= 2
    for s in seqs:
        for d in ("rx", "tx"):
            assert sorted(r["queue"] for r in records if r.get("seq") == s
                          and r["direction"] == d) == list(range(nq[d])), (s, d)
    p, b, sizes = expected(OUT, 0)
    assert totals(records, netns.host_if, "rx") == (2 * p, 2 * b, [2 * x for x in sizes])
    p, b, sizes = expected(IN, ETH)
    assert totals(records, netns.host_if, "tx") == (2 * p, 2 * b, [2 * x for x in sizes])


def test_text_table(netns):
    """bcc's table for one device: TX then RX, every queue and a Total;
    avg_size and the buckets of what the test sent."""
    quiet_pair(netns)
    with Tool("netqtop", "-n", netns.host_if, "-i", "3600", "-t") as t:
        traffic(netns)
        out, err, rc = t.stop()
    assert rc == 0, err
    lines = out.splitlines()
    head = (" QueueID    avg_size   [0, 64)    [64, 512)  [512, 2K)  [2K, 16K)  "
            "[16K, 64K) [64K, inf) BPS        PPS        ")
    tx, rx = lines.index("TX"), lines.index("RX")
    assert lines[tx + 1] == head and lines[rx + 1] == head
    n, b, sizes = expected(OUT, 0)
    total = lines[rx + 2:][[l.split()[0] for l in lines[rx + 2:]].index("Total")].split()
    avg = round(b / n, 2)
    assert total[1] == f"{avg:g}" and total[2:8] == [str(s) for s in sizes], lines
    assert lines[-1] == "-" * 110


@pytest.mark.parametrize("args,words", [
    (["-n", "tk-no-such-dev"], ["'tk-no-such-dev'", "no such network device"]),
    (["-n", "x" * 16], ["--device", "1 to 15"]),
    (["-n", ""], ["--device"]),
    (["-i", "0"], ["--interval", "'0'"]),
    (["-i", "x"], ["--interval", "'x'"]),
    (["-p", "1"], ["task filters"]),
    (["--", "true"], ["task filters", "-- COMMAND"]),
    (["--bogus"], ["'--bogus'"]),
])
def test_usage_errors(args, words):
    r = run("netqtop", *args)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("netqtop: "), r.stderr
    for w in words:
        assert w in r.stderr, r.stderr
