"""wakeuptime end to end, on the pipe pair of test_offwaketime.py
(tests/e2e/progs/wake_target.c): the child, tk-wakee, sleeps in read(2)
until its parent, tk-waker, writes from tk_waker_marked_write; wakeuptime
must count the sleeps against the parent's waking stack and comm and the
child's comm.

Times, as in test_offwaketime.py: each of the N sleeps lasts at least MS
ms (the parent waits until the child sleeps, then sleeps MS ms before it
writes), less the child's stretch from being seen asleep to its switch
out, which the kernel's account of the child bounds
(sched_account.min_blocked), and all lie within the command's measured
time. A sleep
ends at the wakeup here, so no switch back in is needed to time it."""
import re
import subprocess

import pytest

from conftest import (FRAME_POINTERS, ROOT, Tool, Workload, json_lines, loss_record,
                      only_child, require, run)
from sched_account import Took, min_blocked

PROG_SRC = ROOT / "tests/e2e/progs/wake_target.c"
WAKEE, WAKER = "tk-wakee", "tk-waker"
ROUNDS, MS = 5, 20
WAKER_CHAIN = ["main", "waker_round", "tk_waker_marked_write"]   # outermost first
PIPE_WRITE = re.compile(r"(anon_)?pipe_write")   # anon_pipe_write since 6.16
MACHINERY = re.compile(r"(__traceiter_sched_\w+|__bpf_trace_sched_\w+|bpf_trace_run\d+|"
                       r"bpf_prog_\w+)")
STACK_KEYS = {"type", "target_comm", "waker_comm", "user", "user_missed", "kernel",
              "kernel_missed", "value", "unit"}
NO_LOSS = {"type": "loss", "events_lost": 0, "map_inserts_failed": 0, "stack_collisions": 0,
           "stack_map_full": 0, "stack_buffer_full": 0, "stack_errors": 0, "stacks_truncated": 0,
           "stacks_unwind_incomplete": 0}


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    path = tmp_path_factory.mktemp("wake") / "wake-target"
    subprocess.run(["cc", "-O0", *FRAME_POINTERS, "-fno-inline",
                    "-I", str(ROOT / "tests/e2e/progs"), "-o", str(path), str(PROG_SRC)],
                   check=True)
    return path


def trace(prog, args, env=None):
    """Run wakeuptime ("CHILD" in args: the sleeper's pid) while the pair
    makes ROUNDS wakeups. Returns (stdout, stderr, us the command took)."""
    with Workload(prog) as w:
        child = only_child(w.pid)
        args = [str(child) if a == "CHILD" else a for a in args]
        with Tool("wakeuptime", *args, env=env) as tool:
            us, pid, oncpu_us, waited_us = map(int, w.send(f"pipe {ROUNDS} {MS}"))
            out, err, rc = tool.stop()
    assert rc == 0, err
    assert pid == child
    took = Took(us, oncpu_us, waited_us)
    return out, err, took


def folded(out):
    """[(frames, count)]: each line as flamegraph.pl reads it."""
    lines = []
    for line in out.splitlines():
        m = re.fullmatch(r"([^ ;][^;]*(?:;[^;]+)*) (\d+)", line)
        assert m, line
        lines.append((m.group(1).split(";"), int(m.group(2))))
    return lines


def assert_total(total, took):
    low = min_blocked(took, ROUNDS, MS)
    assert low <= total <= took, (total, low, took, took.oncpu_us, took.waited_us)


def assert_waker(frames, user=True, kernel=True):
    """waker comm; user outer..inner; kernel outer..inner; target comm."""
    assert not any(MACHINERY.fullmatch(f) for f in frames), frames
    assert frames[0] == WAKER and frames[-1] == WAKEE, frames
    if user:
        i = frames.index(WAKER_CHAIN[0])
        assert frames[i:i + 3] == WAKER_CHAIN, frames
    if kernel:
        assert frames[-2] == "try_to_wake_up", frames
        assert any(PIPE_WRITE.fullmatch(f) for f in frames), frames
    if user and kernel:
        assert frames.index("tk_waker_marked_write") < frames.index("try_to_wake_up")


def marked(lines):
    return [(f, n) for f, n in lines if "tk_waker_marked_write" in f]


