"""exitsnoop end to end: processes the test starts (tests/e2e/progs/
exit_target.c, named for the test) end with codes and signals the test
chooses; the tool must report each exactly once, with the status the
parent's waitpid() got, its pid, parent and ending thread."""
import os
import signal
import subprocess
import uuid

import pytest

from conftest import ROOT, Tool, json_lines, loss_record, run


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    path = tmp_path_factory.mktemp("exit_target") / "exit_target"
    subprocess.run(["cc", "-O1", "-pthread", "-o", str(path),
                    str(ROOT / "tests/e2e/progs/exit_target.c")], check=True)
    return str(path)


def name():
    return "tkx-" + uuid.uuid4().hex[:8]


def ends(target, comm, *mode):
    """Run exit_target COMM MODE...; its thread ids (the main thread's
    first) and the raw status waitpid() gave its parent, this test."""
    p = subprocess.Popen([target, comm, *map(str, mode)], stdout=subprocess.PIPE, text=True)
    tids = [int(t) for t in p.stdout.readline().split()]
    _, status = os.waitpid(p.pid, 0)
    p.returncode = 0   # reaped above
    p.stdout.close()
    return tids, status


def exits(out, comm):
    return [r for r in json_lines(out) if r.get("comm") == comm]


# (mode, raw status): exit() puts its code in bits 8-15, a signal is
# the low 7 bits.
CASES = [(("code", 0), 0), (("code", 3), 3 << 8), (("code", 255), 255 << 8),
         (("signal", 9), 9), (("signal", 15), 15), (("signal", 6), 6)]


@pytest.mark.kernel
def test_codes_and_signals_exactly(target):
    comm = name()
    with Tool("exitsnoop", "-j") as t:
        got = [ends(target, comm, *mode) for mode, _ in CASES]
        out, err, rc = t.stop()
    assert rc == 0, err
    want = []
    for (mode, status), (tids, waited) in zip(CASES, got):
        assert waited == status, (mode, waited)
        sig = status & 0x7f
        want.append({"type": "exit", "pid": tids[0], "tid": tids[0], "ppid": os.getpid(),
                     "uid": 0, "exit_code": status, "code": None if sig else status >> 8,
                     "signal": sig or None,
                     "signal_name": signal.Signals(sig).name[3:] if sig else None,
                     "core_dumped": False})
    records = exits(out, comm)
    for r in records:
        assert r.pop("age_ns") >= 0 and r.pop("comm") == comm
        r.pop("time", None)
    assert records == want
    assert loss_record(json_lines(out)) == {"type": "loss", "events_lost": 0,
                                            "map_inserts_failed": 0}


def test_text_columns(target):
    comm = name()
    with Tool("exitsnoop") as t:
        (a,), _ = ends(target, comm, "code", 0)
        (b,), _ = ends(target, comm, "code", 3)
        (c,), _ = ends(target, comm, "signal", 9)
        out, err, rc = t.stop()
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == "PCOMM            PID     PPID    TID     AGE(s)  EXIT_CODE"
    me = os.getpid()
    assert [l[:40] + l[48:] for l in lines if l.startswith(comm)] == [
        f"{comm:<16} {a:<7} {me:<7} {a:<7} 0",
        f"{comm:<16} {b:<7} {me:<7} {b:<7} code 3",
        f"{comm:<16} {c:<7} {me:<7} {c:<7} signal 9 (KILL)",
    ]


def test_timestamp_and_label_columns(target):
    comm = name()
    with Tool("exitsnoop", "-t", "--utc", "--label", "") as t:
        (a,), _ = ends(target, comm, "code", 2)
        out, err, rc = t.stop()
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == ("TIME-UTC     LABEL PCOMM            PID     PPID    TID     "
                        "AGE(s)  EXIT_CODE")
    (line,) = [l for l in lines if l[19:].startswith(comm)]
    assert line[2] == ":" and line[5] == ":" and line[8] == "." and line[12] == " ", line
    assert line[13:19] == "exit  " and line.endswith(" code 2"), line


@pytest.mark.kernel
def test_failed_only(target):
    comm = name()
    with Tool("exitsnoop", "-j", "-x") as t:
        ends(target, comm, "code", 0)
        (b,), _ = ends(target, comm, "code", 1)
        ends(target, comm, "code", 0)
        (c,), _ = ends(target, comm, "signal", 15)
        out, err, rc = t.stop()
    assert rc == 0, err
    assert [(r["pid"], r["exit_code"]) for r in exits(out, comm)] == [(b, 1 << 8), (c, 15)]


@pytest.mark.kernel
def test_process_ends_with_its_last_thread(target):
    """The main thread leaves first (pthread_exit, status 0); the process
    ends when its other thread calls exit(7): one exit, code 7, that
    thread's id."""
    comm = name()
    with Tool("exitsnoop", "-j") as t:
        (pid,), status = ends(target, comm, "leader-first", 7)
        out, err, rc = t.stop()
    assert rc == 0, err
    assert status == 7 << 8
    (r,) = exits(out, comm)
    assert (r["type"], r["pid"], r["exit_code"]) == ("exit", pid, 7 << 8)
    assert r["tid"] != pid and r["tid"] > 0


