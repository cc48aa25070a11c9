"""tracekitd's network collectors end to end: TCP state changes
(tcpstates), packets and bytes per device (netdev, netqtop's BPF),
packet drops by reason (drops, tcpdrop's BPF) and retransmitted segments
by remote address (retrans, tcpretrans' BPF), each counting what the
test makes happen in a network namespace of its own (netns.py, IPv6 off
on its veth so that nothing else crosses it), /metrics scraped before and
after: exact deltas for the namespace's series. The series carry the
namespace (its inode), so traffic elsewhere on the machine (other tests,
the scrapes themselves) is not in them."""
import os
import socket
import subprocess
import sys

import pytest

from conftest import ROOT, Tool, tool_path
from netem import Flow
from netns import Client, NetNs, Server, transfer
from test_tcpdrop import CLOSED, drops
from test_tcpretrans import Retransmits, lossy_transfer, of_flow, records
from test_tcpstates import hidden_changes
from test_tracekitd import Daemon, samples, series, value, write_config

OFF = dict(syscalls=False, execs=False, runqlat=False, tcpconnect=False, vfsstat=False)
NO_REASON = "gives no drop reason on this kernel"


@pytest.fixture
def ns4():
    """A namespace with IPv4 only on its veth (netns.NetNs(ipv6=False))."""
    ns = NetNs(ipv6=False)
    try:
        yield ns
    finally:
        ns.close()


def netns_inode(ns):
    return str(os.stat(f"/run/netns/{ns.name}").st_ino)


def deltas(before, after, name, ns, *labels):
    """{(label values...): after - before} of name's series in ns, those
    that changed."""
    inode = netns_inode(ns)
    out = {}
    for k, v in series(after, name).items():
        d = dict(k)
        if d["netns"] != inode:
            continue
        delta = v - value(before, name, **d)
        if delta:
            key = tuple(d[l] for l in labels)
            out[key] = out.get(key, 0) + delta
    return out


