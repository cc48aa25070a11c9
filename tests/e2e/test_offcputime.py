"""offcputime end to end: a workload the test builds blocks in known
functions for known times (tests/e2e/progs/offcpu_target.c); offcputime
must show those stacks, user frames then kernel frames, with the time
they spent off CPU in microseconds, and leave out what its filters
exclude.

Times are checked from both sides without a guess at scheduling
latency. Below: a clock_nanosleep of D ms keeps its thread off CPU for at
least D ms less the time from arming its timer (which never expires
early) to switching out; in that time the thread is on CPU or waiting for
one (a preemption, or a vCPU the host stalled, which the guest counts as
running). The workload reports both, for each command, from the kernel's
/proc/self/schedstat, so N sleeps total at least N*D ms less them, and
less 1 us per sleep lost to the division to us (min_blocked). Above: the
workload measures each command on CLOCK_MONOTONIC (bpf_ktime_get_ns's
clock) from before its first sleep to after its last, and a thread cannot
be off CPU longer than that, however late a loaded machine wakes it (on
an idle one the excess is about 0.1 ms per sleep)."""
import json
import re
import subprocess

import pytest

from conftest import (FRAME_POINTERS, ROOT, SYSCALL_ENTRY, Tool, Workload,
                      agent_switches, assert_annotated, json_lines, loss_record,
                      next_instruction_offsets, own_cgroup, require, run, tool_map_id,
                      tool_path, wait_noted)
from sched_account import Took, min_blocked

PROG_SRC = ROOT / "tests/e2e/progs/offcpu_target.c"
COMM = "offcpu-target"

# The chain the workload sleeps in, outermost first, and its kernel path
# at the switch (innermost last): clock_nanosleep -> ... -> __schedule.
CHAIN = ["main", "wait_outer", "wait_inner"]
SLEEP_KERNEL_END = ["do_nanosleep", "schedule", "__schedule"]

# Between the tracepoint and the BPF program: the tracing machinery, at
# the inner end of every kernel stack taken at sched_switch
# (__traceiter_sched_switch, bpf_trace_run4, the program itself; older
# kernels add __bpf_trace_sched_switch). Not part of what blocked, and
# left out by libtrace: no stack may show it.
MACHINERY = re.compile(r"(__traceiter_sched_switch|__bpf_trace_sched_switch|"
                       r"bpf_trace_run\d+|bpf_prog_\w+)")

SLEEPS, SLEEP_MS = 5, 200
T_US = SLEEPS * SLEEP_MS * 1000

STACK_KEYS = {"type", "comm", "pid", "tid", "user", "user_missed", "kernel",
              "kernel_missed", "value", "unit"}
NO_LOSS = {"type": "loss", "events_lost": 0, "map_inserts_failed": 0,
           "stack_collisions": 0, "stack_map_full": 0, "stack_buffer_full": 0, "stack_errors": 0,
           "stacks_truncated": 0, "stacks_unwind_incomplete": 0, "blocks_untimed": 0}
# Stacks whose unwind stopped early (--unwind auto, the default): the
# workload reads its commands through stdio, whose libc frames below
# main can outgrow the stack copy; those stacks end in a marker frame and
# are counted. The chains the tests look for make their system calls
# from functions with frame pointers, and are never among them.
UNWIND_INCOMPLETE = r"offcputime: \d+ user stacks end early with an \[unwind: \.\.\.\] frame " \
    r"\(\d+ snapshot too small, \d+ no CFI, \d+ register not captured, \d+ bad CFI\)" \
    r"(; --unwind cfi copies more of each stack)?\n"
# A block whose end, the thread's switch back in, reached no tracer (this
# repository's Firecracker host traces no switch away from its sandbox
# agent's threads): offcputime cannot time it, and says how many.
UNTIMED = r"offcputime: (\d+) blocks not timed: the thread's switch back in reached no tracer " \
    r"\(this kernel does not trace every context switch\)\n"
PF_KTHREAD = 0x00200000


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    path = tmp_path_factory.mktemp("offcpu") / COMM
    subprocess.run(["cc", "-O0", *FRAME_POINTERS, "-fno-inline",
                    "-o", str(path), str(PROG_SRC)], check=True)
    return path


class Target(Workload):
    """The workload: send("sleep 5 200") returns once it has slept."""

    def send(self, cmd):
        """Returns the command's Took."""
        return Took(*super().send(cmd))


def trace(prog, args, cmds, env=None):
    """Run offcputime while a fresh workload runs cmds; "PID" in args is
    the workload's pid. Returns (stdout, stderr, pid, [us each command
    took]), checked by check_losses."""
    with Target(prog) as t:
        args = [str(t.pid) if a == "PID" else a for a in args]
        with Tool("offcputime", *args, env=env) as tool:
            agent_before = agent_switches()
            took = [t.send(c) for c in cmds]
            agent = agent_switches() - agent_before
            out, err, rc = tool.stop()
    assert rc == 0, err
    check_losses(args, out, err, agent)
    return out, err, t.pid, took


