"""killsnoop end to end: a sender named for the test (signals.py) makes
kill()-family calls at a target that survives them, and two that fail;
the tool must report exactly those calls, with their results."""
import os
import signal

import pytest

from conftest import Tool, json_lines, loss_record, run
from signals import Target, name, send

USR1, USR2, KILL = int(signal.SIGUSR1), int(signal.SIGUSR2), int(signal.SIGKILL)
NOPID = 4194303   # above any pid_max this machine gives (checked below)


def calls(t):
    """The calls, and what killsnoop -j should show of each:
    (syscall, sig, tpid, tgid or None, ret)."""
    assert NOPID > t.pid
    return ([f"kill:{t.pid},0", f"kill:{t.pid},{USR1}", f"tkill:{t.pid},{USR2}",
             f"tgkill:{t.pid},{t.pid},{USR1}", f"sigqueue:{t.pid},{USR1}",
             f"kill:{NOPID},{KILL}", f"kill:{t.pid},99"],
            [("kill", 0, t.pid, None, 0), ("kill", USR1, t.pid, None, 0),
             ("tkill", USR2, t.pid, None, 0), ("tgkill", USR1, t.pid, t.pid, 0),
             ("rt_sigqueueinfo", USR1, t.pid, None, 0),
             ("kill", KILL, NOPID, None, -3), ("kill", 99, t.pid, None, -22)])


def seen(out, comm):
    return [(r["syscall"], r["sig"], r["tpid"], r.get("tgid"), r["ret"])
            for r in json_lines(out) if r.get("comm") == comm]


@pytest.mark.kernel
def test_calls_exactly():
    comm = name("tkk")
    with Target() as t, Tool("killsnoop", "-j") as tool:
        todo, want = calls(t)
        results, sender = send(comm, *todo)
        out, err, rc = tool.stop()
    assert rc == 0, err
    assert [r for _, r in results] == [w[4] for w in want]
    assert seen(out, comm) == want
    records = [r for r in json_lines(out) if r.get("comm") == comm]
    assert {(r["pid"], r["tid"], r["uid"]) for r in records} == {(sender, sender, 0)}
    assert [r["signal_name"] for r in records] == [None, "USR1", "USR2", "USR1", "USR1",
                                                   "KILL", None]
    assert [r["error"] for r in records] == [None] * 5 + ["ESRCH", "EINVAL"]
    assert loss_record(json_lines(out)) == {"type": "loss", "events_lost": 0,
                                            "map_inserts_failed": 0}


@pytest.mark.kernel
@pytest.mark.parametrize("args,keep", [
    (["-x"], lambda w, t: w[4] < 0),
    (["-s", "USR2,SIGKILL"], lambda w, t: w[1] in (USR2, KILL)),
    (["-s", "10"], lambda w, t: w[1] == USR1),
    (["-T", "TARGET"], lambda w, t: w[2] == t.pid),
])
def test_filters_keep_what_they_name(args, keep):
    comm = name("tkk")
    with Target() as t:
        args = [str(t.pid) if a == "TARGET" else a for a in args]
        with Tool("killsnoop", "-j", *args) as tool:
            todo, want = calls(t)
            send(comm, *todo)
            out, err, rc = tool.stop()
    assert rc == 0, err
    assert seen(out, comm) == [w for w in want if keep(w, t)]


def test_text_columns():
    with open("/proc/sys/kernel/pid_max") as f:
        w = max(6, len(f.read().strip()) + 1)
    comm = name("tkk")
    with Target() as t, Tool("killsnoop") as tool:
        _, sender = send(comm, f"kill:{t.pid},{USR1}", f"kill:{NOPID},{KILL}")
        out, err, rc = tool.stop()
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == f"{'TIME':<9} {'PID':<{w}} {'COMM':<16} SIG  {'TPID':<{w}} RESULT"
    mine = [l[10:] for l in lines if l[10:].split()[1:2] == [comm]]
    assert mine == [f"{sender:<{w}} {comm:<16} {USR1:<4} {t.pid:<{w}} 0",
                    f"{sender:<{w}} {comm:<16} {KILL:<4} {NOPID:<{w}} -3"]


@pytest.mark.parametrize("args,words", [
    (["-s", "BOGUS"], ["--signal", "'BOGUS'"]),
    (["-s", "9,65"], ["--signal", "'65'"]),
    (["-T", "x"], ["--tpid", "'x'"]),
    (["7"], ["'7'"]),
])
def test_usage_errors(args, words):
    r = run("killsnoop", *args)
    assert (r.returncode, r.stdout) == (2, ""), r
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("killsnoop: "), r.stderr
    for w in words:
        assert w in r.stderr, r.stderr