@pytest.mark.parametrize("method", ["tp_btf", "raw_tp"])
@pytest.mark.kernel
def test_folded_counts_the_sleeps_by_waker(prog, method):
    require(method)
    out, err, took = trace(prog, ["-f", "-p", "CHILD"], env={"TRACEKIT_ATTACH": method})
    assert err == ""
    lines = folded(out)
    assert all(f[-1] == WAKEE for f, _ in lines), out
    found = marked(lines)
    assert len(found) == 1, out
    assert_waker(found[0][0])
    assert_total(found[0][1], took)


def test_json_records(prog):
    out, err, took = trace(prog, ["-j", "-p", "CHILD"])
    assert err == ""
    recs = json_lines(out)
    assert loss_record(recs) == NO_LOSS
    stacks = [r for r in recs if r["type"] == "stack"]
    assert stacks and all(set(r) == STACK_KEYS for r in stacks), stacks
    found = [r for r in stacks if r["user"][-1:] == ["tk_waker_marked_write"]]
    assert len(found) == 1, stacks
    r = found[0]
    assert (r["target_comm"], r["waker_comm"], r["unit"]) == (WAKEE, WAKER, "us"), r
    assert r["user"][-3:] == WAKER_CHAIN and r["kernel"][-1] == "try_to_wake_up", r
    assert not (r["user_missed"] or r["kernel_missed"]), r
    assert_total(r["value"], took)


def test_report_is_bccs(prog):
    """bcc's layout: "target:" comm, the waker's frames innermost first,
    "waker:" comm, the total; the largest total last."""
    out, err, took = trace(prog, ["-p", "CHILD"])
    assert err == ""
    blocks = out.split("\n\n")
    assert blocks[-1] == "", out
    found = [b for b in blocks if "tk_waker_marked_write" in b]
    assert len(found) == 1, out
    lines = found[0].split("\n")
    assert lines[0] == "    target:          tk-wakee", lines
    assert lines[-2] == "    waker:           tk-waker", lines
    assert re.fullmatch(r"        \d+", lines[-1]), lines
    assert all(l.startswith("    ") for l in lines[1:-2]), lines
    frames = [l[4:] for l in lines[1:-2]]
    assert_waker([WAKER] + frames[::-1] + [WAKEE])
    assert_total(int(lines[-1]), took)
    # The largest total last.
    totals = [int(b.rsplit("\n", 1)[1]) for b in blocks[:-1]]
    assert totals == sorted(totals), totals


def test_kernel_stacks_only_as_bcc(prog):
    out, err, took = trace(prog, ["-f", "-K", "-p", "CHILD"])
    assert err == ""
    lines = folded(out)
    assert not any("main" in f for f, _ in lines), out
    # Both rounds' writes (libc's and the marked one) are one kernel stack.
    found = [(f, n) for f, n in lines if any(PIPE_WRITE.fullmatch(x) for x in f)]
    assert len(found) == 1, out
    assert_waker(found[0][0], user=False)
    assert min_blocked(took, ROUNDS, MS) <= found[0][1], (found, took.oncpu_us, took.waited_us)


@pytest.mark.parametrize("args", [["-m", "10000000"], ["-M", str(MS * 1000 // 4)]])
def test_block_time_limits_exclude(prog, args):
    out, err, took = trace(prog, ["-f", "-p", "CHILD", *args])
    assert err == ""
    assert marked(folded(out)) == [], out


@pytest.mark.parametrize("args, message", [
    (["-u", "-k"], "options -u/--user-threads-only and -k/--kernel-threads-only cannot be combined"),
    (["-m", "5", "-M", "2"], "invalid -m/--min-block-time value '5': more than -M/--max-block-time 2"),
    (["--unwind", "auto"], "invalid --unwind value 'auto'"),
    (["-A"], "option -A/--address is not offered by wakeuptime"),
    (["1", "2"], "unexpected argument '2' after [duration]"),
])
def test_bad_options(args, message):
    r = run("wakeuptime", *args)
    assert r.returncode == 2, r
    assert r.stdout == ""
    assert len(r.stderr.splitlines()) == 1 and r.stderr.startswith("wakeuptime: " + message), \
        r.stderr