def check_losses(args, out, err, agent):
    """Nothing may be lost in a run with args: stderr, where text mode
    reports losses, must be empty but for blocks not timed, at most
    agent (the agent's switches meanwhile), and stacks that filled every
    frame slot. No stack is lost to the stack map: one whose bucket holds
    another (a busy machine preempts the workload at many user addresses,
    each a stack of its own) goes to the spill map."""
    # A block is untimed only when a switch reached no tracer: at most
    # one per switch of the agent (conftest.agent_switches).
    if "-j" in args:
        assert loss_record(json_lines(out))["blocks_untimed"] <= agent, out[-300:]
    else:
        assert untimed(err) <= agent, err
    # Other threads' stacks may (a deep or garbage frame chain) fill
    # every slot: reported, and allowed.
    assert re.fullmatch(r"(offcputime: \d+ stacks reached the \d+-frame limit and may be "
                        r"truncated; raise --perf-max-stack-depth \(and "
                        r"kernel.perf_event_max_stack\)\n)?"
                        rf"({UNTIMED})?"
                        rf"({UNWIND_INCOMPLETE})?", err), err


def no_machinery(frames):
    """frames (a stack, innermost last), checked to hold no frame of the
    tracing machinery."""
    frames = list(frames)
    assert not any(MACHINERY.fullmatch(f) for f in frames), frames
    return frames


def folded(out):
    """[(frames, count)] of folded output; frames[0] is the comm."""
    lines = []
    for line in out.splitlines():
        m = re.fullmatch(r"(\S.*) (\d+)", line)
        assert m, line
        lines.append((m.group(1).split(";"), int(m.group(2))))
    return lines


def split_at(frames, user_tail):
    """The frames after user_tail (..., main, f, g), or None when the
    stack does not hold user_tail."""
    n = len(user_tail)
    for i in range(len(frames) - n + 1):
        if frames[i:i + n] == user_tail:
            return frames[i + n:]
    return None


def assert_sleep_kernel(kernel):
    """The kernel half of a stack blocked in clock_nanosleep."""
    kernel = no_machinery(kernel)
    assert kernel[-3:] == SLEEP_KERNEL_END, kernel
    assert kernel[0] == SYSCALL_ENTRY[0], kernel


def sleep_lines(lines, user_tail):
    """The folded lines of the workload sleeping in user_tail's last
    function: (user_tail, then the clock_nanosleep path). Where there is
    one, it gets the time of the workload's other blocks inside that
    sleep call (do_nanosleep) added: a preemption after do_nanosleep set
    the thread's sleeping state and armed its timer, before it switched
    out, shortens the sleep's block by a wait that the kernel's run_delay
    leaves out (sched_info_depart queues only a running task), so
    min_blocked cannot allow for it; offcputime times that wait too, under
    the preempted kernel path, and it belongs to the sleep."""
    found, preempted = [], 0
    for frames, count in lines:
        kernel = split_at(frames, user_tail)
        if kernel is None or frames[0] != COMM:
            continue
        kernel = no_machinery(kernel)
        if kernel[-3:] == SLEEP_KERNEL_END:
            found.append((frames, count))
        elif any(f.startswith("do_nanosleep") for f in kernel):
            preempted += count
    if len(found) == 1:
        found = [(found[0][0], found[0][1] + preempted)]
    return found


def untimed(err):
    """The blocks offcputime said it could not time (text mode)."""
    m = re.search(UNTIMED, err or "")
    return int(m[1]) if m else 0


def assert_total(total, sleeps, ms, took, out=None, err=None, not_timed=None):
    """sleeps of ms each, in a command that took took us (module doc),
    less the sleeps offcputime reported it could not time (not_timed, or
    from the text-mode err)."""
    not_timed = untimed(err) if not_timed is None else not_timed
    t = min_blocked(took, max(0, sleeps - not_timed), ms)
    assert t <= total <= took, (total, t, took, took.oncpu_us, took.waited_us, out, err)


# ---- the main chain: folded, user and kernel frames ----

