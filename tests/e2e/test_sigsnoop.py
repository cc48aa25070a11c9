"""sigsnoop end to end: a sender named for the test (signals.py) sends
signals at a target that catches SIGUSR1, holds SIGUSR2 blocked and
ignores SIGPIPE; the tool must report each signal generated, with the
kernel's result (delivered, already pending, ignored), and the SIGCHLD
the kernel sends when the target exits."""
import os
import signal

import pytest

from conftest import Tool, json_lines, loss_record, run
from signals import Target, name, send

USR1, USR2, PIPE = int(signal.SIGUSR1), int(signal.SIGUSR2), int(signal.SIGPIPE)
ALRM, HUP = int(signal.SIGALRM), int(signal.SIGHUP)
SI_USER, SI_QUEUE, SI_TKILL, CLD_EXITED = 0, -1, -6, 1


def calls(t):
    """What the sender does, and the signals the target gets from it:
    (sig, code, result). Each signal the target catches is sent once (a
    second could find the first not yet handled); the second SIGUSR2
    finds the first pending, as it is blocked; SIGPIPE is ignored;
    kill(..., 0) sends nothing."""
    return ([f"kill:{t.pid},0", f"kill:{t.pid},{USR1}", f"kill:{t.pid},{USR2}",
             f"kill:{t.pid},{USR2}", f"tgkill:{t.pid},{t.pid},{ALRM}",
             f"sigqueue:{t.pid},{HUP}", f"kill:{t.pid},{PIPE}"],
            [(USR1, SI_USER, 0), (USR2, SI_USER, 0), (USR2, SI_USER, 2),
             (ALRM, SI_TKILL, 0), (HUP, SI_QUEUE, 0), (PIPE, SI_USER, 1)])


def to(out, ttid):
    return [r for r in json_lines(out) if r.get("type") == "signal" and r["ttid"] == ttid]


@pytest.mark.kernel
def test_signals_exactly_with_their_results():
    comm = name("tks")
    with Target() as t, Tool("sigsnoop", "-j") as tool:
        todo, want = calls(t)
        results, sender = send(comm, *todo)
        assert t.end() == 0
        out, err, rc = tool.stop()
    assert rc == 0, err
    assert [r for _, r in results] == [0] * len(todo)
    got = to(out, t.pid)
    assert [(r["sig"], r["code"], r["result"]) for r in got] == want
    assert {(r["pid"], r["tid"], r["comm"], r["tgid"], r["uid"]) for r in got} == \
        {(sender, sender, comm, t.pid, 0)}
    assert [r["result_name"] for r in got] == ["delivered", "delivered", "already_pending",
                                               "delivered", "delivered", "ignored"]
    assert [r["group"] for r in got] == [True, True, True, False, True, True]
    # The kernel's SIGCHLD to this test when the target exited, sent by
    # the exiting target itself; ignored, as this process leaves SIGCHLD
    # at its default action, which is to ignore it.
    (chld,) = [r for r in to(out, os.getpid()) if r["pid"] == t.pid]
    assert (chld["sig"], chld["signal_name"], chld["code"], chld["result_name"]) == \
        (int(signal.SIGCHLD), "CHLD", CLD_EXITED, "ignored")
    assert loss_record(json_lines(out)) == {"type": "loss", "events_lost": 0,
                                            "map_inserts_failed": 0}


@pytest.mark.kernel
@pytest.mark.parametrize("args,keep,chlds", [
    (["-x"], lambda w: w[2] != 0, 1),
    (["-s", "USR2,SIGPIPE"], lambda w: w[0] in (USR2, PIPE), 0),
    (["-k"], lambda w: True, 0),
    (["-k", "-x", "-s", "PIPE"], lambda w: w[0] == PIPE, 0),
])
def test_filters_keep_what_they_name(args, keep, chlds):
    comm = name("tks")
    with Target() as t, Tool("sigsnoop", "-j", *args) as tool:
        todo, want = calls(t)
        send(comm, *todo)
        assert t.end() == 0
        out, err, rc = tool.stop()
    assert rc == 0, err
    assert [(r["sig"], r["code"], r["result"]) for r in to(out, t.pid)] == \
        [w for w in want if keep(w)]
    # The kernel's SIGCHLD at the target's exit (ignored here): sent by
    # no kill() call (-k), not in -s's set, not delivered (-x keeps it).
    chld = [r for r in to(out, os.getpid()) if r["pid"] == t.pid]
    assert len(chld) == chlds


def test_text_columns_with_names():
    comm = name("tks")
    with Target() as t, Tool("sigsnoop", "-n") as tool:
        _, sender = send(comm, f"kill:{t.pid},{USR1}", f"kill:{t.pid},{PIPE}")
        out, err, rc = tool.stop()
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == ("TIME     PID     COMM             SIG          TPID    TCOMM"
                        "            RESULT")
    mine = [l[9:] for l in lines if l[9:].split()[1:2] == [comm]
            and l[9:].split()[3] == str(t.pid)]
    assert mine == [f"{sender:<7} {comm:<16} {'SIGUSR1':<12} {t.pid:<7} {'python3':<16} 0",
                    f"{sender:<7} {comm:<16} {'SIGPIPE':<12} {t.pid:<7} {'python3':<16} 1"]


@pytest.mark.parametrize("args,words", [
    (["-s", "BOGUS"], ["--signal", "'BOGUS'"]),
    (["-s", ""], ["--signal"]),
    (["--kill=1"], ["--kill"]),
    (["7"], ["'7'"]),
])
def test_usage_errors(args, words):
    r = run("sigsnoop", *args)
    assert (r.returncode, r.stdout) == (2, ""), r
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("sigsnoop: "), r.stderr
    for w in words:
        assert w in r.stderr, r.stderr
