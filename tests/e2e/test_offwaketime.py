"""offwaketime end to end: a pipe pair the test builds
(tests/e2e/progs/wake_target.c). Its parent, tk-waker, writes a byte from
tk_waker_marked_write to wake its child, tk-wakee, asleep in read(2) in
tk_wakee_marked_read; offwaketime must show the child's blocked stack
joined with the parent's waking stack, and the time blocked.

Times are checked from both sides, as in test_offcputime.py. Below: the
parent waits until the child sleeps in read(2), then sleeps MS ms before
it writes, so each of the N blocks lasts at least MS ms, less the
child's stretch from being seen asleep to its switch out, which the
kernel's account of the child bounds (sched_account.min_blocked; TCG
emulates that stretch slowly). Above: the N blocks lie within the
command, whose time the workload measures on CLOCK_MONOTONIC
(bpf_ktime_get_ns's clock)."""
import re
import subprocess

import pytest

from conftest import (FRAME_POINTERS, ROOT, Tool, Workload, agent_switches,
                      json_lines, loss_record, only_child, require, run)
from sched_account import Took, min_blocked

PROG_SRC = ROOT / "tests/e2e/progs/wake_target.c"
WAKEE, WAKER = "tk-wakee", "tk-waker"
ROUNDS, MS = 5, 20
WAKEE_CHAIN = ["main", "wakee_loop", "tk_wakee_marked_read"]     # outermost first
WAKER_CHAIN = ["tk_waker_marked_write", "waker_round", "main"]   # innermost first
# pipe_read / pipe_write; anon_pipe_read / anon_pipe_write since 6.16.
PIPE_READ = re.compile(r"(anon_)?pipe_read")
PIPE_WRITE = re.compile(r"(anon_)?pipe_write")
MACHINERY = re.compile(r"(__traceiter_sched_\w+|__bpf_trace_sched_\w+|bpf_trace_run\d+|"
                       r"bpf_prog_\w+)")
STACK_KEYS = {"type", "comm", "pid", "tid", "user", "user_missed", "kernel", "kernel_missed",
              "waker_comm", "waker_pid", "waker_tid", "waker_user", "waker_user_missed",
              "waker_kernel", "waker_kernel_missed", "value", "unit"}
UNTIMED = r"offwaketime: (\d+) blocks not timed: the thread's switch back in reached no " \
    r"tracer \(this kernel does not trace every context switch\)\n"


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    path = tmp_path_factory.mktemp("wake") / "wake-target"
    subprocess.run(["cc", "-O0", *FRAME_POINTERS, "-fno-inline",
                    "-I", str(ROOT / "tests/e2e/progs"), "-o", str(path), str(PROG_SRC)],
                   check=True)
    return path


def trace(prog, args, rounds=ROUNDS, ms=MS, env=None):
    """Run offwaketime ("CHILD" in args: the wakee's pid) while the pair
    makes rounds wakeups. Returns (stdout, stderr, us the command took,
    agent switches meanwhile)."""
    with Workload(prog) as w:
        child = only_child(w.pid)
        args = [str(child) if a == "CHILD" else a for a in args]
        with Tool("offwaketime", *args, env=env) as tool:
            agent = agent_switches()
            us, pid, oncpu_us, waited_us = map(int, w.send(f"pipe {rounds} {ms}"))
            agent = agent_switches() - agent
            out, err, rc = tool.stop()
    assert rc == 0, err
    assert pid == child
    took = Took(us, oncpu_us, waited_us)
    return out, err, took, agent


def folded(out):
    """[(frames, count)]: each line as flamegraph.pl reads it, frames
    joined by ';', a space, an integer count."""
    lines = []
    for line in out.splitlines():
        m = re.fullmatch(r"([^ ;][^;]*(?:;[^;]+)*) (\d+)", line)
        assert m, line
        lines.append((m.group(1).split(";"), int(m.group(2))))
    return lines


def untimed(err):
    m = re.search(UNTIMED, err)
    return int(m[1]) if m else 0


def check_err(err, agent):
    """Nothing lost but blocks the kernel traced no switch back in for
    (at most one per switch of the host's agent, test_offcputime.py)."""
    assert untimed(err) <= agent, err
    assert re.fullmatch(rf"({UNTIMED})?", err), err


def assert_total(total, took, not_timed):
    low = min_blocked(took, ROUNDS - not_timed, MS)
    assert low <= total <= took, (total, low, took, took.oncpu_us, took.waited_us)


def split_pair(frames):
    """(target frames, waker frames) of a folded line: target comm,
    user outer..inner, kernel outer..inner; "--"; waker kernel
    inner..outer, user inner..outer, waker comm."""
    i = frames.index("--")
    return frames[:i], frames[i + 1:]


def marked(lines):
    """The lines of the pair's marked wakeups."""
    return [(f, n) for f, n in lines
            if "tk_wakee_marked_read" in f and "tk_waker_marked_write" in f]