@pytest.mark.parametrize("method", ["tp_btf", "raw_tp"])
@pytest.mark.kernel
def test_folded_shows_the_chain_and_its_time(prog, method):
    require(method)
    out, err, _, (took,) = trace(prog, ["-f", "-p", "PID"], [f"sleep {SLEEPS} {SLEEP_MS}"],
                                 env={"TRACEKIT_ATTACH": method})
    lines = folded(out)
    for frames, _ in lines:
        no_machinery(frames)
    (found,) = sleep_lines(lines, CHAIN)   # five sleeps, one stack
    frames, count = found
    assert frames[0] == COMM
    kernel = split_at(frames, CHAIN)
    assert_sleep_kernel(kernel)
    assert_total(count, SLEEPS, SLEEP_MS, took, out, err)
    # Every line is the workload's own (-p). (Other lines may hold
    # wait_inner too: a preemption on the way back to user space, on a
    # busy machine.)
    assert all(f[0] == COMM for f, _ in lines), out


@pytest.mark.kernel
def test_user_stacks_only(prog):
    out, err, _, (took,) = trace(prog, ["-f", "-U", "-p", "PID"], [f"sleep {SLEEPS} {SLEEP_MS}"])
    chain = [(f, c) for f, c in folded(out) if "wait_inner" in f]
    assert len(chain) == 1, out
    frames, count = chain[0]
    # The line ends at the function that made the system call.
    assert frames[0] == COMM and frames[-3:] == CHAIN, frames
    assert_total(count, SLEEPS, SLEEP_MS, took, out, err)
    # No kernel frame anywhere.
    assert not any(k in f for f, _ in folded(out) for k in ("schedule", "__schedule")), out


@pytest.mark.kernel
def test_kernel_stacks_only(prog):
    out, err, _, (took,) = trace(prog, ["-f", "-K", "-p", "PID"], [f"sleep {SLEEPS} {SLEEP_MS}"])
    lines = folded(out)
    assert not any("main" in f for f, _ in lines), out
    # Only the chain sleeps in clock_nanosleep: one stack, all of T.
    sleeps = [(f, c) for f, c in lines if no_machinery(f)[-3:] == SLEEP_KERNEL_END]
    assert len(sleeps) == 1, out
    frames, count = sleeps[0]
    assert frames[0] == COMM
    assert_sleep_kernel(frames[1:])
    assert_total(count, SLEEPS, SLEEP_MS, took, out, err)


def test_delimited_puts_a_dash_between_user_and_kernel(prog):
    out, err, _, (took,) = trace(prog, ["-f", "-d", "-p", "PID"], ["sleep 2 100"])
    (found,) = sleep_lines(folded(out), CHAIN + ["-"])
    assert_total(found[1], 2, 100, took, out, err)


# ---- block time and state filters ----

def test_annotations_mark_kernel_frames(prog):
    """-a: bcc's _[k] after every kernel frame, none after a user frame;
    the sleeps' stack is the chain, then the annotated sleep code."""
    out, err, _, (took,) = trace(prog, ["-a", "-d", "-f", "-p", "PID"], ["sleep 2 50"])
    lines = folded(out)
    for frames, _ in lines:
        assert_annotated(";".join(frames))
    sleeps = [(f, n) for f, n in lines if "-" in f and f[f.index("-") - 3:f.index("-")] == CHAIN
              and [k[:-4] for k in f[-3:]] == SLEEP_KERNEL_END]
    assert len(sleeps) == 1, out
    assert_total(sleeps[0][1], 2, 50, took, out, err)


@pytest.mark.kernel
def test_min_block_time_excludes_short_blocks(prog):
    out, err, _, (took_s, took) = trace(prog, ["-f", "-m", "100000", "-p", "PID"],
                                        ["short 10 5", "long 2 300"])
    lines = folded(out)
    short = sleep_lines(lines, ["main", "wait_short"])
    if took_s < 100000:
        assert short == [], out
    else:   # a loaded host stretched the 5 ms sleeps: one may be a block
        assert sum(c for _, c in short) <= took_s, out   # of 100 ms or more
    (found,) = sleep_lines(lines, ["main", "wait_long"])
    assert_total(found[1], 2, 300, took, out, err)
    assert all(c >= 100000 for _, c in lines), out


def test_max_block_time_excludes_long_blocks(prog):
    out, err, _, (took, took_l) = trace(prog, ["-f", "-M", "100000", "-p", "PID"],
                                        ["short 10 5", "long 2 300"])
    lines = folded(out)
    # Each 300 ms sleep is one block of 300 ms, left out. Its stack may
    # still show a short time: the time the thread, woken by its timer,
    # spent runnable, waiting for a CPU. Switched back in, it returns into
    # schedule(), which calls __schedule() again while need_resched()
    # (kernel/sched/core.c, __schedule_loop): a second switch out, with
    # prev_state 0 (TASK_RUNNING), from the same stack. offcputime without
    # --state counts every switch out, as bcc's does. Seen with a CPU hog
    # per core and a disk writer: 5 runs in 200 had a wait_long line (6184
    # to 38911 us); a sched tracepoint observer showed each to be such a
    # switch, 24-47 us after the switch in; each of the 398 long sleeps it
    # saw was woken by its hrtimer and by nothing else (no spurious
    # wakeup). So what is counted lies outside the two blocks of at least
    # 300 ms each, in the command's time; a counted block would add 300 ms.
    # (Waits for a CPU of 110 ms after a wakeup were seen under load.)
    long_us = sum(c for _, c in sleep_lines(lines, ["main", "wait_long"]))
    assert long_us <= took_l - min_blocked(took_l, 2, 300), (long_us, took_l, out)
    (found,) = sleep_lines(lines, ["main", "wait_short"])
    if took < 100000:
        assert_total(found[1], 10, 5, took, out, err)
    else:   # a loaded host stretched a 5 ms sleep past -M: left out
        assert found[1] <= took, out


