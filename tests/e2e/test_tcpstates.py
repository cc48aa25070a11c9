"""tcpstates end to end: a TCP connection the test opens from its own
namespace to a server in another (netns.py), sends bytes over both ways
and closes, client first; every state change of its three sockets
(the client's, the server's listener and the accepted one) is reported,
in order, with the task that made it where only that task can.

A change made in softirq while a thread of PID 1 ran reaches no BPF
program on this repository's host (tracefs.py): the tests take the
changes that a tracefs instance saw there, and the tool lacks, out of
what they expect (seen)."""
import re

import pytest

import tracefs
from conftest import Tool, json_lines, loss_record, run
from netns import CLIENT_COMM, SERVER_COMM, Client, Server, one_client_argv, transfer

METHODS = ["tp_btf", "raw_tp", "tp"]
TARGET = {"tp_btf": "inet_sock_set_state", "raw_tp": "inet_sock_set_state",
          "tp": "sock/inet_sock_set_state"}
# What Linux does with a connection closed by the client first, the
# server closing once it has read the client's FIN. None: a change made
# in softirq, by whichever task ran (on veth, usually the sender).
CLIENT_SEQ = [("CLOSE", "SYN_SENT", "client"), ("SYN_SENT", "ESTABLISHED", None),
              ("ESTABLISHED", "FIN_WAIT1", "client"), ("FIN_WAIT1", "FIN_WAIT2", None),
              ("FIN_WAIT2", "CLOSE", None)]
# The accepted socket's first change, LISTEN -> SYN_RECV, is made where
# the kernel makes it from the listener (inet_csk_clone_lock): this
# host's 6.18 has set its peer's address and port by then; Debian's 6.1
# has not (the record has the listener's, remote port 0), and only its
# SKADDR ties it to the connection.
ACCEPTED_SEQ = [("LISTEN", "SYN_RECV", None), ("SYN_RECV", "ESTABLISHED", None),
                ("ESTABLISHED", "CLOSE_WAIT", None), ("CLOSE_WAIT", "LAST_ACK", "server"),
                ("LAST_ACK", "CLOSE", None)]
LISTENER_SEQ = [("CLOSE", "LISTEN", "server"), ("LISTEN", "CLOSE", "server")]
HEADER = ("SKADDR           C-PID C-COMM     LADDR           LPORT RADDR           RPORT "
          "OLDSTATE    -> NEWSTATE    MS")


def change_of(text):
    """(sport, dport, oldstate, newstate) of an inet_sock_set_state
    event's text, the states as tcpstates names them."""
    f = dict(w.split("=", 1) for w in text.split() if "=" in w)
    return (int(f["sport"]), int(f["dport"]),
            f["oldstate"].removeprefix("TCP_"), f["newstate"].removeprefix("TCP_"))


def hidden_changes():
    """The state changes made in PID 1's threads, in a with block: its
    counts, keyed by change_of."""
    return tracefs.AgentEvents("sock/inet_sock_set_state", change_of)


def seen(seq, recs, hidden, ports):
    """seq (its (old, new, who) changes of one socket, recs the tool's
    records of it) less the changes recs lacks that were made in PID 1's
    threads (hidden: hidden_changes' counts) on a socket of ports."""
    got = [(r["oldstate"], r["newstate"]) for r in recs]
    out, i = [], 0
    for s in seq:
        if i < len(got) and got[i] == s[:2]:
            i += 1
        elif any((old, new) == s[:2] and {sport, dport} <= {*ports, 0}
                 for sport, dport, old, new in hidden):
            continue
        out.append(s)
    return out


def connection(netns, ip, n=5000, m=700, server_close=True):
    """One connection; returns {"client": pid, "server": pid, "sport":
    client port, "port": server port, "server_addr", "client_addr"}."""
    with Server(netns, ip) as s, Client() as c:
        sport = transfer(netns, s, c, n, m)
        s.close()   # its listener's change to CLOSE too
    return {"client": c.pid, "server": s.pid, "sport": sport, "port": s.port,
            "server_addr": s.addr, "client_addr": netns.addr4 if ip == 4 else netns.addr6}


def sockets_of(records, conn):
    """The records of the connection's client, accepted and listening
    sockets (by their ports; the accepted socket's first change by its
    SKADDR too), each list in order."""
    states = [r for r in records if r.get("type") == "state"]
    accepted_sk = {r["skaddr"] for r in states
                   if (r["sport"], r["dport"]) == (conn["port"], conn["sport"])}
    client, accepted, listener = [], [], []
    for r in states:
        if r["skaddr"] in accepted_sk and r["sport"] == conn["port"]:
            accepted.append(r)
        elif r["dport"] == conn["port"] and r["sport"] in (0, conn["sport"]):
            client.append(r)
        elif r["sport"] == conn["port"] and r["dport"] == 0:
            listener.append(r)
    return client, accepted, listener