def promtool_ok(text):
    res = subprocess.run(["promtool", "check", "metrics"], input=text,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.kernel
def test_tcp_state_changes_exact(tmp_path, ns4):
    """A server in the namespace listens, accepts N connections from a
    client here (the client closes first), and closes its listener: its
    changes, exactly, by old and new state."""
    n = 3
    conf = tmp_path / "c.conf"
    write_config(conf, **OFF, tcpstates=True, drops=False)
    with Daemon(config=str(conf)) as d:
        before = samples(d.scrape())
        with hidden_changes() as h, Server(ns4, 4) as s, Client() as c:
            for i in range(n):
                transfer(ns4, s, c, 1000 + i, 10)
        # The server has exited: its listener is closed.
        text = d.scrape()
    after = samples(text)
    got = deltas(before, after, "tracekit_tcp_state_changes_total", ns4,
                 "oldstate", "newstate")
    # A child the kernel made twice for one handshake (two CPUs' race in
    # the SYN_RECV stage, seen under TCG) is closed at once: it is no
    # connection of the test's.
    raced = got.pop(("SYN_RECV", "CLOSE"), 0)
    want = {
        ("CLOSE", "LISTEN"): 1,
        ("LISTEN", "SYN_RECV"): n + raced,
        ("SYN_RECV", "ESTABLISHED"): n,
        ("ESTABLISHED", "CLOSE_WAIT"): n,
        ("CLOSE_WAIT", "LAST_ACK"): n,
        ("LAST_ACK", "CLOSE"): n,
        ("LISTEN", "CLOSE"): 1,
    }
    # Less, each, what the server's sockets changed in PID 1's threads,
    # which no BPF program sees here (test_tcpstates.seen).
    hidden = {}
    for (sport, dport, old, new), count in h.counts.items():
        if sport == s.port:
            hidden[old, new] = hidden.get((old, new), 0) + count
    assert set(got) <= set(want), (got, hidden)
    for change, count in want.items():
        assert count - hidden.get(change, 0) <= got.get(change, 0) <= count, (got, hidden)
    assert value(after, "tracekit_collector_up", collector="tcpstates") == 1
    assert value(after, "tracekit_map_insert_failures_total", collector="tcpstates") == 0
    promtool_ok(text)


ETH_P_TEST = 0x88B5   # IEEE 802 local experimental ethertype: no stack handles it
FRAME = 300


def mac(ns, ifname, inside):
    path = f"/sys/class/net/{ifname}/address"
    if inside:
        return ns.run("cat", path).strip()
    with open(path) as f:
        return f.read().strip()


# In the namespace: receive N frames of ETH_P_TEST on IF, say "ready"
# first and "done" after the last (netif_receive_skb has run for each by
# then: it runs before the packet reaches any socket).
RECEIVER = r"""
import socket, sys
ifname, n, proto = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(proto))
s.bind((ifname, 0))
print("ready", flush=True)
for _ in range(n):
    s.recv(65536)
print("done", flush=True)
"""


@pytest.mark.kernel
def test_net_packets_and_bytes_exact(tmp_path, ns4):
    """N raw Ethernet frames of FRAME bytes sent on the host's end of the
    veth, received on the namespace's: N packets and N * FRAME bytes sent
    (skb->len with the Ethernet header), N packets and N * (FRAME - 14)
    received (without it), per device and direction."""
    n = 25
    conf = tmp_path / "c.conf"
    write_config(conf, **OFF, tcpstates=False, drops=False, netdev=True)
    dst = bytes.fromhex(mac(ns4, ns4.peer_if, True).replace(":", ""))
    src = bytes.fromhex(mac(ns4, ns4.host_if, False).replace(":", ""))
    frame = dst + src + ETH_P_TEST.to_bytes(2, "big")
    frame += bytes(FRAME - len(frame))
    with Daemon(config=str(conf)) as d:
        rx = subprocess.Popen(ns4.argv(sys.executable, "-c", RECEIVER, ns4.peer_if, str(n),
                                       str(ETH_P_TEST)),
                              stdout=subprocess.PIPE, text=True)
        try:
            assert rx.stdout.readline() == "ready\n"
            before = samples(d.scrape())
            with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as s:
                s.bind((ns4.host_if, 0))
                for _ in range(n):
                    s.send(frame)
            assert rx.stdout.readline() == "done\n"
        finally:
            rx.kill()
            rx.wait()
        text = d.scrape()
    after = samples(text)
    host = str(os.stat("/proc/self/ns/net").st_ino)
    for metric, per_tx, per_rx in (("tracekit_net_packets_total", 1, 1),
                                   ("tracekit_net_bytes_total", FRAME, FRAME - 14)):
        mine = {}
        for k, v in series(after, metric).items():
            lab = dict(k)
            if lab["device"] in (ns4.host_if, ns4.peer_if):
                key = (lab["netns"], lab["device"], lab["direction"])
                mine[key] = mine.get(key, 0) + v - value(before, metric, **lab)
        assert {k: v for k, v in mine.items() if v} == {
            (host, ns4.host_if, "tx"): n * per_tx,
            (netns_inode(ns4), ns4.peer_if, "rx"): n * per_rx,
        }, (metric, mine)
    promtool_ok(text)


@pytest.mark.kernel
def test_packet_drops_by_reason_exact(tmp_path, ns4):
    """A TCP SYN and a UDP datagram to a port where nothing listens in
    the namespace: one drop each there, with the kernel's reason
    (NO_SOCKET; "-" before 5.17, which gives none) and the protocol."""
    conf = tmp_path / "c.conf"
    write_config(conf, **OFF, tcpstates=False, drops=True)
    with Daemon(config=str(conf)) as d:
        before = samples(d.scrape())
        drops(ns4, 4)
        text = d.scrape()
        _, err, rc = d.stop()
    assert rc == 0, err
    after = samples(text)
    reason = "-" if NO_REASON in err else "NO_SOCKET"
    got = deltas(before, after, "tracekit_packet_drops_total", ns4, "reason", "protocol")
    assert got == {(reason, "tcp"): 1, (reason, "udp"): 1}, (got, err)
    assert value(after, "tracekit_collector_up", collector="drops") == 1
    promtool_ok(text)


def test_collectors_switched_off_are_absent(tmp_path):
    """tcpstates = no, drops = no, netdev unset (off by default): no
    health series, no metrics of theirs."""
    conf = tmp_path / "c.conf"
    write_config(conf, syscalls=True, execs=False, runqlat=False, tcpconnect=False,
                 vfsstat=False, tcpstates=False, drops=False, retrans=False,
                 hardirqs=False, softirqs=False, runqlen=False)
    with Daemon(config=str(conf)) as d:
        text = d.scrape()
    s = samples(text)
    up = {dict(k)["collector"] for k in series(s, "tracekit_collector_up")}
    assert up == {"syscalls"}, up
    for name in ("tracekit_tcp_state_changes_total", "tracekit_net_packets_total",
                 "tracekit_net_bytes_total", "tracekit_packet_drops_total",
                 "tracekit_tcp_retransmits_total"):
        assert f"# TYPE {name} " not in text, name


def test_default_config_runs_tcpstates_drops_and_retrans_not_netdev():
    """The shipped file: tcpstates, drops and retrans on, netdev off (it
    runs on every packet)."""
    res = subprocess.run([tool_path("tracekitd"), "--config", str(ROOT / "tools/tracekitd.conf"),
                          "--check-config"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    names = res.stdout.split("collectors: ")[1].rstrip(")\n").split()
    assert {"tcpstates", "drops", "retrans"} <= set(names) and "netdev" not in names, names


@pytest.mark.parametrize("content,line", [
    ("[collectors]\ntcpretrans = yes\n",
     ":2: unknown collector 'tcpretrans' (syscalls, execs, runqlat, tcpconnect, vfsstat, "
     "block, fs, tcpstates, netdev, drops, retrans, hardirqs, softirqs, cpudist, runqlen; "
     "fs_types)"),
    ("[collectors]\nnetdev = maybe\n", ":2: netdev: bad value 'maybe' (yes or no)"),
])
def test_bad_network_collector_config_is_one_line(tmp_path, content, line):
    conf = tmp_path / "bad.conf"
    conf.write_text(content)
    res = subprocess.run([tool_path("tracekitd"), "--config", str(conf), "--check-config"],
                         capture_output=True, text=True)
    assert (res.returncode, res.stderr) == (1, f"tracekitd: {conf}{line}\n")


@pytest.mark.kernel
def test_all_network_collectors_promtool(tmp_path, ns4):
    """tcpconnect, tcpstates, netdev, drops and retrans at once, after a connection
    and a drop: promtool accepts the scrape; no series is cut by the cap."""
    conf = tmp_path / "c.conf"
    write_config(conf, syscalls=False, execs=False, runqlat=False, tcpconnect=True,
                 vfsstat=False, tcpstates=True, netdev=True, drops=True, retrans=True)
    with Daemon(config=str(conf)) as d:
        with Server(ns4, 4) as s, Client() as c:
            transfer(ns4, s, c, 100, 100)
        drops(ns4, 4)
        text = d.scrape()
    s = samples(text)
    for c in ("tcpconnect", "tcpstates", "netdev", "drops"):
        assert value(s, "tracekit_collector_up", collector=c) == 1, c
    assert value(s, "tracekit_tcp_connects_total", family="ipv4", daddr=ns4.peer4,
                 dport=str(CLOSED)) == 1
    assert not any(v for v in series(s, "tracekit_series_dropped_total").values())
    promtool_ok(text)


@pytest.mark.kernel
def test_state_changes_capped_with_overflow_series(tmp_path, ns4):
    """--max-series 2: two series of tracekit_tcp_state_changes_total
    kept, the rest summed into one whose labels are all __overflow__, and
    counted in tracekit_series_dropped_total (the namespace's connection
    alone makes 7 series)."""
    conf = tmp_path / "c.conf"
    write_config(conf, **OFF, tcpstates=True, drops=False)
    with Daemon("--max-series", 2, config=str(conf)) as d:
        with Server(ns4, 4) as s, Client() as c:
            transfer(ns4, s, c, 10, 10)
        text = d.scrape()
    got = series(samples(text), "tracekit_tcp_state_changes_total")
    over = frozenset({("netns", "__overflow__"), ("oldstate", "__overflow__"),
                      ("newstate", "__overflow__")})
    assert over in got and len(got) == 3, got
    assert got[over] >= 5   # at least the namespace's other series
    assert value(samples(text), "tracekit_series_dropped_total",
                 metric="tracekit_tcp_state_changes_total") == got[over]
    promtool_ok(text)


@pytest.mark.kernel
@pytest.mark.parametrize("ip", [4, 6])
def test_retransmits_by_remote_address_exact(tmp_path, netns, ip):
    """A sender in the namespace retransmits (its receiver's ACKs dropped
    for a while, as test_tcpretrans.py does): the series of the
    receiver's address (the test's own subnet) grows by exactly the
    segments tcpretrans -c counts for that flow beside it, which counts
    what the kernel did (test_tcpretrans.Retransmits)."""
    conf = tmp_path / "c.conf"
    write_config(conf, **OFF, tcpstates=False, drops=False, retrans=True)
    with Daemon(config=str(conf)) as d:
        before = samples(d.scrape())
        with Flow(netns, ip) as f, Retransmits(netns, f) as k, \
                Tool("tcpretrans", "-j", "-c") as c:
            lossy_transfer(netns, f, k)
            out, err, rc = c.stop()
        assert rc == 0, err
        text = d.scrape()
    (flow,) = of_flow(records(out), f)
    k.assert_counted(flow)
    after = samples(text)
    family = "ipv6" if ip == 6 else "ipv4"
    got = (value(after, "tracekit_tcp_retransmits_total", family=family, raddr=f.caddr)
           - value(before, "tracekit_tcp_retransmits_total", family=family, raddr=f.caddr))
    assert got == flow["segments"] and k.segs >= 3, (got, flow, k.segs)
    assert value(after, "tracekit_collector_up", collector="retrans") == 1
    promtool_ok(text)
