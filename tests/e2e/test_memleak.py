"""memleak end to end, against valgrind: progs/leaker.c leaks known
blocks from known functions (malloc, calloc, realloc grown and shrunk,
posix_memalign, a realloc that fails, a block the C library maps for
malloc, a second thread, a forked child and a block the child frees in
its own copy) and frees the rest (every allocator, blocks freed by
another thread, calls that fail). memleak's outstanding bytes and blocks
per leaking function must equal valgrind's "definitely lost" for the
same function, and name the same functions, run by -- COMMAND and by -p
on the running program. It also leaks a mapping of its own, which
valgrind does not count and memleak must (MAPPED).

memleak reports what is outstanding, reachable or not (it does not scan
the heap): the C library's own blocks (a thread's stack, its TLS) are
outstanding too, and their stacks start in the C library. The leaking
functions compared are those of leaker itself, the first frame of each
stack (the allocator's caller)."""
import os
import re
import subprocess
import uuid
from collections import Counter

import pytest

from conftest import (FRAME_POINTERS, ROOT, Tool, json_lines, loss_record,
                      next_instruction_offsets, run, wait_noted)

# What leaker leaks, by function: (bytes, blocks).
LEAKS = {
    "leak_malloc": (300, 3),
    "leak_calloc": (400, 2),
    "leak_realloc": (1000, 1),
    "leak_memalign": (512, 2),
    "leak_realloc_fail": (128, 1),
    "thread_leak": (300, 1),
    "parent_inherit": (77, 1),
    "child_leak": (500, 1),
    "leak_big": (300000, 1),
}
# What it maps and never unmaps: memleak's alone.
MAPPED = {"leak_mmap": (12288, 1)}


@pytest.fixture(scope="module")
def leaker(tmp_path_factory):
    path = tmp_path_factory.mktemp("leaker") / "leaker"
    subprocess.run(["cc", "-O0", "-g", *FRAME_POINTERS, "-pthread", "-o", str(path),
                    str(ROOT / "tests/e2e/progs/leaker.c")], check=True)
    return str(path)