def check(recs, seq, conn, local, remote, ip, hidden):
    seq = seen(seq, recs, hidden, (conn["sport"], conn["port"]))
    assert [(r["oldstate"], r["newstate"]) for r in recs] == [s[:2] for s in seq], recs
    assert len({r["skaddr"] for r in recs}) == 1, recs
    assert re.fullmatch(r"0x[0-9a-f]+", recs[0]["skaddr"])
    for i, (r, (old, new, who)) in enumerate(zip(recs, seq)):
        if (old, new) == ("LISTEN", "SYN_RECV") and r["dport"] == 0:
            remote_seen = "0.0.0.0" if ip == 4 else "::"   # 6.1: the listener's
        else:
            remote_seen = remote
        assert (r["ip"], r["saddr"], r["daddr"]) == (ip, local, remote_seen), r
        if who:
            assert (r["pid"], r["comm"]) == (
                (conn["client"], CLIENT_COMM) if who == "client" else
                (conn["server"], SERVER_COMM)), r
        # The time in the old state: unknown for a socket's first change.
        if i == 0:
            assert r["old_state_ns"] is None, r
        else:
            assert isinstance(r["old_state_ns"], int) and r["old_state_ns"] >= 0, r


def check_connection(records, conn, ip, hidden, listener_seq=LISTENER_SEQ):
    client, accepted, listener = sockets_of(records, conn)
    any4 = "0.0.0.0" if ip == 4 else "::"
    check(client, CLIENT_SEQ, conn, conn["client_addr"], conn["server_addr"], ip, hidden)
    # A connect's local port is picked just after its change to SYN_SENT.
    assert [r["sport"] for r in client] == [0] + [conn["sport"]] * (len(client) - 1)
    check(accepted, ACCEPTED_SEQ, conn, conn["server_addr"], conn["client_addr"], ip, hidden)
    check(listener, listener_seq, conn, conn["server_addr"], any4, ip, hidden)


@pytest.mark.kernel
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("ip", [4, 6])
def test_state_sequence_of_a_connection(netns, method, ip):
    with hidden_changes() as h, \
            Tool("tcpstates", "-j", "-v", env={"TRACEKIT_ATTACH": method}) as t:
        conn = connection(netns, ip)
        out, err, rc = t.stop()
    assert rc == 0, err
    assert f"tcpstates: probe state: {method} {TARGET[method]}" in err.splitlines(), err
    records = json_lines(out)
    loss = loss_record(records)
    assert (loss["events_lost"], loss["map_inserts_failed"]) == (0, 0)
    check_connection(records, conn, ip, h.counts)


@pytest.mark.kernel
def test_family_and_port_filters(netns):
    """-4 and -6 drop the other family's sockets; -L PORT keeps the
    server's (listening and accepted: local port PORT), -D PORT the
    client's (remote port PORT), of each family."""
    runs = {}
    for opts in (["-4"], ["-6"], ["-L"], ["-D"]):
        conns = {}
        with Server(netns, 4) as s4, Server(netns, 6) as s6:
            args = opts if len(opts[0]) == 2 and opts[0][1] in "46" else \
                [opts[0], f"{s4.port},{s6.port}"]
            with hidden_changes() as h, Tool("tcpstates", "-j", *args) as t:
                for ip, s in ((4, s4), (6, s6)):
                    with Client() as c:
                        sport = transfer(netns, s, c, 100, 200)
                    conns[ip] = {"client": c.pid, "server": s.pid, "sport": sport,
                                 "port": s.port, "server_addr": s.addr,
                                 "client_addr": netns.addr4 if ip == 4 else netns.addr6}
                s4.close()
                s6.close()
                out, err, rc = t.stop()
        assert rc == 0, err
        runs[opts[0]] = (json_lines(out), conns, h.counts)
    for opt, ip in (("-4", 4), ("-6", 6)):
        records, conns, hidden = runs[opt]
        assert {r["ip"] for r in records if r["type"] == "state"} == {ip}, opt
        # The listeners listened before the tool started.
        check_connection(records, conns[ip], ip, hidden, LISTENER_SEQ[1:])
        assert sockets_of(records, conns[10 - ip]) == ([], [], []), opt

    def changes(recs, seq, conn, hidden):
        ports = (conn["sport"], conn["port"])
        return [(r["oldstate"], r["newstate"]) for r in recs], \
            [s[:2] for s in seen(seq, recs, hidden, ports)]
    records, conns, hidden = runs["-L"]
    for ip in (4, 6):
        client, accepted, listener = sockets_of(records, conns[ip])
        assert client == []
        got, want = changes(accepted, ACCEPTED_SEQ, conns[ip], hidden)
        assert got == want
        assert [(r["oldstate"], r["newstate"]) for r in listener] == [s[:2] for s in LISTENER_SEQ[1:]]
    assert {r["sport"] for r in records if r["type"] == "state"} == \
        {conns[4]["port"], conns[6]["port"]}
    records, conns, hidden = runs["-D"]
    for ip in (4, 6):
        client, accepted, listener = sockets_of(records, conns[ip])
        assert (accepted, listener) == ([], [])
        got, want = changes(client, CLIENT_SEQ, conns[ip], hidden)
        assert got == want
    assert {r["dport"] for r in records if r["type"] == "state"} == \
        {conns[4]["port"], conns[6]["port"]}