def test_block_time_window_without_filters_has_both(prog):
    out, err, _, (took_s, took_l) = trace(prog, ["-f", "-p", "PID"], ["short 10 5", "long 2 300"])
    lines = folded(out)
    (short,) = sleep_lines(lines, ["main", "wait_short"])
    (long_,) = sleep_lines(lines, ["main", "wait_long"])
    assert_total(short[1], 10, 5, took_s, out, err)
    assert_total(long_[1], 2, 300, took_l, out, err)


def vfork_lines(lines):
    """The workload waiting in vfork for its child (see offcpu_target.c:
    the walk shows main;wait_vfork;__vfork; the CFI unwinder of --unwind
    auto cannot unwind __vfork, whose return address is in rdi, and keeps
    the walk), not in the waitpid after (main;wait_vfork;vfork_call;wait4
    once the unwinder finds vfork_call, the walk's main;wait_vfork;wait4),
    nor preempted on the way (seen under TCG: on the way back to user
    space, ...;syscall_exit_to_user_mode;exit_to_user_mode_prepare;schedule,
    and in the kernel, ...;__cond_resched;preempt_schedule_common;
    __schedule, on 6.12 ...;__cond_resched;__schedule, on 5.10
    ...;__kmalloc;slab_pre_alloc_hook.constprop.0;_cond_resched;__schedule
    in copy_process: rightly counted, but not a wait for the child)."""
    # "_cond_resched" is 5.10's name and a part of __cond_resched.
    preempted = ("exit_to_user_mode", "irqentry_exit", "preempt_schedule", "_cond_resched")
    found = []
    for f, c in lines:
        rest = split_at(f, ["main", "wait_vfork"])
        if any(p in fr for fr in f for p in preempted):
            continue
        rest = [fr for fr in rest or [] if fr != "vfork_call"]
        if f[0] == COMM and rest and "vfork" in rest[0]:
            found.append((f, c))
    return found


@pytest.mark.parametrize("state, sleeps, vforks", [
    (None, True, True),   # no filter: both
    ("1", True, False),   # TASK_INTERRUPTIBLE: the nanosleeps only
    ("2", False, True),   # TASK_UNINTERRUPTIBLE (vfork waits KILLABLE)
    ("0", False, False),  # TASK_RUNNING (preempted): neither
])
@pytest.mark.kernel
def test_state_filter(prog, state, sleeps, vforks):
    args = ["-f", "-p", "PID"] + (["--state", state] if state else [])
    out, err, _, (took_s, took_v) = trace(prog, args, ["sleep 2 100", "vfork 150"])
    lines = folded(out)
    found = sleep_lines(lines, CHAIN)
    vf = vfork_lines(lines)
    if state == "0":
        # Only preemptions, never a sleep: no 100 ms sleep, no 150 ms
        # vfork wait. A preemption can have a sleep's stack: a thread
        # woken from its sleep and switched in can be switched out again
        # at once, TASK_RUNNING, from the same schedule() call (see
        # test_max_block_time_excludes_long_blocks). Its time is a wait
        # for a CPU, counted with the sleep's stack: it lies outside the
        # sleeps' blocks, in the command's time; a sleep or the vfork wait
        # counted would add its whole time.
        sleep_us = sum(c for f, c in lines if SLEEP_KERNEL_END[0] in f)
        assert sleep_us <= took_s - min_blocked(took_s, 2, 100), (sleep_us, took_s, out)
        vfork_us = sum(c for _, c in vf)
        assert vfork_us <= took_v - min_blocked(took_v, 1, 150), (vfork_us, took_v, out)
        return
    assert len(found) == (1 if sleeps else 0), out
    if sleeps:
        assert_total(found[0][1], 2, 100, took_s, out, err)
    assert len(vf) == (1 if vforks else 0), out
    if vforks:
        # The parent waits at least the child's 150 ms sleep.
        assert_total(vf[0][1], 1, 150, took_v, out, err)
        assert "schedule" in vf[0][0], vf


# ---- which threads ----