@pytest.fixture(scope="module")
def valgrind(leaker, tmp_path_factory):
    """valgrind's definitely lost blocks of one leaker run, by function,
    for the parent and the child: ({func: (bytes, blocks)}, same)."""
    logs = tmp_path_factory.mktemp("valgrind")
    subprocess.run(["valgrind", "--leak-check=full", "--trace-children=yes",
                    f"--log-file={logs}/vg.%p", leaker], check=True, timeout=600,
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    by_pid = {}
    for log in logs.iterdir():
        pid = int(log.name.split(".")[1])
        by_pid[pid] = definitely_lost(log.read_text())
    parent, child = sorted(by_pid)   # the child's pid is the later one
    return by_pid[parent], by_pid[child]


def definitely_lost(text):
    """{function: (bytes, blocks)} of a valgrind log's "definitely lost"
    records: the first frame outside valgrind's allocator replacements."""
    lost = Counter(), Counter()
    lines = [re.sub(r"^==\d+== ", "", l) for l in text.splitlines()]
    for i, line in enumerate(lines):
        m = re.match(r"([\d,]+) bytes in ([\d,]+) blocks are definitely lost", line)
        if not m:
            continue
        for frame in lines[i + 1:]:
            f = re.match(r"\s+(?:at|by) 0x[0-9A-F]+: (\S+) \((.*)\)", frame)
            assert f, frame
            if "vgpreload" not in f[2]:
                lost[0][f[1]] += int(m[1].replace(",", ""))
                lost[1][f[1]] += int(m[2].replace(",", ""))
                break
    return {f: (lost[0][f], lost[1][f]) for f in lost[0]}


def leaker_functions(path):
    out = subprocess.run(["nm", "--defined-only", path], capture_output=True, text=True,
                         check=True).stdout
    return {l.split()[2] for l in out.splitlines() if l.split()[1] in "tT"}


def by_function(records, funcs, pid=None):
    """{function: (bytes, blocks)} of memleak's JSON stacks whose first
    frame (the allocator's caller) is one of funcs."""
    out = {}
    for r in records:
        if r.get("type") != "stack" or (pid is not None and r["pid"] != pid):
            continue
        first = r["user"][-1].split("+")[0]
        if first in funcs:
            b, n = out.get(first, (0, 0))
            out[first] = (b + r["bytes"], n + r["allocations"])
    return out


def assert_stacks_kept(records):
    """Every allocation's stack was recorded: none lost to the stack
    map (a collision there once left a stack without frames)."""
    loss = loss_record(records)
    keys = ("stack_collisions", "stack_map_full", "stack_buffer_full", "stack_errors")
    assert {k: loss[k] for k in keys} == dict.fromkeys(keys, 0), loss


def kernel_log():
    return subprocess.run(["dmesg"], capture_output=True, text=True, check=True).stdout


class Leaker:
    """leaker wait: attached to before it starts, ended after the
    report."""

    def __init__(self, path):
        self.proc = subprocess.Popen([path, "wait"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline() == f"pid {self.proc.pid}\n"
        self.pid = self.proc.pid

    def run(self):
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline() == "done\n"

    def end(self):
        self.proc.communicate("\n", timeout=60)
        assert self.proc.returncode == 0


def run_command(leaker, tmp_path, *args, mode=("hold",), attach=None):
    """memleak ARGS -- leaker MODE FIFO: once the program is done and
    noted (memleak holds its files, to name its frames after it exits),
    it is let exit; memleak reports at its end. (stdout, stderr, rc).
    attach: TRACEKIT_ATTACH's value, if any."""
    fifo = tmp_path / f"hold-{uuid.uuid4().hex[:8]}"
    os.mkfifo(fifo)
    t = Tool("memleak", *args, "--", leaker, *mode, fifo,
             env={"TRACEKIT_ATTACH": attach} if attach else None).start()
    try:
        with open(fifo, "w") as hold:   # once the program has done its work
            wait_noted(t.proc.pid, leaker)
            hold.write("\n")
        return t.wait()
    finally:
        if t.proc.poll() is None:
            t.proc.kill()
            t.proc.wait()


def test_valgrind_finds_the_leaks(valgrind):
    """valgrind's definitely lost, per function, are LEAKS: the parent's
    all but the child's one. The memleak tests below compare with LEAKS
    (valgrind under the kernel matrix's emulated CPU would take minutes
    and says nothing about the kernel)."""
    parent, child = valgrind
    assert child == {"child_leak": LEAKS["child_leak"]}
    assert {**parent, **child} == LEAKS


def uprobe_sessions():
    """Whether the kernel has uprobe sessions (6.13; its BTF names the
    attach type), where memleak's malloc and calloc take one program for
    entry and return."""
    btf = subprocess.run(["bpftool", "btf", "dump", "file", "/sys/kernel/btf/vmlinux"],
                         capture_output=True, text=True, check=True).stdout
    return "'BPF_TRACE_UPROBE_SESSION'" in btf


# memleak's two ways of seeing malloc and calloc return: a uprobe
# session where the kernel has one, and the uprobe and uretprobe pair
# everywhere (TRACEKIT_ATTACH=uprobe makes this kernel use it).
ATTACH = [None, "uprobe"]


def expected_method(attach):
    return "uprobe_session" if attach is None and uprobe_sessions() else "uprobe"


@pytest.mark.kernel
@pytest.mark.parametrize("attach", ATTACH, ids=["default", "uprobe"])
def test_command_matches_valgrind(leaker, tmp_path, attach):
    """-- COMMAND, its forked child included: per function, valgrind's
    numbers exactly (and the mapping it does not count). The child,
    gone at once, is named through its parent's mappings."""
    out, err, rc = run_command(leaker, tmp_path, "-j", "-T", "100", "-v", attach=attach)
    assert rc == 0, err
    assert f"probe size0_entry: {expected_method(attach)} " in err, err
    assert f"probe calloc_entry: {expected_method(attach)} " in err, err
    records = json_lines(out)
    assert_stacks_kept(records)
    assert by_function(records, leaker_functions(leaker)) == {**LEAKS, **MAPPED}
    pids = {r["pid"] for r in records if r["type"] == "stack"
            and r["user"][-1].split("+")[0] in LEAKS}
    assert len(pids) == 2   # the child's own
    assert loss_record(records)["map_inserts_failed"] == 0


@pytest.mark.kernel
def test_pid_matches_valgrind(leaker):
    """-p: the running process alone (a forked child is another
    process: not traced). Its leaks, exactly valgrind's for the parent."""
    dmesg = kernel_log()
    p = Leaker(leaker)
    try:
        with Tool("memleak", "-j", "-T", "100", "-p", p.pid) as t:
            p.run()
            out, err, rc = t.stop()
    finally:
        p.end()
    assert rc == 0, err
    records = json_lines(out)
    assert_stacks_kept(records)
    assert by_function(records, leaker_functions(leaker)) == \
        {f: v for f, v in {**LEAKS, **MAPPED}.items() if f != "child_leak"}
    assert {r["pid"] for r in records if r["type"] == "stack"} == {p.pid}
    # Before 6.1 a map that is not preallocated, used by a tracing
    # program, loads with a WARNING in the kernel's log: memleak
    # preallocates there.
    assert "uses run-time allocation" not in kernel_log()[len(dmesg):]


def test_text_report(leaker, tmp_path):
    """bcc's report: a header, then each stack's bytes and allocations
    and its frames, innermost first, name+offset: the allocator's caller
    at the instruction after its call; largest last; the PID named
    when stacks of several processes are shown."""
    out, err, rc = run_command(leaker, tmp_path, "-T", "100")
    assert rc == 0, err
    lines = out.splitlines()
    assert re.fullmatch(r"\[\d\d:\d\d:\d\d\] Top 100 stacks with outstanding allocations:",
                        lines[0])
    stacks = []
    for line in lines[1:]:
        m = re.fullmatch(r"\t(\d+) bytes in (\d+) allocations from stack of PID (\d+)", line)
        if m:
            stacks.append([int(m[1]), int(m[2]), []])
        else:
            assert line.startswith("\t\t"), line
            stacks[-1][2].append(line[2:])
    assert [s[0] for s in stacks] == sorted(s[0] for s in stacks)
    after_call = next_instruction_offsets(leaker)
    found = {}
    for size, count, frames in stacks:
        func, off = frames[0].split("+")
        if func in LEAKS or func in MAPPED:
            found[func] = (size, count)
            callee = {"leak_calloc": "calloc", "leak_realloc": "realloc",
                      "leak_memalign": "posix_memalign", "leak_mmap": "mmap"}.get(func, "malloc")
            assert int(off, 16) in after_call[(func, callee + "@plt")], frames
    assert found == {**LEAKS, **MAPPED}


def test_size_bounds_top_and_older(leaker, tmp_path):
    """-z/-Z keep allocations of those sizes (the C library's own fall
    outside these); -T the largest stacks; -o none younger."""
    out, err, rc = run_command(leaker, tmp_path, "-j", "-z", "300", "-Z", "500")
    assert rc == 0, err
    records = json_lines(out)
    stacks = [r for r in records if r["type"] == "stack"]
    mine = {**LEAKS, **MAPPED}
    assert by_function(stacks, mine) == {f: v for f, v in mine.items()
                                         if v[0] // v[1] in range(300, 501)}
    out, err, rc = run_command(leaker, tmp_path, "-j", "-T", "1", "-z", "300", "-Z", "500")
    stacks = [r for r in json_lines(out) if r["type"] == "stack"]
    assert [(s["user"][-1].split("+")[0], s["bytes"]) for s in stacks] == [("child_leak", 500)]
    out, err, rc = run_command(leaker, tmp_path, "-j", "-o", "600000")
    assert rc == 0, err
    assert [r["type"] for r in json_lines(out)] == ["loss"]


@pytest.mark.kernel
@pytest.mark.parametrize("attach", ATTACH, ids=["default", "uprobe"])
def test_library_mappings_not_counted(leaker, tmp_path, attach):
    """The mappings the C library makes for itself (malloc's large blocks
    and heaps, thread stacks, which it keeps for the next thread) are not
    the program's: with -z 1000, which leaves out malloc(40) in a new
    thread (whose arena the library maps) but not an 8 MiB stack, every
    outstanding block is leaker's own or one the library got from malloc
    (stdin's buffer)."""
    out, err, rc = run_command(leaker, tmp_path, "-j", "-z", "1000", attach=attach)
    assert rc == 0, err
    stacks = [r for r in json_lines(out) if r["type"] == "stack"]
    mine = {**LEAKS, **MAPPED}
    assert by_function(stacks, leaker_functions(leaker)) == \
        {f: v for f, v in mine.items() if v[0] // v[1] >= 1000}
    others = {s["user"][-1].split("+")[0] for s in stacks
              if s["user"][-1].split("+")[0] not in mine}
    assert others <= {"_IO_file_doallocate"}, stacks


def test_show_allocs(leaker, tmp_path):
    """-a: each outstanding allocation, adding up to the stacks."""
    out, err, rc = run_command(leaker, tmp_path, "-j", "-a", "-T", "1000")
    assert rc == 0, err
    records = json_lines(out)
    allocs = [r for r in records if r["type"] == "alloc"]
    stacks = [r for r in records if r["type"] == "stack"]
    assert sum(a["size"] for a in allocs) == sum(s["bytes"] for s in stacks)
    assert len(allocs) == sum(s["allocations"] for s in stacks)
    assert all(re.fullmatch(r"0x[0-9a-f]+", a["addr"]) and a["age_ms"] >= 0 for a in allocs)
    assert Counter(a["size"] for a in allocs)[77] == 1
    out, err, rc = run_command(leaker, tmp_path, "-a", "-z", "77", "-Z", "77")
    assert re.search(r"^\taddr = [0-9a-f]+ size = 77$", out, re.M), out


SAMPLE = ("sample", "1000")


def sampled(records):
    """leak_sampled's (bytes, blocks) in memleak's JSON."""
    return by_function(records, {"leak_sampled"}).get("leak_sampled", (0, 0))


@pytest.mark.kernel
@pytest.mark.parametrize("attach", ATTACH, ids=["default", "uprobe"])
def test_sample_rate_exact(leaker, tmp_path, attach):
    """-s 10: every tenth call of a CPU. leaker makes 1000 calls in a
    row on CPU 0: 100 of them, whatever that CPU counted before (the
    other 900 decline their return where malloc is a session)."""
    out, err, rc = run_command(leaker, tmp_path, "-j", mode=SAMPLE, attach=attach)
    assert rc == 0, err
    assert sampled(json_lines(out)) == (16000, 1000)
    out, err, rc = run_command(leaker, tmp_path, "-j", "-s", "10", mode=SAMPLE, attach=attach)
    assert rc == 0, err
    assert sampled(json_lines(out)) == (1600, 100)


@pytest.mark.kernel
def test_full_map_counted(leaker, tmp_path):
    """--max-allocs 50: the map holds 50 blocks; every allocation that
    found it full is counted (JSON) and said (text)."""
    out, err, rc = run_command(leaker, tmp_path, "-j", "--max-allocs", "50", mode=SAMPLE)
    assert rc == 0, err
    records = json_lines(out)
    kept = sampled(records)[1]
    assert 0 < kept <= 50
    assert sum(s["allocations"] for s in records if s["type"] == "stack") <= 50
    # The sampled calls that found it full, and the few the program
    # makes after them (its hold on the FIFO).
    failed = loss_record(records)["map_inserts_failed"]
    assert 1000 - kept <= failed <= 1000 - kept + 5
    out, err, rc = run_command(leaker, tmp_path, "--max-allocs", "50", mode=SAMPLE)
    assert rc == 0, err
    m = re.fullmatch(r"memleak: (\d+) allocations not tracked: the allocation map "
                     r"was full \(50\); raise --max-allocs\n", err)
    assert m and int(m[1]) >= 950, err


EVENTFDS = 64

# A process named for the test that makes EVENTFDS eventfds when told,
# and closes them when told again: each eventfd2() allocates its context
# in do_eventfd (kmalloc), and close() frees it before it returns.
EVENTFD_PROG = """
import ctypes, os, sys
ctypes.CDLL(None).prctl(15, sys.argv[1].encode(), 0, 0, 0)
print("ready", flush=True)
sys.stdin.readline()
fds = [os.eventfd(0) for _ in range(%d)]
print("made", flush=True)
sys.stdin.readline()
for fd in fds:
    os.close(fd)
print("closed", flush=True)
sys.stdin.readline()
""" % EVENTFDS


def eventfd_contexts(records):
    """The stacks of the eventfd contexts: do_eventfd calling the
    allocator (kmalloc's name differs between kernels)."""
    return [r for r in records if r["type"] == "stack"
            and len(r["kernel"]) >= 2 and r["kernel"][-2].startswith("do_eventfd+")]


@pytest.mark.kernel
@pytest.mark.parametrize("close", [False, True], ids=["held", "closed"])
def test_kernel_allocations(close):
    """No -p: the kernel's allocators by kernel stack, -n choosing the
    allocating task. EVENTFDS contexts outstanding while held, each
    its bytes; none once closed."""
    comm = "tkml" + uuid.uuid4().hex[:8]
    prog = subprocess.Popen(["/usr/bin/python3", "-c", EVENTFD_PROG, comm],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert prog.stdout.readline() == "ready\n"
        with Tool("memleak", "-j", "-n", comm, "-T", "1000") as t:
            prog.stdin.write("\n")
            prog.stdin.flush()
            assert prog.stdout.readline() == "made\n"
            if close:
                prog.stdin.write("\n")
                prog.stdin.flush()
                assert prog.stdout.readline() == "closed\n"
            out, err, rc = t.stop()
        prog.communicate("\n\n", timeout=60)
    finally:
        if prog.poll() is None:
            prog.kill()
            prog.wait()
    assert rc == 0, err
    records = json_lines(out)
    ctx = eventfd_contexts(records)
    if close:
        assert ctx == []
    else:
        assert [r["allocations"] for r in ctx] == [EVENTFDS]
        assert ctx[0]["bytes"] % EVENTFDS == 0 and ctx[0]["bytes"] >= 8 * EVENTFDS
        assert any("sys_eventfd2" in f for f in ctx[0]["kernel"]), ctx
    assert loss_record(records)["map_inserts_failed"] == 0


def test_bad_input():
    for args, msg in [
        (["-T", "0"], "invalid --top value '0'"),
        (["-s", "0"], "invalid --sample-rate value '0'"),
        (["-z", "x"], "invalid --min-size value 'x'"),
        (["--max-allocs", "0"], "invalid --max-allocs value '0'"),
        (["-O", "c"], "--obj needs -p PID or -- COMMAND"),
        (["-p", "999999999"], "invalid --pid value"),
        (["-O", "/nonexistent/libfoo.so", "--", "true"], "invalid --obj value '/nonexistent/libfoo.so'"),
    ]:
        r = run("memleak", *args)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr.count("\n") == 1 and msg in r.stderr, (args, r.stderr)
