"""threadsnoop end to end: a program named for the test (progs/
thread_target.c) starts threads in named functions and makes one
pthread_create() that fails; the tool must report each call, with the
start function named, the new thread's kernel id and the result."""
import os
import subprocess
import uuid

import pytest

from conftest import ROOT, Tool, json_lines, loss_record, run


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    path = tmp_path_factory.mktemp("thread_target") / "thread_target"
    subprocess.run(["cc", "-O0", "-pthread", "-o", str(path),
                    str(ROOT / "tests/e2e/progs/thread_target.c")], check=True)
    return str(path)


class Program:
    """thread_target, named; its threads' ids and the failing call's
    result once it has made its calls; ended by a line on stdin. wait:
    it makes them only once go() says so."""

    def __init__(self, target, comm, wait=False):
        self.proc = subprocess.Popen([target, comm, *(["wait"] if wait else [])],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.pid = self.proc.pid
        if wait:
            assert self.proc.stdout.readline() == "ready\n"

    def go(self):
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()

    def wait_calls(self):
        *tids, ret = map(int, self.proc.stdout.readline().split())
        return tids, ret

    def end(self):
        self.proc.communicate("\n", timeout=60)


FUNCS = ["tk_worker_alpha", "tk_worker_beta", "tk_worker_beta", "tk_worker_gamma"]


@pytest.mark.kernel
def test_calls_exactly(target):
    comm = "tkthr-" + uuid.uuid4().hex[:6]
    with Tool("threadsnoop", "-j") as t:
        p = Program(target, comm)
        tids, ret = p.wait_calls()
        out, err, rc = t.stop()   # while the program lives: its symbols
        p.end()
    assert rc == 0, err
    assert ret == 22   # EINVAL: SCHED_FIFO at priority 0
    records = [r for r in json_lines(out) if r.get("comm") == comm]
    assert [(r["pid"], r["tid"], r["func"], r["ret"], r["error"]) for r in records] == \
        [(p.pid, p.pid, f, 0, None) for f in FUNCS] + [(p.pid, p.pid, "tk_worker_alpha",
                                                        22, "EINVAL")]
    assert [r["new_tid"] for r in records[:4]] == tids
    # glibc makes the thread stopped, then fails to set its policy and
    # ends it: the failed call still made one.
    assert isinstance(records[4]["new_tid"], int) and records[4]["new_tid"] not in tids
    assert len({r["start"] for r in records}) == 3
    assert loss_record(json_lines(out)) == {"type": "loss", "events_lost": 0,
                                            "map_inserts_failed": 0}


@pytest.mark.kernel
def test_pid_filter_and_text_columns(target):
    """-p: the calls of that process, not those of another of the same
    program made at the same time; text columns."""
    comm = "tkthr-" + uuid.uuid4().hex[:6]
    other = Program(target, comm, wait=True)
    p = Program(target, comm, wait=True)
    with Tool("threadsnoop", "-p", str(p.pid)) as t:
        other.go()
        p.go()
        other.wait_calls()
        p.wait_calls()
        out, err, rc = t.stop()
    other.end()
    p.end()
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == "TIME(ms)   PID    COMM             FUNC"
    rows = [l.split() for l in lines[1:]]
    assert [w[1:] for w in rows] == [[str(p.pid), comm, f]
                                     for f in FUNCS + ["tk_worker_alpha"]]
    assert rows[0][0] == "0" and all(w[0].isdigit() for w in rows)


@pytest.mark.kernel
def test_command(target, tmp_path):
    """-- COMMAND: its threads, named. The start routines are named from
    the process's mappings when the events are printed, so the command
    waits on a FIFO until all five lines are out: a process that ends
    before its events are read shows [unknown] (its file) instead (CI's
    5.10 run, before the FIFO)."""
    comm = "tkthr-" + uuid.uuid4().hex[:6]
    fifo = tmp_path / "go"
    os.mkfifo(fifo)
    t = Tool("threadsnoop", "--", "/bin/sh", "-c",
             f"{target} {comm} < {fifo} > /dev/null").start()
    try:
        with open(fifo, "w") as go:   # once the command has it open
            lines = [t.proc.stdout.readline().decode() for _ in range(6)]
            go.write("\n")
        out, err, rc = t.wait()
    finally:
        if t.proc.poll() is None:
            t.proc.kill()
            t.proc.wait()
    assert rc == 0, err
    lines = [l.rstrip("\n") for l in lines] + out.splitlines()
    assert lines[0] == "TIME(ms)   PID    COMM             FUNC"
    rows = [l.split() for l in lines[1:]]
    assert [(w[2], w[3]) for w in rows] == [(comm, f) for f in FUNCS + ["tk_worker_alpha"]]
    assert rows[0][0] == "0" and all(w[0].isdigit() for w in rows)


@pytest.mark.parametrize("args,words", [
    (["-l", "/nonexistent/libfoo.so"], ["--libc", "/nonexistent/libfoo.so"]),
    (["-l", "/bin/true"], ["--libc", "pthread_create"]),
    (["-p", "x"], ["'x'"]),
    (["7"], ["'7'"]),
])
def test_usage_errors(args, words):
    r = run("threadsnoop", *args)
    assert (r.returncode, r.stdout) == (2, ""), r
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("threadsnoop: "), r.stderr
    for w in words:
        assert w in r.stderr, r.stderr