@pytest.mark.kernel
@pytest.mark.parametrize("how", ["cgroup", "fork"])
def test_command_whose_main_thread_ends_first(target, how):
    """-- COMMAND whose main thread exits before its other thread: the
    process is still COMMAND's until its last thread leaves, also where
    its forks are followed in BPF (a followed process is dropped when its
    leader is freed, not when it exits)."""
    comm = name()
    r = run("exitsnoop", "-j", "--", target, comm, "leader-first", "7", timeout=120,
            env={"TRACEKIT_COMMAND_FILTER": how})
    assert r.returncode == 7, r.stderr
    records = json_lines("".join(l for l in r.stdout.splitlines(True) if l.startswith("{")))
    assert [(x["comm"], x["exit_code"]) for x in records if x.get("type") == "exit"] == \
        [(comm, 7 << 8)], records


@pytest.mark.kernel
def test_group_exit_is_one_process_exit(target):
    """exit() with 8 more threads blocked: 9 threads leave at once, one
    exit is reported (a thread that finds the process dead after another
    already sent it does not send it again)."""
    comm = name()
    with Tool("exitsnoop", "-j") as t:
        tids, status = ends(target, comm, "group", 8, 9)
        out, err, rc = t.stop()
    assert rc == 0, err
    (r,) = exits(out, comm)
    assert (r["pid"], r["exit_code"]) == (tids[0], 9 << 8) and r["tid"] in tids


@pytest.mark.kernel
def test_per_thread_reports_every_thread(target):
    comm = name()
    with Tool("exitsnoop", "-j", "--per-thread") as t:
        tids, status = ends(target, comm, "group", 3, 4)
        (lone,), _ = ends(target, comm, "code", 5)
        out, err, rc = t.stop()
    assert rc == 0, err
    records = exits(out, comm)
    assert all(r["type"] == "thread_exit" for r in records)
    assert sorted((r["pid"], r["tid"], r["exit_code"]) for r in records) == sorted(
        [(tids[0], tid, 4 << 8) for tid in tids] + [(lone, lone, 5 << 8)])


@pytest.mark.kernel
def test_age_covers_the_sleep(target):
    comm = name()
    with Tool("exitsnoop", "-j") as t:
        (pid,), _ = ends(target, comm, "sleep", 300, 0)
        out, err, rc = t.stop()
    assert rc == 0, err
    (r,) = exits(out, comm)
    assert r["pid"] == pid and r["age_ns"] >= 300_000_000, r


@pytest.mark.kernel
def test_pid_filter(target):
    """-p: a process the test holds blocked is reported when it exits;
    another of the same name is not."""
    comm = name()
    held = subprocess.Popen([target, comm, "sleep", "100000", "6"], stdout=subprocess.PIPE,
                            text=True)
    pid = int(held.stdout.readline())
    with Tool("exitsnoop", "-j", "-p", pid) as t:
        (other,), _ = ends(target, comm, "code", 1)
        held.kill()
        held.wait()
        out, err, rc = t.stop()
    assert rc == 0, err
    assert [(r["pid"], r["exit_code"]) for r in exits(out, comm)] == [(pid, 9)]


@pytest.mark.kernel
@pytest.mark.parametrize("how", ["cgroup", "fork"])
def test_command_and_its_children(target, how):
    """-- COMMAND: a shell that runs two children then exits 4; the
    children's exits and its own, nothing else. Where COMMAND's tree is
    followed through fork in BPF, the tool's own exit program forgets a
    process only after sending its exit."""
    comm = name()
    script = f"{target} {comm} code 1; {target} {comm} signal 15; exit 4"
    r = run("exitsnoop", "-j", "--", "/bin/sh", "-c", script, timeout=120,
            env={"TRACEKIT_COMMAND_FILTER": how})
    # The tool ends with COMMAND's status; sh says its child's signal.
    assert (r.returncode, r.stderr) == (4, "Terminated\n"), r.stderr
    # The children print their ids to the same stdout.
    records = json_lines("".join(l for l in r.stdout.splitlines(True) if l.startswith("{")))
    mine = [(x["comm"], x["exit_code"]) for x in records if x.get("type") == "exit"]
    assert mine == [(comm, 1 << 8), (comm, 15), ("sh", 4 << 8)], records


@pytest.mark.parametrize("args,words", [
    (["--bogus"], ["--bogus"]),
    (["-p", "x"], ["'x'"]),
    (["--label"], ["--label"]),
    (["7"], ["'7'"]),
])
def test_usage_errors(args, words):
    r = run("exitsnoop", *args)
    assert (r.returncode, r.stdout) == (2, ""), r
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("exitsnoop: "), r.stderr
    for w in words:
        assert w in r.stderr, r.stderr