@pytest.mark.kernel
def test_command_keeps_its_own_changes(netns):
    """-- COMMAND: the changes made while COMMAND ran, its connect's and
    its close's at least, all its own (on veth the handshake is made in
    the sender's softirq: often COMMAND's too); none made by the
    server."""
    with Server(netns, 4) as s:
        s.proc.stdin.write("300 400\n")
        s.proc.stdin.flush()
        t = Tool("tcpstates", "-j", "--", *one_client_argv(s, 300, 400)).start()
        out, err, rc = t.wait()
        assert rc == 0, err
        assert s.proc.stdout.readline() == "done\n"
    records = json_lines(out)
    loss = loss_record(records)
    assert (loss["events_lost"], loss["map_inserts_failed"]) == (0, 0)
    states = records[:-1]
    assert {(r["comm"], r["pid"]) for r in states} == {(CLIENT_COMM, states[0]["pid"])}
    seq = [(r["oldstate"], r["newstate"]) for r in states]
    # What it made, in the order of the connection's changes.
    full = [s[:2] for s in CLIENT_SEQ + ACCEPTED_SEQ]   # either kernel's
    assert ("CLOSE", "SYN_SENT") in seq and ("ESTABLISHED", "FIN_WAIT1") in seq, seq
    assert ("CLOSE_WAIT", "LAST_ACK") not in seq and ("CLOSE", "LISTEN") not in seq, seq
    assert all(x in full for x in seq), seq


@pytest.mark.kernel
def test_text_columns(netns):
    """bcc's columns; -D keeps the client's socket; MS "-" where the
    time in the old state is unknown."""
    with Server(netns, 4) as s, Client() as c:
        with hidden_changes() as h, Tool("tcpstates", "-D", s.port) as t:
            sport = transfer(netns, s, c, 10, 10)
            out, err, rc = t.stop()
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == HEADER
    recs = [{"oldstate": line.split()[-4], "newstate": line.split()[-2]} for line in lines[1:]]
    seq = seen(CLIENT_SEQ, recs, h.counts, (sport, s.port))
    assert len(lines) == 1 + len(seq), out
    skaddr = lines[1].split()[0]
    for i, (line, (old, new, who)) in enumerate(zip(lines[1:], seq)):
        m = re.fullmatch(r"(\d+) +(\S+) +(.*) (-|\d+\.\d{3})", line[17:])
        assert line[:17] == f"{skaddr:<16} " and m, line
        if who:
            assert m[1] == str(c.pid) and m[2] == CLIENT_COMM, line
        lport = 0 if i == 0 else sport
        assert m[3] == (f"{netns.addr4:<15} {lport:<5} {s.addr:<15} {s.port:<5} "
                        f"{old:<11} -> {new:<11}"), line
        assert (m[4] == "-") == (i == 0), line


@pytest.mark.parametrize("args,words", [
    (["-L", "0"], ["--localport", "'0'"]),
    (["-L", "80,"], ["--localport", "'80,'"]),
    (["-D", "http"], ["--remoteport", "'http'"]),
    (["-D", "65536"], ["--remoteport", "'65536'"]),
    (["-4", "-6"], ["--ipv4", "--ipv6"]),
    (["-s"], ["'-s'", "-j"]),
    (["-Y"], ["'-Y'"]),
    (["-L"], ["'-L'", "needs a value"]),
    (["5"], ["'5'"]),
    (["--bogus"], ["'--bogus'"]),
])
def test_usage_errors(args, words):
    r = run("tcpstates", *args)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("tcpstates: "), r.stderr
    for w in words:
        assert w in r.stderr, r.stderr