@pytest.mark.kernel
def test_tid_filter(prog):
    with Target(prog) as t:
        with Tool("offcputime", "-f", "-t", t.pid) as a, \
             Tool("offcputime", "-f", "--tid", 1) as b:
            took = t.send("sleep 2 100")
            out_a, err_a, rc_a = a.stop()
            out_b, _, rc_b = b.stop()
    assert rc_a == rc_b == 0
    (found,) = sleep_lines(folded(out_a), CHAIN)
    assert_total(found[1], 2, 100, took, out_a, err_a)
    assert all(f[0] == COMM for f, _ in folded(out_a)), out_a
    assert not any(f[0] == COMM for f, _ in folded(out_b)), out_b


def kthread(tid):
    """True/False for a kernel thread or not; None when it is gone."""
    try:
        with open(f"/proc/{tid}/stat") as f:
            stat = f.read()
    except FileNotFoundError:
        return None
    flags = int(stat.rsplit(")", 1)[1].split()[6])
    return bool(flags & PF_KTHREAD)


@pytest.mark.parametrize("option", ["-p", "-t"])
def test_pid_and_tid_lists_as_bcc_takes_them(prog, option):
    """-p and -t take bcc's comma-separated lists: three workloads sleep,
    the two listed are timed in full, the third not at all."""
    with Target(prog) as a, Target(prog) as b, Target(prog) as c:
        with Tool("offcputime", "-j", option, f"{a.pid},{c.pid}") as tool:
            agent_before = agent_switches()
            took = {t.pid: t.send(cmd) for t, cmd in
                    ((a, "sleep 2 100"), (b, "sleep 3 100"), (c, "sleep 1 150"))}
            agent = agent_switches() - agent_before
            out, err, rc = tool.stop()
    assert rc == 0, err
    records = json_lines(out)
    loss = loss_record(records)
    assert loss["blocks_untimed"] <= agent, loss
    chains = {}
    for r in records[:-1]:
        if r["comm"] == COMM and r["user"][-3:] == CHAIN:
            chains[r["pid"]] = chains.get(r["pid"], 0) + r["value"]
    assert set(chains) == {a.pid, c.pid}, records
    assert_total(chains[a.pid], 2, 100, took[a.pid], out, not_timed=loss["blocks_untimed"])
    assert_total(chains[c.pid], 1, 150, took[c.pid], out, not_timed=loss["blocks_untimed"])



@pytest.mark.parametrize("flag, kernel_threads", [("-k", True), ("-u", False)])
@pytest.mark.kernel
def test_thread_kind_filters(prog, flag, kernel_threads):
    with Target(prog) as t:
        with Tool("offcputime", "-j", flag) as tool:
            t.send("sleep 2 100")
            # Work for kernel threads: a network namespace is torn down
            # by a kworker (cleanup_net).
            for _ in range(3):
                subprocess.run(["unshare", "-n", "true"], check=True)
            out, err, rc = tool.stop()
        records = json_lines(out)
        # Every thread of the system: its hundreds of stacks may collide
        # in the stack map (a birthday bound), which tk_stacks_report
        # counts; but no block and no notice is lost.
        loss = loss_record(records)
        assert (loss["events_lost"], loss["map_inserts_failed"]) == (0, 0), loss
        stacks = records[:-1]
        assert stacks, out
        kinds = {kthread(r["tid"]) for r in stacks} - {None}
        assert kinds == {kernel_threads}, stacks
        mine = [r for r in stacks if r["pid"] == t.pid]
    assert rc == 0, err
    if kernel_threads:
        assert mine == [] and all(r["user"] == [] for r in stacks), out
    else:
        assert any(r["user"][-3:] == CHAIN for r in mine), mine


@pytest.mark.kernel
def test_exited_threads_leave_no_start_entry():
    """The start map holds only threads that are off CPU now: a thread's
    entry goes when it runs again, and the final switch of an exiting
    thread (TASK_DEAD) makes none, so the map cannot fill with the dead."""
    with Tool("offcputime", "-j") as tool:
        pids = []
        for _ in range(30):
            p = subprocess.Popen(["sleep", "0.01"])   # blocks, then exits
            p.wait()
            pids.append(p.pid)
        r = subprocess.run(["bpftool", "map", "dump", "id",
                            str(tool_map_id(tool.proc.pid, "start")), "-j"],
                           capture_output=True, text=True, check=True)
        out, err, rc = tool.stop()
    assert rc == 0, err
    # Raw bytes: the map's value is sized to the --unwind mode's key at
    # run time, so the map has no BTF for bpftool to format it by.
    # struct offcpu_start: u64 ts, then struct tk_stack_key (u32 tgid,
    # u32 pid, ...).
    def raw(hexbytes):
        return bytes(int(b, 16) for b in hexbytes)
    entries = [(int.from_bytes(raw(e["key"]), "little"), raw(e["value"]))
               for e in json.loads(r.stdout)]
    tids = {tid for tid, _ in entries}
    assert entries and not tids & set(pids), tids & set(pids)
    for tid, v in entries:
        ts, pid = int.from_bytes(v[:8], "little"), int.from_bytes(v[12:16], "little")
        assert pid == tid and ts > 0, (tid, v[:16])
    # The sleeps were seen, and nothing was lost.
    records = json_lines(out)
    assert loss_record(records)["map_inserts_failed"] == 0
    assert any(r.get("pid") in pids and r["comm"] == "sleep" for r in records[:-1])


