"""tcpdrop end to end: packets the test makes the kernel in a namespace
(netns.py) drop, a TCP SYN and a UDP datagram to a port where nothing
listens there, IPv4 and IPv6; each is reported once, with the kernel's
reason (NO_SOCKET, on kernels whose tracepoint has reasons: 5.17+), the
addresses and ports of the packet and its TCP flags. The test waits for
the kernel's answer to each (the RST, the ICMP port unreachable), which
it sends before it frees the packet."""
import errno
import socket

import pytest

from conftest import Tool, json_lines, loss_record, run

METHODS = ["tp_btf", "raw_tp", "tp"]
TARGET = {"tp_btf": "kfree_skb", "raw_tp": "kfree_skb", "tp": "skb/kfree_skb"}
CLOSED = 9   # nothing listens in a new namespace
NO_REASON = "reports no drop reason on this kernel"


def drops(ns, ip):
    """A SYN and a UDP datagram to CLOSED in the namespace; returns
    {"tcp": client port, "udp": client port} once both were refused."""
    fam = socket.AF_INET if ip == 4 else socket.AF_INET6
    dst = ns.peer4 if ip == 4 else ns.peer6
    ports = {}
    t = socket.socket(fam, socket.SOCK_STREAM)
    t.bind((ns.addr4 if ip == 4 else ns.addr6, 0))
    ports["tcp"] = t.getsockname()[1]
    with pytest.raises(ConnectionRefusedError):
        t.connect((dst, CLOSED))
    t.close()
    u = socket.socket(fam, socket.SOCK_DGRAM)
    u.settimeout(20)
    u.connect((dst, CLOSED))
    ports["udp"] = u.getsockname()[1]
    u.send(b"drop me")
    with pytest.raises(ConnectionRefusedError):
        u.recv(100)
    u.close()
    return ports


def ours(records, ns, ip, ports):
    """The drops of the test's packets, and of anything else between the
    test's ports and CLOSED (either way)."""
    here = ns.addr4 if ip == 4 else ns.addr6
    there = ns.peer4 if ip == 4 else ns.peer6
    got = {}
    for r in records:
        if r.get("type") != "drop" or {r["saddr"], r["daddr"]} != {here, there}:
            continue
        for proto, port in ports.items():
            if r["proto"] == proto and {r["sport"], r["dport"]} == {port, CLOSED}:
                got.setdefault(proto, []).append(r)
    return got


def check(got, ns, ip, ports, has_reason):
    here = ns.addr4 if ip == 4 else ns.addr6
    there = ns.peer4 if ip == 4 else ns.peer6
    assert sorted(got) == ["tcp", "udp"], got
    for proto in ("tcp", "udp"):
        assert len(got[proto]) == 1, got[proto]
        (r,) = got[proto]
        assert (r["ip"], r["saddr"], r["sport"], r["daddr"], r["dport"]) == \
            (ip, here, ports[proto], there, CLOSED), r
        assert r["state"] is None, r   # no socket
        assert r["tcpflags"] == ("SYN" if proto == "tcp" else None), r
        if has_reason:
            assert (r["reason"], isinstance(r["code"], int)) == ("NO_SOCKET", True), r
        else:
            assert (r["reason"], r["code"]) == (None, None), r
        want = {("tcp", 4): "tcp_v4_rcv", ("tcp", 6): "tcp_v6_rcv",
                ("udp", 4): "__udp4_lib_rcv", ("udp", 6): "__udp6_lib_rcv"}[proto, ip]
        assert r["location"].split("+")[0] == want, r


@pytest.mark.kernel
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("ip", [4, 6])
def test_drops_to_a_closed_port(netns, method, ip):
    with Tool("tcpdrop", "-j", "-v", env={"TRACEKIT_ATTACH": method}) as t:
        ports = drops(netns, ip)
        out, err, rc = t.stop()
    assert rc == 0, err
    assert f"tcpdrop: probe drop: {method} {TARGET[method]}" in err.splitlines(), err
    records = json_lines(out)
    loss = loss_record(records)
    assert loss["events_lost"] == 0
    check(ours(records, netns, ip, ports), netns, ip, ports, NO_REASON not in err)


@pytest.mark.kernel
def test_kernel_stack_and_family_filter(netns):
    """-K: each drop's kernel stack, from the function that freed it
    outwards (the tracing machinery left out); -4 leaves IPv6 out."""
    with Tool("tcpdrop", "-j", "-K", "-4", "-v") as t:
        p4 = drops(netns, 4)
        p6 = drops(netns, 6)
        out, err, rc = t.stop()
    assert rc == 0, err
    records = json_lines(out)
    loss_record(records)
    assert {r["ip"] for r in records if r["type"] == "drop"} <= {4}
    assert ours(records, netns, 6, p6) == {}
    got = ours(records, netns, 4, p4)
    check(got, netns, 4, p4, NO_REASON not in err)
    for proto, fn in (("tcp", "tcp_v4_rcv"), ("udp", "__udp4_lib_rcv")):
        frames = [f.split("+")[0] for f in got[proto][0]["kstack"]]
        assert fn in frames and "ip_local_deliver_finish" in frames, frames
        assert not any(f.startswith(("bpf_prog_", "bpf_trace_run", "__bpf_trace"))
                       for f in frames), frames


@pytest.mark.kernel
def test_text_line(netns):
    """bcc's columns, with PROTO after IP."""
    with Tool("tcpdrop", "-v") as t:
        ports = drops(netns, 4)
        out, err, rc = t.stop()
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["TIME", "PID", "IP", "PROTO", "SADDR:SPORT", ">",
                                "DADDR:DPORT", "STATE", "(FLAGS)", "REASON", "(CODE)"]
    mine = [l.split() for l in lines[1:]
            if f"{netns.addr4}:{ports['tcp']}" in l.split()]
    assert len(mine) == 1, lines
    w = mine[0]
    assert w[2:8] == ["4", "tcp", f"{netns.addr4}:{ports['tcp']}", ">",
                      f"{netns.peer4}:{CLOSED}", "-"], w
    assert w[8] == "(SYN)", w
    if NO_REASON in err:
        assert w[9:] == ["-"], w
    else:
        assert w[9] == "NO_SOCKET" and w[10].startswith("(") and w[10].endswith(")"), w


@pytest.mark.parametrize("args,words", [
    (["-4", "-6"], ["--ipv4", "--ipv6"]),
    (["--netns-id", "1"], ["'--netns-id'"]),
    (["--pid-netns", "1"], ["'--pid-netns'"]),
    (["5"], ["'5'"]),
    (["--bogus"], ["'--bogus'"]),
])
def test_usage_errors(args, words):
    r = run("tcpdrop", *args)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("tcpdrop: "), r.stderr
    for w in words:
        assert w in r.stderr, r.stderr