def assert_pair(frames, user=True, kernel=True):
    assert not any(MACHINERY.fullmatch(f) for f in frames), frames
    target, waker = split_pair(frames)
    assert target[0] == WAKEE and waker[-1] == WAKER, frames
    if user:
        i = target.index(WAKEE_CHAIN[0])
        assert target[i:i + 3] == WAKEE_CHAIN, target
        j = waker.index(WAKER_CHAIN[0])
        assert waker[j:j + 3] == WAKER_CHAIN, waker
    if kernel:
        # The blocked side ends in the scheduler, having come through the
        # pipe's read; the waking side starts in try_to_wake_up and came
        # from the pipe's write.
        assert target[-2:] == ["schedule", "__schedule"], target
        assert any(PIPE_READ.fullmatch(f) for f in target), target
        assert waker[0] == "try_to_wake_up", waker
        assert any(PIPE_WRITE.fullmatch(f) for f in waker), waker
        if user:  # kernel frames after the user ones, before them for the waker
            assert target.index("__schedule") > target.index("tk_wakee_marked_read")
            assert waker.index("try_to_wake_up") < waker.index("tk_waker_marked_write")


@pytest.mark.parametrize("method", ["tp_btf", "raw_tp"])
@pytest.mark.kernel
def test_folded_joins_the_wakee_and_its_waker(prog, method):
    require(method)
    out, err, took, agent = trace(prog, ["-f", "-p", "CHILD"],
                                  env={"TRACEKIT_ATTACH": method})
    check_err(err, agent)
    lines = folded(out)
    assert all(f[0] == WAKEE for f, _ in lines), out
    found = marked(lines)
    assert len(found) == 1, out   # one line: identical stacks merge
    assert_pair(found[0][0])
    assert_total(found[0][1], took, untimed(err))


def test_json_records(prog):
    out, err, took, agent = trace(prog, ["-j", "-p", "CHILD"])
    assert err == ""
    recs = json_lines(out)
    loss = loss_record(recs)
    assert loss["blocks_untimed"] <= agent, loss
    assert {k: v for k, v in loss.items() if k != "blocks_untimed"} == {
        "type": "loss", "events_lost": 0, "map_inserts_failed": 0, "stack_collisions": 0,
        "stack_map_full": 0, "stack_buffer_full": 0, "stack_errors": 0, "stacks_truncated": 0,
        "stacks_unwind_incomplete": 0}, loss
    stacks = [r for r in recs if r["type"] == "stack"]
    assert stacks and all(set(r) == STACK_KEYS for r in stacks), stacks
    found = [r for r in stacks if r["user"][-1:] == ["tk_wakee_marked_read"] and
             r["waker_user"][-1:] == ["tk_waker_marked_write"]]
    assert len(found) == 1, stacks
    r = found[0]
    assert (r["comm"], r["waker_comm"], r["unit"]) == (WAKEE, WAKER, "us"), r
    assert r["user"][-3:] == WAKEE_CHAIN and r["waker_user"][-3:] == WAKER_CHAIN[::-1], r
    assert r["kernel"][-1] == "__schedule" and r["waker_kernel"][-1] == "try_to_wake_up", r
    assert r["pid"] == r["tid"] and r["waker_pid"] == r["waker_tid"] != r["pid"], r
    assert not (r["user_missed"] or r["kernel_missed"] or r["waker_user_missed"] or
                r["waker_kernel_missed"]), r
    assert_total(r["value"], took, loss["blocks_untimed"])


def test_report_is_bccs(prog):
    """bcc's layout: "waker:" comm pid, its frames outermost first, "--",
    the blocked thread's frames innermost first, "target:" comm pid, the
    total; the largest total last."""
    out, err, took, agent = trace(prog, ["-p", "CHILD"])
    check_err(err, agent)
    blocks = out.split("\n\n")
    assert blocks[-1] == "", out
    found = [b for b in blocks if "tk_waker_marked_write" in b and "tk_wakee_marked_read" in b]
    assert len(found) == 1, out
    lines = found[0].split("\n")
    m = re.fullmatch(r"    waker:           tk-waker (\d+)", lines[0])
    assert m, lines
    assert re.fullmatch(r"    target:          tk-wakee (\d+)", lines[-2]), lines
    assert re.fullmatch(r"        \d+", lines[-1]), lines
    frames = [l[4:] for l in lines[1:-2]]
    assert all(l.startswith("    ") for l in lines[1:-2]), lines
    i = frames.index("--               --")
    waker, target = frames[:i], frames[i + 1:]
    # The same stacks as folded, in bcc's report order.
    assert_pair([WAKEE] + target[::-1] + ["--"] + waker[::-1] + [WAKER])
    assert_total(int(lines[-1]), took, untimed(err))