# ---- output formats ----

def test_json_records(prog):
    out, err, pid, (took,) = trace(prog, ["-j", "-p", "PID"], [f"sleep {SLEEPS} {SLEEP_MS}"])
    records = json_lines(out)
    loss = loss_record(records)
    assert dict(loss, blocks_untimed=0,
                stacks_unwind_incomplete=0) == NO_LOSS, loss  # as trace()
    stacks = records[:-1]
    for r in stacks:
        assert set(r) == STACK_KEYS, r
        assert (r["type"], r["comm"], r["pid"], r["tid"], r["unit"]) == \
            ("stack", COMM, pid, pid, "us"), r
        assert r["user_missed"] is False and r["kernel_missed"] is False, r
        assert isinstance(r["value"], int) and r["value"] > 0, r
    # Largest total last, as in the report.
    assert [r["value"] for r in stacks] == sorted(r["value"] for r in stacks)
    chain = [r for r in stacks if r["user"][-3:] == CHAIN and
             no_machinery(r["kernel"])[-3:] == SLEEP_KERNEL_END]
    assert len(chain) == 1, stacks
    assert_sleep_kernel(chain[0]["kernel"])  # outermost first
    assert_total(chain[0]["value"], SLEEPS, SLEEP_MS, took, out,
                 not_timed=loss["blocks_untimed"])


def test_json_user_only_has_no_kernel_fields(prog):
    out, _, _, _ = trace(prog, ["-j", "-U", "-p", "PID"], ["sleep 1 50"])
    stacks = json_lines(out)[:-1]
    assert stacks and all(set(r) == STACK_KEYS - {"kernel", "kernel_missed"} for r in stacks)


REPORT_BLOCK = re.compile(r"((?:    \S[^\n]*\n)+)    -                (\S+) \((\d+)\)\n"
                          r"        (\d+)\n\n")


def test_report_is_bccs(prog):
    out, err, pid, (took,) = trace(prog, ["-p", "PID"], [f"sleep {SLEEPS} {SLEEP_MS}"])
    blocks = []
    pos = 0
    while pos < len(out):
        m = REPORT_BLOCK.match(out, pos)
        assert m, out[pos:]
        frames = [line[4:] for line in m.group(1).splitlines()]
        blocks.append((frames, m.group(2), int(m.group(3)), int(m.group(4))))
        pos = m.end()
    assert blocks, out
    assert all((comm, tid) == (COMM, pid) for _, comm, tid, _ in blocks), out
    assert [b[3] for b in blocks] == sorted(b[3] for b in blocks), out  # largest last
    # (frames innermost first: reversed, the sleep path ends the list)
    chain = [b for b in blocks if "wait_inner" in b[0] and
             no_machinery(reversed(b[0]))[-3:] == SLEEP_KERNEL_END]
    assert len(chain) == 1, out
    frames, _, _, count = chain[0]
    # Innermost first: the kernel frames, then the user frames.
    kernel = no_machinery(list(reversed(frames[:frames.index("wait_inner")])))
    user = frames[frames.index("wait_inner"):]
    assert user[:3] == list(reversed(CHAIN)), frames
    assert_sleep_kernel(kernel)
    assert_total(count, SLEEPS, SLEEP_MS, took, out, err)


def test_duration_argument_ends_the_run(prog):
    with Target(prog) as t:
        tool = Tool("offcputime", "-f", "-p", t.pid, "1").start()
        took = t.send("sleep 2 100")
        out, err, rc = tool.wait(timeout=30)
    assert rc == 0, err
    (found,) = sleep_lines(folded(out), CHAIN)
    assert_total(found[1], 2, 100, took, out, err)


# ---- options ----

@pytest.mark.parametrize("method", ["tp_btf", "raw_tp"])
@pytest.mark.kernel
def test_dry_run_shows_the_probe_and_method(method):
    require(method)
    env = None if method == "tp_btf" else {"TRACEKIT_ATTACH": method}
    r = run("offcputime", "--dry-run", env=env)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"probe offcpu_switch {method} sched_switch", r.stdout
    assert len(lines) == 2 and re.fullmatch(r"transport (ringbuf|perf)", lines[1]), r.stdout


# ---- -s: offsets ----

def offsets_of_chain(frames, prog):
    """frames (outermost first) with -s: the user chain at the code's own
    places (objdump): each caller at the return address of its call, and
    in a sleep wait_inner at the instruction after its system call;
    every other frame name+0xN too, but what is not known. Returns the
    frames without offsets."""
    ret = next_instruction_offsets(prog)
    names, chain = [], []
    for f in frames:
        if f.startswith("[unknown]"):
            names.append(f)
            continue
        m = re.fullmatch(r"(.+)\+0x([0-9a-f]+)", f)
        assert m, frames
        names.append(m[1])
        if m[1] in CHAIN:
            chain.append((m[1], int(m[2], 16)))
    assert [n for n, _ in chain] == CHAIN, frames
    for (caller, off), (callee, _) in zip(chain, chain[1:]):
        assert [off] == ret[(caller, callee)], (caller, callee, frames)
    if names[-3:] == SLEEP_KERNEL_END:
        assert [chain[-1][1]] == ret[("wait_inner", "syscall")], frames
    return names


def test_offset_in_folded_report_and_json(prog):
    """-s (bcc's --offset): func+0xN in folded lines, the report and
    JSON alike; the sleeping chain's offsets are where its code calls
    and makes the system call."""
    out, err, _, (took,) = trace(prog, ["-f", "-s", "-p", "PID"], ["sleep 2 50"])
    lines = [(f[:1] + offsets_of_chain(f[1:], prog), n) for f, n in folded(out)
             if f[0] == COMM and "wait_inner" in ";".join(f)]
    (found,) = sleep_lines(lines, CHAIN)
    assert_sleep_kernel(split_at(found[0], CHAIN))
    assert_total(found[1], 2, 50, took, out, err)
    out, err, pid, _ = trace(prog, ["-s", "-p", "PID"], ["sleep 2 50"])
    blocks = [m.group(1) for m in REPORT_BLOCK.finditer(out)]
    chains = [offsets_of_chain([l[4:] for l in reversed(b.splitlines())], prog)
              for b in blocks if "wait_inner+0x" in b]
    assert any(split_at(c, CHAIN) is not None and c[-3:] == SLEEP_KERNEL_END
               for c in chains), out
    out, err, _, _ = trace(prog, ["-j", "-s", "-p", "PID"], ["sleep 2 50"])
    recs = [r for r in json_lines(out)[:-1] if any("wait_inner" in f for f in r["user"])]
    chains = [offsets_of_chain(r["user"] + r["kernel"], prog) for r in recs]
    assert any(c[-3:] == SLEEP_KERNEL_END for c in chains), out


@pytest.mark.parametrize("args, message", [
    (["-m", "x"], "invalid -m/--min-block-time value 'x': expected an integer >= 0"),
    (["-M", "-5"], "invalid -M/--max-block-time value '-5': expected an integer >= 0"),
    (["-m", "10", "-M", "5"],
     "invalid -m/--min-block-time value '10': more than -M/--max-block-time 5"),
    (["--state", "-1"], "invalid --state value '-1': expected an integer from 0 to 2147483647"),
    (["-u", "-k"], "options -u/--user-threads-only and -k/--kernel-threads-only cannot be combined"),
    (["-U", "-K"], "options -U/--user-stacks-only and -K/--kernel-stacks-only cannot be combined"),
    (["-t", "0"], "invalid --tid value '0': expected an integer from 1 to 2147483647"),
    (["0"], "invalid duration value '0': expected a number from 0.001 to 1e+09"),
    (["1", "2"], "unexpected argument '2' after [duration]"),
    (["-x"], "unknown option '-x'"),
    (["--state"], "option '--state' needs a value"),
])
def test_bad_options_exit_2_with_one_line(args, message):
    r = run("offcputime", *args)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == f"offcputime: {message}; see 'offcputime --help'\n"


def test_uid_is_long_only_since_u_is_user_threads():
    """As in bcc, -u is --user-threads-only and -d --delimited: --uid and
    --duration keep their long names."""
    r = run("offcputime", "--help")
    assert r.returncode == 0
    assert re.search(r"^\s+-u, --user-threads-only", r.stdout, re.M), r.stdout
    assert re.search(r"^\s+-d, --delimited", r.stdout, re.M), r.stdout
    assert re.search(r"^\s+--uid=USER", r.stdout, re.M), r.stdout
    assert re.search(r"^\s+--duration=SEC", r.stdout, re.M), r.stdout


# ---- --print-cgroup: each cgroup's time apart ----

REPORT_CGROUP_BLOCK = re.compile(r"((?:    \S[^\n]*\n)+)    -                (\S+) \((\d+)\)\n"
                                 r"    cgroup           ([^\n]+)\n        (\d+)\n\n")