@pytest.mark.parametrize("flag", ["-U", "-K"])
def test_user_or_kernel_stacks_only(prog, flag):
    out, err, took, agent = trace(prog, ["-f", flag, "-p", "CHILD"])
    check_err(err, agent)
    lines = folded(out)
    if flag == "-U":
        found = marked(lines)
        assert len(found) == 1, out
        assert_pair(found[0][0], kernel=False)
        assert not any("__schedule" in f or "try_to_wake_up" in f for f, _ in lines), out
    else:
        assert not any("main" in f for f, _ in lines), out
        found = [(f, n) for f, n in lines if any(PIPE_WRITE.fullmatch(x) for x in f)]
        assert len(found) == 1, out
        assert_pair(found[0][0], user=False)
    assert_total(found[0][1], took, untimed(err))


def test_delimited_puts_a_dash_between_user_and_kernel(prog):
    out, err, took, agent = trace(prog, ["-f", "-d", "-p", "CHILD"])
    check_err(err, agent)
    (frames, _), = marked(folded(out))
    target, waker = split_pair(frames)
    i, j = target.index("-"), waker.index("-")
    assert target[i - 1:i + 2] == ["tk_wakee_marked_read", "-", target[i + 1]], target
    assert waker[j - 1] != "-" and waker[j + 1] == "tk_waker_marked_write", waker


@pytest.mark.parametrize("args", [["-m", "10000000"], ["-M", str(MS * 1000 // 4)]])
def test_block_time_limits_exclude(prog, args):
    """Blocks of MS ms: none of at least 10 s, none of at most MS/4 ms."""
    out, err, took, agent = trace(prog, ["-f", "-p", "CHILD", *args])
    check_err(err, agent)
    assert marked(folded(out)) == [], out


def test_block_time_window_keeps_them(prog):
    out, err, took, agent = trace(prog, ["-f", "-p", "CHILD", "-m", str(MS * 1000 // 2),
                                         "-M", "10000000"])
    check_err(err, agent)
    (frames, total), = marked(folded(out))
    assert_total(total, took, untimed(err))


def test_other_process_filtered_out(prog):
    """-p of the waker: the wakee's blocks are not its, so none shows."""
    with Workload(prog) as w:
        only_child(w.pid)
        with Tool("offwaketime", "-f", "-p", w.pid) as tool:
            w.send(f"pipe {ROUNDS} {MS} late")
            out, err, rc = tool.stop()
    assert rc == 0, err
    lines = folded(out)
    assert not any(f[0] == WAKEE for f, _ in lines), out
    # The waker blocks too, woken by the wakee's answer (libc's write):
    # "late" has the wakee answer only once the waker sleeps in read(2),
    # since a wakee woken on the waker's CPU may otherwise preempt it and
    # answer first every round (CI saw that once).
    assert any(f[0] == WAKER and "waker_round" in f and f[-1] == WAKEE
               for f, _ in lines), out


@pytest.mark.parametrize("flag, shown", [("-u", True), ("-k", False)])
def test_thread_kind_filters(prog, flag, shown):
    """The wakee is a user thread: -u keeps its blocks, -k (kernel
    threads only) leaves nothing of -p's process."""
    out, err, took, agent = trace(prog, ["-f", flag, "-p", "CHILD"])
    check_err(err, agent)
    lines = folded(out)
    if shown:
        (frames, total), = marked(lines)
        assert_total(total, took, untimed(err))
    else:
        assert lines == [], out


def test_tid_filter(prog):
    """-t, bcc's letter for --tid: the wakee's one thread."""
    out, err, took, agent = trace(prog, ["-f", "-t", "CHILD"])
    check_err(err, agent)
    (frames, total), = marked(folded(out))
    assert_pair(frames)
    assert_total(total, took, untimed(err))


@pytest.mark.parametrize("args, message", [
    (["-u", "-k"], "options -u/--user-threads-only and -k/--kernel-threads-only cannot be combined"),
    (["-m", "5", "-M", "2"], "invalid -m/--min-block-time value '5': more than -M/--max-block-time 2"),
    (["-m", "x"], "invalid -m/--min-block-time value 'x'"),
    (["--unwind", "cfi"], "invalid --unwind value 'cfi'"),
    (["-U", "-K"], "options -U/--user-stacks-only and -K/--kernel-stacks-only cannot be combined"),
    (["-A"], "option -A/--address is not offered by offwaketime"),
    (["--print-cgroup"], "--print-cgroup is not offered by offwaketime"),
    (["1", "2"], "unexpected argument '2' after [duration]"),
])
def test_bad_options(args, message):
    r = run("offwaketime", *args)
    assert r.returncode == 2, r
    assert r.stdout == ""
    assert len(r.stderr.splitlines()) == 1 and r.stderr.startswith("offwaketime: " + message), \
        r.stderr


def test_duration_argument_ends_the_run():
    r = run("offwaketime", "-f", "0.5", timeout=60)
    assert r.returncode == 0, r.stderr
    folded(r.stdout)