def cgroup_stacks(fmt, out):
    """[(cgroup, tid (None when folded), [comm, user frames outermost
    first, kernel frames], us)] of offcputime --print-cgroup output in
    format fmt: folded (the cgroup first, ';' made '_'), the report (a
    "cgroup  PATH" line after each comm line) or JSON."""
    if fmt == "-j":
        return [(r["cgroup"], r["tid"], [r["comm"], *r["user"], *r["kernel"]], r["value"])
                for r in json_lines(out)[:-1]]
    if fmt == "-f":
        return [(f[0], None, f[1:], n) for f, n in folded(out)]
    stacks, pos = [], 0
    while pos < len(out):
        m = REPORT_CGROUP_BLOCK.match(out, pos)
        assert m, out[pos:]
        frames = [line[4:] for line in reversed(m[1].splitlines())]
        stacks.append((m[4], int(m[3]), [m[2], *frames], int(m[5])))
        pos = m.end()
    return stacks


@pytest.mark.parametrize("fmt", ["-f", "report", "-j"])
@pytest.mark.kernel
def test_print_cgroup_times_each_cgroup_apart(prog, cgroup, fmt):
    """--print-cgroup: two workloads sleep in the same chain, one in a
    cgroup the test made (2 sleeps of 100 ms), the other in the test's
    own (3 of 50 ms); the stacks are taken at switch-out, where the
    sleeper is current. Each sleep's time is under its own cgroup's
    exact path: folded, the first frame (its ';' made '_'), before the
    comm; in the report, a "cgroup  PATH" line after the comm line; in
    JSON, "cgroup"."""
    d, inside_cg = cgroup
    args = ["--print-cgroup", *{"report": []}.get(fmt, [fmt])]
    with Target(prog) as inside, Target(prog) as outside:
        (d / "cgroup.procs").write_text(str(inside.pid))
        with Tool("offcputime", *args, "-p", f"{inside.pid},{outside.pid}") as tool:
            agent_before = agent_switches()
            took = {inside.pid: inside.send("sleep 2 100"),
                    outside.pid: outside.send("sleep 3 50")}
            agent = agent_switches() - agent_before
            out, err, rc = tool.stop()
    assert rc == 0, err
    check_losses(args, out, err, agent)
    not_timed = loss_record(json_lines(out))["blocks_untimed"] if fmt == "-j" else untimed(err)
    want = {inside.pid: inside_cg.replace(";", "_") if fmt == "-f" else inside_cg,
            outside.pid: own_cgroup()}
    stacks = cgroup_stacks(fmt, out)
    if fmt == "-j":
        assert all(set(r) == STACK_KEYS | {"cgroup"} for r in json_lines(out)[:-1]), out
    if fmt == "-f":  # no tid to tell the workloads apart: the times do
        assert {cg for cg, *_ in stacks} <= set(want.values()), out
    else:
        assert all(cg == want[tid] for cg, tid, _, _ in stacks), out
    for pid, (sleeps, ms) in ((inside.pid, (2, 100)), (outside.pid, (3, 50))):
        (found,) = sleep_lines([(f, n) for cg, _, f, n in stacks if cg == want[pid]], CHAIN)
        assert_total(found[1], sleeps, ms, took[pid], out, not_timed=not_timed)


def test_print_cgroup_names_the_commands_cgroup(prog, tmp_path):
    """-- COMMAND runs COMMAND in <own cgroup>/tracekit-offcputime-PID,
    PID the tool's: its 2 sleeps of 100 ms are under that path. The test
    talks to the workload through the tool's stdin and stdout (COMMAND's);
    the stacks go to -o FILE."""
    out = tmp_path / "out.folded"
    agent_before = agent_switches()
    p = subprocess.Popen([tool_path("offcputime"), "-f", "--print-cgroup", "-o", str(out),
                          "--", str(prog)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, bufsize=1)
    try:
        assert p.stdout.readline() == "ready\n"
        p.stdin.write("sleep 2 100\n")
        p.stdin.flush()
        done = re.fullmatch(r"done (\d+) (\d+) (\d+)\n", p.stdout.readline())
        wait_noted(p.pid, prog)
        _, err = p.communicate(timeout=60)   # closes stdin: the workload exits
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert done and p.returncode == 0, err
    text = out.read_text()
    check_losses([], text, err, agent_switches() - agent_before)
    cg = own_cgroup().rstrip("/") + f"/tracekit-offcputime-{p.pid}"
    lines = folded(text)
    assert all(f[0] == cg for f, _ in lines), text
    (found,) = sleep_lines([(f[1:], n) for f, n in lines], CHAIN)
    assert_total(found[1], 2, 100, Took(*done.groups()), text, err)
