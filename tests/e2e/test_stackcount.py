"""stackcount end to end: a workload the test builds (a PIE and a
fixed-address executable, both linked with a shared library also built
here, all with frame pointers) calls a function through a known chain of
functions an exact number of times, or makes a syscall so; stackcount
must count exactly those calls, each with its stack, symbolized.

Kernel functions need fentry or kprobes: those tests skip, naming why,
on a kernel without them (make check-vm runs them elsewhere); here the
failure itself is checked."""
import os
import platform
import re
import select
import signal
import subprocess
import time

import pytest

from conftest import (FRAME_POINTERS, ROOT, SYSCALL_ENTRY, Tool, Workload, assert_annotated,
                      assert_no_kernel_function_tracing, elf_functions, has_ksym, json_lines,
                      kernel_fn, loss_record, next_instruction_offsets, own_cgroup, require, run,
                      tool_path, wait_noted)

PROGS = ROOT / "tests/e2e/progs"
CFLAGS = ["-O0", *FRAME_POINTERS, "-fno-inline"]
ET_EXEC, ET_DYN = 2, 3

# A kernel function reached exactly once per fsync(2), in the BTF and
# kallsyms of 5.10 to 6.18 (funclatency's tests use it too).

LOSS = {"type": "loss", "events_lost": 0, "map_inserts_failed": 0,
        "stack_collisions": 0, "stack_map_full": 0, "stack_buffer_full": 0,
        "stack_errors": 0, "stacks_truncated": 0, "stacks_unwind_incomplete": 0}


def last_possible_cpu():
    with open("/sys/devices/system/cpu/possible") as f:
        return int(re.split(r"[-,]", f.read().strip())[-1])


LAST_CPU = last_possible_cpu()


def kernel_version():
    return tuple(int(x) for x in re.match(r"(\d+)\.(\d+)", platform.release()).groups())


# A uprobe fires on a function's first instruction, before it has pushed
# its frame pointer: a frame-pointer walk then skips its caller. Linux
# 6.11 ("perf,x86: avoid missing caller address in stack traces captured
# in uprobe") adds the caller from the return address on the stack, and
# stable kernels took it (Debian's 6.1 has it, its 5.10 not): before 6.11
# the caller may be missing, from 6.11 on it must be there. arm64's user
# stack walk (perf_callchain_user) starts at the frame record x29 points
# to and never reads the link register, where the return address is at a
# function's entry: its walk always misses the caller (6.1 and 6.12), and
# --unwind auto, the default these tests run with, puts it back from the
# link register by the entry's CFI (libtrace/unwind.c): it must be there.
if platform.machine() == "aarch64":
    CALLER_AT_ENTRY = "present"
elif platform.machine() == "x86_64" and kernel_version() < (6, 11):
    CALLER_AT_ENTRY = "maybe"
else:
    CALLER_AT_ENTRY = "present"


def entry_chains(chain):
    """The frames that end a stack taken by a uprobe on chain[-1], when
    chain (outermost first) made the call: chain itself, or chain without
    the caller (CALLER_AT_ENTRY)."""
    short = chain[:-2] + chain[-1:]
    return {"present": [chain], "maybe": [chain, short], "missing": [short]}[CALLER_AT_ENTRY]


def ends_at_entry(frames, chain):
    """frames (outermost first) end with chain, as a uprobe on chain[-1]
    sees it (entry_chains)."""
    return any(frames[len(frames) - len(c):] == c for c in entry_chains(chain))


# Kernel stacks at a classic syscalls:* tracepoint: 5.10 and 6.1 hand the
# BPF program the syscall's user registers, so it has no kernel stack
# (an empty one, not a missed one); 6.12 and later hand it the kernel's,
# from the syscall entry on.
def syscall_kernel_stack_ok(frames):
    if not frames:
        return kernel_version() < (6, 12)
    return frames[:len(SYSCALL_ENTRY)] == SYSCALL_ENTRY


CALLS = ["main", "outer", "middle", "target_func"]
PATH1 = ["main", "path1", "via_one", "shared_func"]
PATH2 = ["main", "path2", "via_two", "shared_func"]
LIB = ["main", "use_lib", "sc_lib_entry", "sc_lib_inner", "sc_lib_target"]
GETPPID = ["main", "sys_outer", "sys_middle", "do_getppid"]
FSYNC = ["main", "sys_outer", "sys_middle", "do_fsync"]


@pytest.fixture(scope="module")
def progs(tmp_path_factory):
    """libsctarget.so, and the workload linked with it as a PIE (sc-pie)
    and as a fixed-address executable (sc-nopie)."""
    d = tmp_path_factory.mktemp("stackcount")
    lib = d / "libsctarget.so"
    subprocess.run(["cc", *CFLAGS, "-fPIC", "-shared", "-o", str(lib),
                    str(PROGS / "stackcount_lib.c")], check=True)
    out = {"lib": lib, "pie": d / "sc-pie", "nopie": d / "sc-nopie"}
    flags = {"pie": ["-fPIE", "-pie"], "nopie": ["-fno-pie", "-no-pie"]}
    for kind in ("pie", "nopie"):
        subprocess.run(["cc", *CFLAGS, *flags[kind], "-o", str(out[kind]),
                        str(PROGS / "stackcount_target.c"), f"-L{d}", "-lsctarget",
                        f"-Wl,-rpath,{d}"], check=True)
        with open(out[kind], "rb") as f:
            e_type = int.from_bytes(f.read(18)[16:18], "little")
        assert e_type == (ET_DYN if kind == "pie" else ET_EXEC), (kind, e_type)
    return out


class Target(Workload):
    """The workload: send("calls 5") returns once its calls are made;
    finish() ends its input and waits for it to exit."""


def trace(args, path, cmds, env=None):
    """Run stackcount while a fresh workload runs cmds; args may name the
    workload's pid as "PID". Returns (stdout, stderr, pid)."""
    with Target(path) as t:
        args = [str(t.pid) if a == "PID" else a for a in args]
        with Tool("stackcount", *args, env=env) as tool:
            for c in cmds:
                t.send(c)
            out, err, rc = tool.stop()
    assert rc == 0, err
    return out, err, t.pid


def folded(out):
    """{line without count: count} of folded output, lines unique."""
    lines = {}
    for line in out.splitlines():
        stack, count = line.rsplit(" ", 1)
        assert stack not in lines, line
        lines[stack] = int(count)
    return lines


def ends_with(stack, chain):
    """stack (';'-joined, outermost first) ends with the frames chain,
    whatever runs main (libc's start-up, not built with frame pointers)."""
    frames = stack.split(";")
    return frames[len(frames) - len(chain):] == chain


def stacks(out):
    """The stack records of a JSON run, its loss record checked. Stacks
    whose unwind ended early (--unwind auto: a syscall tracepoint also
    sees the workload's stdio, whose libc frames can outgrow the stack
    copy) are counted, and allowed: they carry a marker frame, and the
    tests' chains make their calls from functions with frame pointers."""
    records = json_lines(out)
    assert dict(loss_record(records), stacks_unwind_incomplete=0) == LOSS
    recs = records[:-1]
    assert all(r["type"] == "stack" for r in recs), recs
    return recs


def only(d):
    assert len(d) == 1, d
    return next(iter(d.items()))


# ---- user functions (uprobes) ----

@pytest.mark.parametrize("kind", ["pie", "nopie"])
@pytest.mark.kernel
def test_counts_every_call_with_its_stack(progs, kind):
    """137 calls of target_func through main -> outer -> middle: one
    folded stack, counted 137."""
    path = progs[kind]
    out, err, _ = trace(["-f", "-p", "PID", f"{path}:target_func"], path, ["calls 137"])
    stack, count = only(folded(out))
    assert ends_at_entry(stack.split(";"), CALLS) and count == 137, out
    assert "target_func" not in stack.split(";")[:-1] and "[unknown]" not in stack, out
    assert err == ""


@pytest.mark.parametrize("kind", ["pie", "nopie"])
@pytest.mark.kernel
def test_process_that_exited_still_symbolizes(progs, kind):
    """The workload makes its calls and exits before stackcount prints:
    its stacks symbolize from what stackcount noted while it ran."""
    path = progs[kind]
    with Target(path) as t:
        with Tool("stackcount", "-f", "-p", t.pid, f"{path}:target_func") as tool:
            t.send("calls 137")
            wait_noted(tool.proc.pid, path)
            t.finish()
            out, err, rc = tool.stop()
    assert rc == 0, err
    stack, count = only(folded(out))
    assert ends_at_entry(stack.split(";"), CALLS) and count == 137, out
    assert "target_func" not in stack.split(";")[:-1] and "[unknown]" not in stack, out
    assert err == ""


@pytest.mark.kernel
def test_stacks_after_an_exec_symbolize(progs):
    """A process noted in one image execs another, whose stacks lie in
    mappings the tool has not read. Its first new stack sends a notice at
    once (the kernel side tells an exec by the new address space), not
    after the 50 ms rate limit: before, a COMMAND sampled before its exec
    (profile -- COMMAND) that ran and exited within the limit printed
    only [unknown] frames (seen under TCG). Each image's stacks
    symbolize, the second's after it exited."""
    pie, nopie = progs["pie"], progs["nopie"]
    with Target(pie) as t:
        with Tool("stackcount", "-f", "-U", "-P", "-p", t.pid,
                  "t:syscalls:sys_enter_getppid") as tool:
            t.send("getppid 5")
            wait_noted(tool.proc.pid, pie)
            t.proc.stdin.write(f"exec {nopie}\n")
            t.proc.stdin.flush()
            assert t.proc.stdout.readline() == "ready\n"
            t.send("getppid 7")
            wait_noted(tool.proc.pid, nopie)
            t.finish()
            out, err, rc = tool.stop()
    assert rc == 0 and err == "", err
    lines = folded(out)
    assert sorted(lines.values()) == [5, 7], out
    for stack in lines:
        assert ends_with(stack, GETPPID) and "[unknown]" not in stack, out


@pytest.mark.parametrize("kind", ["pie", "nopie"])
def test_two_call_sites_are_two_stacks(progs, kind):
    path = progs[kind]
    out, _, _ = trace(["-f", "-p", "PID", f"{path}:shared_func"], path, ["split 100 37"])
    lines = folded(out)
    assert len(lines) == 2, out
    for chain, n in ((PATH1, 100), (PATH2, 37)):
        assert [c for s, c in lines.items() if ends_at_entry(s.split(";"), chain)] == [n], out


@pytest.mark.parametrize("kind", ["pie", "nopie"])
@pytest.mark.parametrize("spec", ["PATH", "NAME"])
@pytest.mark.kernel
def test_shared_library_function(progs, kind, spec):
    """LIB:FUNC, the library given by its path or by its name as the
    process maps it (-p): the stack crosses from the library into the
    executable."""
    path = progs[kind]
    lib = str(progs["lib"]) if spec == "PATH" else "sctarget"
    out, _, _ = trace(["-f", "-p", "PID", f"{lib}:sc_lib_target"], path, ["lib 29"])
    stack, count = only(folded(out))
    assert ends_at_entry(stack.split(";"), LIB) and count == 29, out


def test_without_pid_probes_every_process_and_merges(progs):
    path = progs["pie"]
    with Target(path) as a, Target(path) as b:
        with Tool("stackcount", "-j", f"{path}:target_func") as tool:
            a.send("calls 5")
            b.send("calls 8")
            out, err, rc = tool.stop()
    assert rc == 0, err
    (rec,) = stacks(out)
    assert set(rec) == {"type", "user", "user_missed", "kernel", "kernel_missed",
                        "value", "unit"}
    assert ends_at_entry(rec["user"], CALLS)
    assert (rec["value"], rec["unit"], rec["kernel"]) == (13, "calls", [])
    assert (rec["user_missed"], rec["kernel_missed"]) == (False, False)


def test_per_process_keeps_processes_apart(progs):
    path = progs["nopie"]
    with Target(path) as a, Target(path) as b:
        with Tool("stackcount", "-j", "-P", "-U", f"{path}:target_func") as tool:
            a.send("calls 5")
            b.send("calls 8")
            out, err, rc = tool.stop()
    assert rc == 0, err
    recs = sorted(stacks(out), key=lambda r: r["value"])
    assert [set(r) for r in recs] == [{"type", "comm", "pid", "user", "user_missed",
                                       "value", "unit"}] * 2
    assert [(r["comm"], r["pid"], r["value"]) for r in recs] == [
        ("sc-nopie", a.pid, 5), ("sc-nopie", b.pid, 8)]
    assert all(ends_at_entry(r["user"], CALLS) for r in recs)


def test_pid_probes_that_process_only(progs):
    path = progs["pie"]
    with Target(path) as a, Target(path) as b:
        with Tool("stackcount", "-f", "-P", "-p", a.pid, f"{path}:target_func") as tool:
            b.send("calls 6")
            a.send("calls 4")
            b.send("calls 6")
            out, err, rc = tool.stop()
    assert rc == 0, err
    stack, count = only(folded(out))
    assert stack.startswith("sc-pie;") and ends_at_entry(stack.split(";"), CALLS), out
    assert count == 4


def test_report_format(progs):
    """bcc's report: frames innermost first, then the count; with -P a
    "-  comm (pid)" line."""
    path = progs["pie"]
    middle = {"present": re.escape("    middle\n"), "maybe": "(    middle\n)?",
              "missing": ""}[CALLER_AT_ENTRY]
    chain = re.escape("    target_func\n") + middle + re.escape("    outer\n    main\n")
    out, _, _ = trace(["-p", "PID", f"{path}:target_func"], path, ["calls 12"])
    assert re.fullmatch(chain + r"(    \S+\n)*        12\n\n", out), out
    out, _, pid = trace(["-P", "-p", "PID", f"{path}:target_func"], path, ["calls 3"])
    assert re.fullmatch(chain + r"(    \S+\n)*" +
                        re.escape(f"    -                sc-pie ({pid})\n        3\n\n"),
                        out), out


def test_no_calls_print_nothing(progs):
    path = progs["pie"]
    out, err, _ = trace(["-p", "PID", f"{path}:target_func"], path, ["calls 0"])
    assert (out, err) == ("", "")
    out, _, _ = trace(["-j", "-p", "PID", f"{path}:target_func"], path, [])
    assert stacks(out) == []


def test_duration_ends_the_run(progs):
    path = progs["pie"]
    with Target(path) as t:
        with Tool("stackcount", "-f", "-D", "2", "-p", t.pid, f"{path}:target_func") as tool:
            t.send("calls 9")
            out, err, rc = tool.wait()
    assert rc == 0, err
    assert only(folded(out))[1] == 9


def test_dry_run_and_verbose_show_the_uprobe(progs):
    path = progs["pie"]
    res = run("stackcount", "--dry-run", f"{path}:target_func")
    assert res.returncode == 0, res.stderr
    assert [l for l in res.stdout.splitlines() if l.startswith("probe ")] == [
        f"probe probe uprobe {path}:target_func"]
    # -v is bcc's raw addresses here: the attach methods are --verbose.
    _, err, _ = trace(["--verbose", "-p", "PID", f"{path}:target_func"], path, [])
    assert f"stackcount: probe probe: uprobe {path}:target_func\n" in err
    _, err, _ = trace(["-v", "-p", "PID", f"{path}:target_func"], path, [])
    assert err == ""


# ---- tracepoints ----

@pytest.mark.kernel
def test_syscall_tracepoint_kernel_stacks_sum_to_n(progs):
    """syscalls:* are classic tracepoints only (no tp_btf, no raw_tp):
    the chain ends at tp; -K counts the kernel stacks of exactly the 41
    getppid calls."""
    path = progs["nopie"]
    out, _, _ = trace(["-j", "-K", "-p", "PID", "t:syscalls:sys_enter_getppid"], path,
                      ["getppid 41"])
    recs = stacks(out)
    assert recs and sum(r["value"] for r in recs) == 41, recs
    for r in recs:
        assert set(r) == {"type", "kernel", "kernel_missed", "value", "unit"}
        assert r["kernel_missed"] is False and syscall_kernel_stack_ok(r["kernel"]), r


@pytest.mark.kernel
def test_kernel_frames_named_by_the_kernel_as_by_kallsyms(progs):
    """Kernel frames are named by the kernel (a syscall program printing
    each address with bpf_snprintf's %pB, Linux 5.14) rather than from
    all of /proc/kallsyms: the same stacks, names and offsets (-s), as
    TRACEKIT_KSYMS=kallsyms gives them, at raw_syscalls:sys_enter (whose
    kernel stack every kernel gives; syscalls:* give none before 6.12)
    for 41 getppid calls and the workload's reads and writes (their
    number depends on timing: the stacks are compared, not counts)."""
    path = progs["nopie"]
    got = {}
    for way in ("kernel", "kallsyms"):
        env = {"TRACEKIT_KSYMS": "kallsyms"} if way == "kallsyms" else None
        out, err, _ = trace(["-f", "-s", "-K", "--verbose", "-p", "PID",
                             "t:raw_syscalls:sys_enter"], path, ["getppid 41"], env=env)
        by_kernel = way == "kernel" and kernel_version() >= (5, 14)
        assert ("stackcount: kernel symbols: named by the kernel (bpf_snprintf's %pB)\n"
                if by_kernel else "stackcount: kernel symbols: from /proc/kallsyms\n") in err, \
            (err, out)
        assert "gave no name" not in err, err
        got[way] = folded(out)
        assert sum(got[way].values()) >= 41, out
    assert set(got["kernel"]) == set(got["kallsyms"]), got
    assert all("+0x" in f for s in got["kernel"] for f in s.split(";")), got


@pytest.mark.kernel
def test_syscall_tracepoint_with_user_stacks(progs):
    """Both stacks, delimited: the user chain that made the syscall, then
    the kernel's syscall entry."""
    path = progs["pie"]
    out, _, _ = trace(["-f", "-d", "-p", "PID", "t:syscalls:sys_enter_getppid"], path,
                      ["getppid 41"])
    stack, count = only(folded(out))
    user, _, kernel = stack.partition(";-;")
    assert ends_with(user, GETPPID) and count == 41, out
    assert syscall_kernel_stack_ok(kernel.split(";") if kernel else []), out


@pytest.mark.parametrize("method", ["tp_btf", "raw_tp", "tp"])
@pytest.mark.kernel
def test_tracepoint_methods_count_exactly(progs, method):
    """raw_syscalls:sys_enter with each attach method: of the process's
    syscalls, exactly the 23 getppid calls have do_getppid's stack."""
    require(method)
    path = progs["nopie"]
    out, err, _ = trace(["-j", "--verbose", "-p", "PID", "t:raw_syscalls:sys_enter"], path,
                        ["getppid 23"], env={"TRACEKIT_ATTACH": method})
    recs = stacks(out)
    mine = [r for r in recs if r["user"][-len(GETPPID):] == GETPPID]
    assert sum(r["value"] for r in mine) == 23, recs
    for r in mine:
        assert r["user_missed"] is False and r["kernel_missed"] is False
        assert r["kernel"][:len(SYSCALL_ENTRY)] == SYSCALL_ENTRY, r
    probes = [l for l in err.splitlines() if l.startswith("stackcount: probe ")]
    assert probes == [f"stackcount: probe probe: {method} raw_syscalls/sys_enter"]


@pytest.mark.parametrize("event, attach, method", [
    ("t:sched:sched_switch", None, "tp_btf"),
    ("t:sched:sched_switch", "raw_tp", "raw_tp"),
    ("t:sched:sched_switch", "tp", "tp"),
    ("t:syscalls:sys_enter_getppid", None, "tp"),
])
@pytest.mark.kernel
def test_tracepoint_dry_run(event, attach, method):
    require(method)
    res = run("stackcount", "--dry-run", event,
              env={"TRACEKIT_ATTACH": attach} if attach else None)
    assert res.returncode == 0, res.stderr
    target = event.removeprefix("t:").replace(":", "/")
    assert [l for l in res.stdout.splitlines() if l.startswith("probe ")] == [
        f"probe probe {method} {target}"]


# ---- kernel functions ----

@pytest.mark.parametrize("method", ["fentry", "kprobe"])
@pytest.mark.parametrize("prefix", ["", "p::"])
@pytest.mark.kernel
def test_kernel_function_counts_every_call(progs, method, prefix):
    require(method)
    fn = kernel_fn()
    path = progs["pie"]
    out, err, _ = trace(["-j", "--verbose", "-p", "PID", prefix + fn], path, ["fsync 11"],
                        env={"TRACEKIT_ATTACH": method})
    recs = stacks(out)
    assert sum(r["value"] for r in recs) == 11, recs
    for r in recs:
        assert r["user"][-len(FSYNC):] == FSYNC, r
        assert r["kernel"][:len(SYSCALL_ENTRY)] == SYSCALL_ENTRY, r
    probes = [l for l in err.splitlines() if l.startswith("stackcount: probe ")]
    assert probes == [f"stackcount: probe probe: {method} {fn}"]


@pytest.mark.parametrize("method", ["fentry", "kprobe"])
@pytest.mark.kernel
def test_kernel_function_folded_kernel_only(progs, method):
    require(method)
    fn = kernel_fn()
    path = progs["nopie"]
    out, _, _ = trace(["-f", "-K", "-p", "PID", fn], path, ["fsync 7"],
                      env={"TRACEKIT_ATTACH": method})
    lines = folded(out)
    assert sum(lines.values()) == 7, out
    assert all(s.split(";")[:len(SYSCALL_ENTRY)] == SYSCALL_ENTRY for s in lines), out


@pytest.mark.parametrize("attach, event", [(None, "vfs_read"), ("kprobe", "p::vfs_read")])
@pytest.mark.kernel
def test_kernel_function_without_fentry_or_kprobes_fails_in_one_line(attach, event):
    assert_no_kernel_function_tracing("stackcount", "vfs_read", event, attach=attach)


# ---- errors ----

@pytest.mark.parametrize("event, why", [
    ("t:sched:tk_nope", "no tracepoint sched:tk_nope in this kernel "
                        "(tracefs events/ lists those it has)"),
    ("t:tk_nocat:tk_nope", "no tracepoint tk_nocat:tk_nope in this kernel "
                           "(tracefs events/ lists those it has)"),
    ("sched:tk_nope", "no library libsched.so in the ld.so cache or the library "
                      "directories, and no program sched in PATH"),
    ("sched:sched_switch", "no library libsched.so in the ld.so cache or the library "
                           "directories, and no program sched in PATH; the tracepoint "
                           "sched:sched_switch is written t:sched:sched_switch"),
    ("t:sched", "expected t:CATEGORY:NAME, such as t:sched:sched_switch"),
    ("t:sched:../x", "expected t:CATEGORY:NAME, such as t:sched:sched_switch"),
    ("a:b:c:d", "expected FUNC, LIB:FUNC, p::FUNC, p:LIB:FUNC, t:CATEGORY:NAME or "
                "u:LIB:PROBE"),
    ("tk_no_such_kernel_fn", "no kernel function tk_no_such_kernel_fn in /proc/kallsyms"),
    ("p::tk_no_such_kernel_fn", "no kernel function tk_no_such_kernel_fn in /proc/kallsyms"),
    ("p::", "expected FUNC (a kernel function), LIB:FUNC or PATH:FUNC"),
    ("k:vfs_read", "no library libk.so in the ld.so cache or the library directories, "
                   "and no program k in PATH"),
    ("tk-no-such-lib:f", "no library libtk-no-such-lib.so in the ld.so cache or the "
                         "library directories, and no program tk-no-such-lib in PATH"),
    ("tk_no_such_lib:f", "no library libtk_no_such_lib.so in the ld.so cache or the "
                         "library directories, and no program tk_no_such_lib in PATH"),
    ("p:tk-no-such-lib:f", "no library libtk-no-such-lib.so in the ld.so cache or the "
                           "library directories, and no program tk-no-such-lib in PATH"),
    ("u:c:malloc", "USDT probes are not supported yet; c:malloc traces a user function"),
    ("u:PROG:probe", "USDT probes are not supported yet; PROG:probe traces a user "
                     "function"),
    ("PROG:tk_nothing_*", "no function matches 'tk_nothing_*' (PROG: .symtab)"),
    ("PROG:no_such_fn", "no function no_such_fn in PROG (.dynsym and .symtab)"),
    ("/nonexistent/prog:f", "/nonexistent/prog: No such file or directory"),
])
def test_event_that_names_nothing_is_a_usage_error(progs, event, why):
    prog = str(progs["pie"])
    event = event.replace("PROG", prog)
    res = run("stackcount", event)
    assert (res.returncode, res.stdout) == (2, ""), res.stderr
    assert res.stderr == (f"stackcount: invalid EVENT '{event}': "
                          f"{why.replace('PROG', prog)}; see 'stackcount --help'\n")


@pytest.mark.parametrize("args, message", [
    ([], "missing EVENT: a kernel function (vfs_read), LIB:FUNC (c:malloc) or "
         "t:CATEGORY:NAME (a tracepoint)"),
    (["c:malloc", "c:free"], "unexpected argument 'c:free': one EVENT per run"),
    (["-U", "-K", "c:malloc"],
     "options -U/--user-stacks-only and -K/--kernel-stacks-only cannot be combined"),
    (["-D", "0", "c:malloc"], "invalid -D value '0': expected a number from 0.001 to 1e+09"),
    (["--duration", "x", "c:malloc"],
     "invalid --duration value 'x': expected a number from 0.001 to 1e+09"),
    (["--max-stacks", "0", "c:malloc"],
     "invalid --max-stacks value '0': expected an integer from 1 to 16777216"),
    (["-x", "c:malloc"], "unknown option '-x'"),
    (["-c", "x", "c:malloc"], f"invalid -c/--cpu value 'x': expected an integer from 0 to {LAST_CPU}"),
    (["-c", "-1", "c:malloc"], f"invalid -c/--cpu value '-1': expected an integer from 0 to {LAST_CPU}"),
    (["-c", str(LAST_CPU + 1), "c:malloc"],
     f"invalid -c/--cpu value '{LAST_CPU + 1}': expected an integer from 0 to {LAST_CPU}"),
    (["-i", "0", "c:malloc"], "invalid -i/--interval value '0': expected an integer from 1 to 86400"),
    (["-i", "x", "c:malloc"], "invalid -i/--interval value 'x': expected an integer from 1 to 86400"),
    (["-i", "c:malloc"], "invalid -i/--interval value 'c:malloc': expected an integer from 1 to 86400"),
    # -c is --cpu, as in bcc: the cgroup is --cgroup.
    (["--cgroup", "/nonexistent", "c:malloc"],
     "invalid --cgroup value '/nonexistent': not a cgroup directory (e.g. /sys/fs/cgroup/system.slice)"),
])
def test_usage_errors(args, message):
    res = run("stackcount", *args)
    assert (res.returncode, res.stdout) == (2, "")
    assert res.stderr == f"stackcount: {message}; see 'stackcount --help'\n"


def test_letters_follow_bcc():
    """bcc's stackcount letters: -c is --cpu, -v raw addresses (as
    --address), -i --interval, -s --offset; --cgroup and --verbose keep
    their common meanings, long-only."""
    r = run("stackcount", "--help")
    assert r.returncode == 0
    for pattern in (r"-c, --cpu=CPU", r"-v  ", r"-A, --address", r"-i, --interval=SEC",
                    r"-s, --offset", r"--cgroup=PATH", r"--verbose  "):
        assert re.search(rf"^\s+{pattern}", r.stdout, re.M), (pattern, r.stdout)


def test_d_is_delimited_and_duration_is_long_or_D(progs):
    """-d is --delimited, as in bcc: it takes no value, so "-d 1" leaves
    1 as a second EVENT."""
    res = run("stackcount", "-d", "1", "c:malloc")
    assert res.returncode == 2
    assert res.stderr == ("stackcount: unexpected argument 'c:malloc': one EVENT per run; "
                          "see 'stackcount --help'\n")
    path = progs["pie"]
    with Target(path) as t:
        with Tool("stackcount", "-f", "--duration", "2", "-p", t.pid,
                  f"{path}:target_func") as tool:
            t.send("calls 2")
            out, err, rc = tool.wait()
    assert rc == 0, err
    assert only(folded(out))[1] == 2


# --- Never silently incomplete: each loss counted, with its fix --------------
# Two call sites make two distinct user stacks (100 and 37 calls). A stack
# that neither the stack map nor the spill map can keep reaches userspace
# by its frames on the event buffer, and is counted in full. Without that
# way (TRACEKIT_STACK_RING=0, so that the counters stay tested), the calls
# of a stack not kept are reported lost, exactly, with the option that
# makes room.

NO_RING = {"TRACEKIT_STACK_RING": "0"}


def split_run(progs, *opts, json=False, env=None):
    target = f"{progs['pie']}:shared_func"
    out, err, _ = trace(["-U", "-P", "-p", "PID", *(["-j"] if json else ["-f"]),
                         *opts, target], progs["pie"], ["split 100 37"], env=env)
    return out, err


def ring_info(n, shared=0):
    return (f"stackcount: {n} stacks reached userspace by their frames: the stack map and "
            f"the spill map could not keep them; {shared} ids were shared by two or more "
            "(their samples show [Missed ...])\n")


@pytest.mark.kernel
def test_stack_no_map_keeps_is_counted_by_its_frames(progs):
    """One stack slot and no spill map (below 8 slots): the second stack
    finds its bucket taken, goes by its frames, and is counted in full,
    under its own frames: nothing lost."""
    out, err = split_run(progs, "--stack-storage-size", "1", "--verbose", json=True)
    assert ring_info(1) in err, err
    recs = stacks(out)   # nothing lost
    assert len(recs) == 2, recs
    for chain, n in ((PATH1, 100), (PATH2, 37)):
        assert [r["value"] for r in recs if ends_at_entry(r["user"], chain)] == [n], recs


@pytest.mark.kernel
def test_stack_map_collisions_are_counted_with_their_fix(progs):
    # One stack slot: the second stack finds its bucket taken (-EEXIST).
    out, err = split_run(progs, "--stack-storage-size", "1", env=NO_RING)
    counted = [int(line.rsplit(" ", 1)[1]) for line in out.splitlines()
               if "shared_func" in line]
    assert len(counted) == 1 and counted[0] in (100, 37), out
    lost = 137 - counted[0]
    assert (f"stackcount: {lost} stacks lost to hash collisions in the stack map; "
            "raise --stack-storage-size (now 1)\n") in err, err
    rec = loss_record(json_lines(split_run(progs, "--stack-storage-size", "1",
                                           json=True, env=NO_RING)[0]))
    assert rec["stack_collisions"] in (100, 37) and rec["stack_map_full"] == 0, rec


@pytest.mark.kernel
def test_stack_that_collides_is_kept_in_the_spill_map(progs):
    """A stack whose bucket holds another goes to the spill map: with a
    one-slot stack map, the second stack is counted in full, under its
    own frames, and nothing is lost (at the default size, with the
    kernel's fixed-seed hash, 22 stacks collide in 1.4% of runs)."""
    out, err = split_run(progs, "--verbose", json=True,
                         env={"TRACEKIT_STACK_MAP_SLOTS": "1"})
    assert ("the stack map has 1 slots, the spill map 2048 "
            "(TRACEKIT_STACK_MAP_SLOTS)\n") in err, err
    assert "by their frames" not in err, err
    recs = stacks(out)   # nothing lost
    assert len(recs) == 2, recs
    for chain, n in ((PATH1, 100), (PATH2, 37)):
        assert [r["value"] for r in recs if ends_at_entry(r["user"], chain)] == [n], recs


def three_stacks(progs, *opts, env):
    """target_func's stack and shared_func's two (5, 100 and 37 calls),
    with a one-slot stack map: (records, the loss record, stderr)."""
    path = progs["pie"]
    out, err, _ = trace(["-U", "-P", "-p", "PID", "-j", "--verbose", *opts,
                         f"{path}:*_func"], path, ["split 100 37", "calls 5"],
                        env=dict(env, TRACEKIT_STACK_MAP_SLOTS="1"))
    records = json_lines(out)
    return records[:-1], loss_record(records), err


def kept_by_chain(recs):
    """{calls: frames} of the stacks counted with frames, each checked to
    be its count's chain."""
    kept = {r["value"]: r["user"] for r in recs if not r["user_missed"]}
    for n, frames in kept.items():
        assert ends_at_entry(frames, {100: PATH1, 37: PATH2, 5: CALLS}[n]), (frames, n)
    return kept


@pytest.mark.kernel
def test_stack_the_full_spill_map_cannot_keep_goes_by_its_frames(progs):
    """A one-slot stack map and a one-slot spill map (--stack-storage-size
    8) keep two of the three stacks; the third goes by its frames and is
    counted in full."""
    recs, loss, err = three_stacks(progs, "--stack-storage-size", "8", env={})
    assert sorted(kept_by_chain(recs)) == [5, 37, 100] and len(recs) == 3, recs
    assert dict(loss, stacks_unwind_incomplete=0) == LOSS, loss
    assert ring_info(1) in err, err


def test_stack_is_lost_only_when_the_spill_map_is_full_too(progs):
    """As above, without the way by frames: the third's calls are counted
    lost to a full map."""
    recs, loss, _ = three_stacks(progs, "--stack-storage-size", "8", env=NO_RING)
    kept = kept_by_chain(recs)
    missed = [r["value"] for r in recs if r["user_missed"]]
    assert len(kept) == 2 and missed == [loss["stack_map_full"]], recs
    assert sorted([*kept, *missed]) == [5, 37, 100], recs
    assert loss["stack_collisions"] == 0, loss


@pytest.mark.kernel
def test_spilled_stacks_whose_hashes_meet_are_told_apart(progs):
    """Spilled stacks are keyed by a hash of their frames and compared in
    full: with every key the same (0 bits of hash), the first spilled
    stack is kept, the next is not taken for it: it goes by its frames,
    under an id of the other hash, and is counted in full; without that
    way, a counted collision."""
    bits = {"TRACEKIT_STACK_SPILL_HASH_BITS": "0"}
    recs, loss, err = three_stacks(progs, env=bits)
    assert sorted(kept_by_chain(recs)) == [5, 37, 100] and len(recs) == 3, recs
    assert dict(loss, stacks_unwind_incomplete=0) == LOSS, loss
    recs, loss, _ = three_stacks(progs, env=dict(bits, **NO_RING))
    kept = kept_by_chain(recs)
    missed = [r["value"] for r in recs if r["user_missed"]]
    assert len(kept) == 2 and missed == [loss["stack_collisions"]], recs
    assert sorted([*kept, *missed]) == [5, 37, 100], recs
    assert loss["stack_map_full"] == 0, loss


@pytest.mark.kernel
def test_stacks_sent_under_one_id_are_not_merged(progs):
    """With no spill map and 0 bits of hash, the second and third stacks
    are sent by their frames under one id, and BPF counts their calls
    under one key: userspace sees two stacks under the id and gives
    neither out (the key's calls show [Missed User Stack], counted as a
    stack not read), rather than one's frames for both."""
    recs, loss, err = three_stacks(progs, "--stack-storage-size", "1",
                                   env={"TRACEKIT_STACK_SPILL_HASH_BITS": "0"})
    kept = kept_by_chain(recs)
    missed = [r["value"] for r in recs if r["user_missed"]]
    assert len(kept) == 1 and len(missed) == 1 and sum([*kept, *missed]) == 142, recs
    assert ring_info(2, 1) in err, err
    # Stacks not read count by key: the two stacks' keys differ in the
    # user registers (--unwind auto), and the report merges them.
    assert loss["stack_errors"] == 2 and loss["stack_buffer_full"] == 0, loss


def test_stacks_the_event_buffer_cannot_hold_are_counted_with_their_fix(progs):
    """Nine stacks (every function of "split 1 1" and "calls 1"), a
    one-slot stack map and no spill map: eight go by their frames, into
    a one-page event buffer while the reader is stopped. A stack of 127
    frame slots takes 1032 bytes there, so three fit and five are
    counted lost, with the options that make room; the three are
    counted in full when the reader reads again."""
    path = progs["pie"]
    with Target(path) as t:
        with Tool("stackcount", "-U", "-P", "-p", str(t.pid), "-f", "--buffer-kb", "4",
                  "--stack-storage-size", "1", f"{path}:*") as tool:
            os.kill(tool.proc.pid, signal.SIGSTOP)
            try:
                t.send("split 1 1")
                t.send("calls 1")
            finally:
                os.kill(tool.proc.pid, signal.SIGCONT)
            out, err, rc = tool.stop()
    assert rc == 0, err
    assert ("stackcount: 5 stacks lost: neither stack map could keep them and the ring "
            "buffer was full; raise --stack-storage-size (now 1) or --buffer-kb\n") in err, err
    lines = folded(out)
    missed = [s for s in lines if s.endswith("[Missed User Stack]")]
    kept = [s.split(";")[-1] for s in lines if s not in missed]
    assert sum(lines[s] for s in missed) == 5 and len(kept) == 4, out
    assert all(lines[s] == 1 for s in lines if s not in missed), out


@pytest.mark.kernel
def test_full_counts_map_drops_samples_and_says_so(progs):
    out, err = split_run(progs, "--max-stacks", "1")
    lines = [line for line in out.splitlines() if "shared_func" in line]
    assert len(lines) == 1, out
    kept = int(lines[0].rsplit(" ", 1)[1])
    assert kept in (100, 37)
    assert (f"stackcount: {137 - kept} samples dropped: the counts map was full "
            "(1 stacks); raise --max-stacks\n") in err, err
    rec = loss_record(json_lines(split_run(progs, "--max-stacks", "1", json=True)[0]))
    assert rec["map_inserts_failed"] == 137 - (100 if rec["map_inserts_failed"] == 37 else 37)


@pytest.mark.kernel
def test_truncated_stacks_are_counted_with_their_fix(progs):
    # Three frames kept of a deeper stack: the innermost three, and each
    # (process, stack) that filled every slot is reported as truncated.
    out, err = split_run(progs, "--perf-max-stack-depth", "3")
    got = [line.split(";", 1)[1] for line in sorted(out.splitlines())]
    want = [[";".join(c[-3:]) + f" {n}" for c in entry_chains(chain)]
            for chain, n in ((PATH1, 100), (PATH2, 37))]
    assert len(got) == 2 and all(g in w for g, w in zip(got, want)), out
    assert ("stackcount: 2 stacks reached the 3-frame limit and may be truncated; "
            "raise --perf-max-stack-depth (and kernel.perf_event_max_stack)\n") in err, err
    rec = loss_record(json_lines(split_run(progs, "--perf-max-stack-depth", "3",
                                           json=True)[0]))
    assert rec["stacks_truncated"] == 2, rec


def test_annotations_mark_kernel_frames(progs):
    """-a: bcc's _[k] after every kernel frame, none after a user frame:
    the 7 getppid calls' one stack (-P: comm first), user then kernel
    (the syscall entry; none before 6.12: syscall_kernel_stack_ok)."""
    path = progs["nopie"]
    out, err, _ = trace(["-a", "-d", "-f", "-P", "-p", "PID", "t:syscalls:sys_enter_getppid"],
                        path, ["getppid 7"])
    assert err == "", err
    [(stack, count)] = folded(out).items()
    kernel = stack.partition(";-;")[2]
    frames = kernel.split(";") if kernel else []
    assert count == 7 and assert_annotated(stack) == len(frames), out
    assert syscall_kernel_stack_ok([f[:-len("_[k]")] for f in frames]), out


def test_complete_run_reports_no_loss(progs):
    out, err = split_run(progs)
    assert err == "", err


# ---- bcc's output options: -s offsets, -v raw addresses, -c CPU, -i ----

def offset_frames(frames, path):
    """frames (outermost first) as "func+0xN": the workload's own frames
    must be where the code says, the innermost at target_func's first
    instruction (the uprobe), each caller's at the return address of its
    call (the chain's calls are one each); returns the frames without
    offsets."""
    ret = next_instruction_offsets(path)
    names = []
    for f in frames:
        m = re.fullmatch(r"(.+)\+0x([0-9a-f]+)", f)
        assert m, frames
        names.append(m[1])
    chain = [(name, int(f.rsplit("+0x", 1)[1], 16)) for name, f in zip(names, frames)]
    ours = [(n, off) for n, off in chain if n in CALLS]
    assert ours[-1] == ("target_func", 0), frames
    for (caller, off), (callee, _) in zip(ours, ours[1:]):
        if (caller, callee) == ("outer", "target_func") and CALLER_AT_ENTRY != "present":
            continue  # middle missing (see CALLER_AT_ENTRY)
        assert [off] == ret[(caller, callee)], (caller, callee, frames)
    return names


@pytest.mark.parametrize("kind", ["pie", "nopie"])
def test_offset_in_folded_report_and_json(progs, kind):
    """-s: each frame as func+0xN, N from the frame's own address: 0 for
    the probed function's entry, the return address of each call in its
    callers, as objdump shows the executable's code; in the report, the
    folded line and JSON alike."""
    path = progs[kind]
    out, err, _ = trace(["-f", "-s", "-p", "PID", f"{path}:target_func"], path, ["calls 6"])
    stack, count = only(folded(out))
    assert count == 6 and err == ""
    assert ends_at_entry(offset_frames(stack.split(";"), path), CALLS), out
    out, _, _ = trace(["-s", "-p", "PID", f"{path}:target_func"], path, ["calls 4"])
    lines = out.split("\n")
    frames = lines[:-3]
    assert lines[-3:] == ["        4", "", ""] and all(f.startswith("    ") for f in frames), out
    assert ends_at_entry(offset_frames([f[4:] for f in reversed(frames)], path), CALLS), out
    out, _, _ = trace(["-j", "-s", "-p", "PID", f"{path}:target_func"], path, ["calls 3"])
    (rec,) = stacks(out)
    assert rec["value"] == 3 and "user_addresses" not in rec, rec
    assert ends_at_entry(offset_frames(rec["user"], path), CALLS), rec


def test_v_shows_raw_addresses_that_are_the_functions(progs):
    """-v (--address): each frame's raw address, as bcc's stackcount
    prints it ("%-16x " before the name); in the fixed-address executable
    the address is the function's own (from its symbol table) plus the
    offset -s shows, and lies within the function. JSON: user_addresses
    beside user. Folded lines leave addresses out, as bcc's do."""
    path = progs["nopie"]
    funcs = elf_functions(path)
    out, err, _ = trace(["-v", "-s", "-p", "PID", f"{path}:target_func"], path, ["calls 5"])
    lines = out.split("\n")
    assert lines[-3:] == ["        5", "", ""] and err == "", out
    seen = []
    for line in lines[:-3]:
        m = re.fullmatch(r"    ([0-9a-f]+) +(\S+)\+0x([0-9a-f]+)", line)
        assert m and line[4:21] == f"{int(m[1], 16):<16x} ", line
        if m[2] in funcs:
            start, size = funcs[m[2]]
            assert int(m[1], 16) == start + int(m[3], 16) and \
                start <= int(m[1], 16) < start + size, line
            seen.append(m[2])
    assert ends_at_entry(seen[::-1], CALLS), out
    # Without -s, the same addresses, each within the function named.
    out, _, _ = trace(["--address", "-p", "PID", f"{path}:target_func"], path, ["calls 2"])
    names = []
    for line in out.split("\n")[:-3]:
        addr, name = line.split()
        if name in funcs:
            start, size = funcs[name]
            assert start <= int(addr, 16) < start + size, line
            names.append(name)
    assert ends_at_entry(names[::-1], CALLS), out
    out, _, _ = trace(["-j", "-v", "-p", "PID", f"{path}:target_func"], path, ["calls 3"])
    (rec,) = stacks(out)
    assert len(rec["user_addresses"]) == len(rec["user"]) and rec["value"] == 3, rec
    ours = [(n, int(a, 16)) for n, a in zip(rec["user"], rec["user_addresses"]) if n in funcs]
    assert ours[-1] == ("target_func", funcs["target_func"][0]), rec
    assert all(funcs[n][0] <= a < funcs[n][0] + funcs[n][1] for n, a in ours), rec
    out_v, _, _ = trace(["-f", "-v", "-p", "PID", f"{path}:target_func"], path, ["calls 2"])
    out, _, _ = trace(["-f", "-p", "PID", f"{path}:target_func"], path, ["calls 2"])
    assert out_v == out


@pytest.mark.parametrize("event", ["uprobe", "tracepoint"])
@pytest.mark.kernel
def test_cpu_counts_only_events_on_that_cpu(progs, event):
    """-c CPU: the workload, pinned by the test to one CPU and then the
    other, makes 7 calls on the first and 5 on the second; a stackcount
    on each CPU counts just its own."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("needs two CPUs")
    path = progs["nopie"]
    with Target(path) as t:
        spec = f"{path}:target_func" if event == "uprobe" else "t:syscalls:sys_enter_getppid"
        cmd = "calls" if event == "uprobe" else "getppid"
        tools = [Tool("stackcount", "-f", "-U", "-c", cpu, "-p", t.pid, spec).start()
                 for cpu in cpus[:2]]
        try:
            for cpu, n in zip(cpus, (7, 5)):
                os.sched_setaffinity(t.pid, {cpu})
                t.send(f"{cmd} {n}")
            results = [tool.stop() for tool in tools]
        finally:
            for tool in tools:
                tool.__exit__()
    # A uprobe sees the stack at a function's entry, the tracepoint in
    # do_getppid's body.
    ends = (lambda s: ends_at_entry(s.split(";"), CALLS)) if event == "uprobe" else \
        (lambda s: ends_with(s, GETPPID))
    for (out, err, rc), n in zip(results, (7, 5)):
        assert rc == 0 and err == "", err
        stack, count = only(folded(out))
        assert count == n and ends(stack), out


class Output:
    """A running tool's stdout, read as it comes: lines, and whether more
    came by now."""

    def __init__(self, proc):
        self.fd = proc.stdout.fileno()
        self.text = ""

    def read(self, timeout):
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return False
        data = os.read(self.fd, 65536)
        assert data, f"the tool ended early: {self.text!r}"
        self.text += data.decode()
        return True

    def drain(self):
        """Everything written so far."""
        while self.read(0):
            pass
        return self.text

    def wait_for(self, done, timeout=30):
        """Until done(text), a regex or a function."""
        test = done if callable(done) else lambda text: re.search(done, text)
        deadline = time.monotonic() + timeout
        while not test(self.text):
            left = deadline - time.monotonic()
            assert left > 0, f"not yet {done!r} in {self.text!r}"
            self.read(left)


TIME_LINE = r"\n\d\d:\d\d:\d\d\n"


def block_shows(k, count):
    """Whether the k-th block (from 1) has printed a stack counted count."""
    def test(text):
        blocks = re.split(TIME_LINE, text)
        return len(blocks) > k and f"\n        {count}\n\n" in blocks[k]
    return test


def interval_blocks(text):
    """bcc's blocks with -T: a blank line, the time, the report."""
    assert text.startswith("\n"), text
    parts = re.split(r"\n(\d\d:\d\d:\d\d)\n", text)
    assert parts[0] == "", text
    return [(parts[i], parts[i + 1]) for i in range(1, len(parts), 2)]


def test_interval_prints_each_intervals_counts(progs):
    """-i 1 -T: a block a second, bcc's (a blank line, the time, the
    stacks), each with the calls of its interval only. The workload's
    bursts (3, 5, 4 calls) are synchronised with the output: a block's
    header is flushed before its counts are read, so a burst whose
    "done" came before the next header was seen is in the next block
    whole; each next burst starts once the block with the last one has
    printed it (its counts read, so taken out of the map)."""
    path = progs["nopie"]
    bursts = [3, 5, 4]
    with Target(path) as t:
        with Tool("stackcount", "-T", "-i", "1", "-p", t.pid, f"{path}:target_func") as tool:
            out = Output(tool.proc)
            for k, n in enumerate(bursts):
                if k:
                    out.wait_for(block_shows(k, bursts[k - 1]))
                t.send(f"calls {n}")
                assert len(re.findall(TIME_LINE, out.drain())) == k, \
                    f"the test stalled for an interval: burst {n} may span two blocks"
            out.wait_for(block_shows(len(bursts), bursts[-1]))
            tool.proc.send_signal(signal.SIGINT)
            rest, err, rc = tool.wait()
    assert rc == 0 and err == "", err
    blocks = interval_blocks(out.text + rest)
    counts = []
    for when, report in blocks:
        entries = [e for e in report.split("\n\n") if e]
        assert report == "" or report.endswith("\n\n"), report
        assert len(entries) <= 1, report
        if entries:
            lines = entries[0].split("\n")
            frames = [l[4:] for l in lines[:-1] if l.startswith("    ")]
            assert ends_at_entry(frames[::-1], CALLS), report
            counts.append(int(lines[-1]))
        else:
            counts.append(0)
    assert counts[:3] == bursts and not any(counts[3:]), blocks


def test_interval_json_records_carry_time_and_interval(progs):
    """-j -i: each record has "time" and "interval"; across the blocks,
    the calls add up to those made."""
    path = progs["nopie"]
    with Target(path) as t:
        with Tool("stackcount", "-j", "-i", "1", "-p", t.pid, f"{path}:target_func") as tool:
            out = Output(tool.proc)
            t.send("calls 6")
            out.wait_for(r'"value"')
            t.send("calls 2")
            out.wait_for(r'"value":2')
            tool.proc.send_signal(signal.SIGINT)
            rest, err, rc = tool.wait()
    assert rc == 0 and err == "", err
    recs = stacks(out.text + rest)
    assert sum(r["value"] for r in recs) == 8, recs
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", r["time"])
               for r in recs), recs
    seqs = [r["interval"] for r in recs]
    assert seqs == sorted(seqs) and seqs[0] >= 1 and seqs[-1] > seqs[0], recs


# ---- patterns and bcc's p: form ----

def uprobe_method(attach):
    if attach:
        return attach
    return "uprobe_multi" if has_ksym("bpf_uprobe_multi_link_attach") else "uprobe"


@pytest.mark.parametrize("attach", [None, "uprobe"])
@pytest.mark.parametrize("kind", ["pie", "nopie"])
@pytest.mark.kernel
def test_glob_counts_each_functions_stacks(progs, kind, attach):
    """sctarget:sc_lib_*: the library's three functions, each its own
    stack: "lib 13" calls sc_lib_entry once, which calls sc_lib_inner
    once, which calls sc_lib_target 13 times; one uprobe.multi link where
    the kernel has it, else one uprobe per function."""
    path = progs[kind]
    out, err, _ = trace(["-f", "--verbose", "-p", "PID", "sctarget:sc_lib_*"], path, ["lib 13"],
                        env={"TRACEKIT_ATTACH": attach} if attach else None)
    lines = folded(out)
    assert len(lines) == 3, out
    for chain, n in ((LIB[:3], 1), (LIB[:4], 1), (LIB, 13)):
        assert [c for s, c in lines.items() if ends_at_entry(s.split(";"), chain)] == [n], out
    probes = [l for l in err.splitlines() if l.startswith("stackcount: probe ")]
    assert probes == [f"stackcount: probe probe: {uprobe_method(attach)} "
                      f"{progs['lib']}:sc_lib_* (3 functions)"]


@pytest.mark.parametrize("event", ["PROG:via_*", "p:PROG:via_*", "-r PROG:via_(one|two)"])
def test_executable_pattern_forms(progs, event):
    """A glob, bcc's p:LIB:FUNC, and -r: via_one and via_two, called once
    each by "split A B", so 3 times for three splits."""
    path = progs["pie"]
    args = event.replace("PROG", str(path)).split()
    out, _, _ = trace(["-f", "-p", "PID", *args], path, ["split 5 8"] * 3)
    lines = folded(out)
    assert len(lines) == 2, out
    for chain, n in ((PATH1[:3], 3), (PATH2[:3], 3)):
        assert [c for s, c in lines.items() if ends_at_entry(s.split(";"), chain)] == [n], out


def test_pattern_dry_run(progs):
    path = progs["nopie"]
    res = run("stackcount", "--dry-run", f"{path}:via_*")
    assert res.returncode == 0, res.stderr
    assert [l for l in res.stdout.splitlines() if l.startswith("probe ")] == [
        f"probe probe {uprobe_method(None)} {path}:via_* (2 functions)"]


def test_pattern_past_the_limit_is_a_usage_error():
    res = run("stackcount", "c:*")
    assert (res.returncode, res.stdout) == (2, "")
    assert re.fullmatch(r"stackcount: invalid EVENT 'c:\*': '\*' matches \d+ functions, "
                        r"more than 1000 \(bcc's probe limit\); narrow the pattern: a longer "
                        r"prefix than '', or fewer alternatives; see 'stackcount --help'\n",
                        res.stderr), res.stderr


KERNEL_GLOB = {"x86_64": "__x64_sys_f*sync",
               "aarch64": "__arm64_sys_f*sync"}.get(platform.machine())


@pytest.mark.parametrize("attach", [None, "kprobe"])
@pytest.mark.kernel
def test_kernel_glob_counts_every_call(progs, attach):
    """__x64_sys_f*sync: fsync and fdatasync, of which the workload calls
    fsync 11 times; one kprobe.multi link where the kernel has it, else
    one kprobe per function."""
    require("kprobe")
    if not KERNEL_GLOB:
        pytest.skip(f"no fsync entry point known for {platform.machine()}")
    path = progs["pie"]
    out, err, _ = trace(["-j", "--verbose", "-p", "PID", KERNEL_GLOB], path, ["fsync 11"],
                        env={"TRACEKIT_ATTACH": attach} if attach else None)
    recs = stacks(out)
    assert sum(r["value"] for r in recs) == 11, recs
    for r in recs:
        assert r["user"][-len(FSYNC):] == FSYNC, r
    method = attach or ("kprobe_multi" if has_ksym("fprobe_register")
                        else "kprobe")
    probes = [l for l in err.splitlines() if l.startswith("stackcount: probe ")]
    assert probes == [f"stackcount: probe probe: {method} {KERNEL_GLOB} (2 functions)"]


@pytest.mark.kernel
def test_kernel_pattern_without_kprobes_fails_in_one_line():
    assert_no_kernel_function_tracing("stackcount", "vfs_(read|write) (2 functions)",
                                      "-r", "vfs_(read|write)", attach="kprobe")


# ---- --print-cgroup: each cgroup's stacks apart ----

def report_entries(out):
    """bcc's report as [(frames innermost first, [the lines after the
    frames: "-  comm (pid)", "cgroup  PATH"], count)]."""
    assert out.endswith("\n\n"), out
    entries = []
    for text in out.split("\n\n")[:-1]:
        lines = text.split("\n")
        assert re.fullmatch(r"        \d+", lines[-1]), text
        tail = [l for l in lines[:-1] if l.startswith(("    -  ", "    cgroup  "))]
        frames = lines[:len(lines) - 1 - len(tail)]
        assert all(f.startswith("    ") for f in frames), text
        entries.append(([f[4:] for f in frames], tail, int(lines[-1])))
    return entries


@pytest.mark.parametrize("fmt", ["-f", "-f -P", "report", "-P", "-j"])
@pytest.mark.kernel
def test_print_cgroup_counts_each_cgroup_apart(progs, cgroup, fmt):
    """--print-cgroup: 9 calls from a workload in a cgroup the test made
    and 4 from one outside it, in the test's own cgroup: the same stack,
    which stackcount merges across processes (without -P), but never
    across cgroups. Folded, the cgroup's path is the first frame (its ';'
    made '_', as in any frame), before the comm with -P; the report ends
    each stack with a "cgroup  PATH" line, after the comm line with -P;
    JSON has "cgroup"."""
    d, inside_cg = cgroup
    outside_cg = own_cgroup()
    path = progs["pie"]
    args = {"report": []}.get(fmt, fmt.split())
    per_process = "-P" in args
    with Target(path) as inside, Target(path) as outside:
        (d / "cgroup.procs").write_text(str(inside.pid))
        with Tool("stackcount", "--print-cgroup", *args, f"{path}:target_func") as tool:
            inside.send("calls 9")
            outside.send("calls 4")
            out, err, rc = tool.stop()
    assert (rc, err) == (0, "")
    want = [(outside_cg, outside.pid, 4), (inside_cg, inside.pid, 9)]
    if "-f" in args:
        got = []
        for stack, count in sorted(folded(out).items(), key=lambda sc: sc[1]):
            cg, *frames = stack.split(";")
            if per_process:
                assert frames.pop(0) == "sc-pie", stack
            assert ends_at_entry(frames, CALLS), out
            got.append((cg, count))
        assert got == [(cg.replace(";", "_"), n) for cg, _, n in want], out
    elif "-j" in args:
        recs = stacks(out)
        assert [(r["cgroup"], r["value"]) for r in recs] == [(cg, n) for cg, _, n in want]
        assert all(set(r) == {"type", "cgroup", "user", "user_missed", "kernel",
                              "kernel_missed", "value", "unit"} for r in recs), recs
        assert all(ends_at_entry(r["user"], CALLS) for r in recs), recs
    else:
        entries = report_entries(out)
        assert [(tail, n) for _, tail, n in entries] == [
            ([f"    -                sc-pie ({pid})"] * per_process + [f"    cgroup           {cg}"],
             n) for cg, pid, n in want], out
        assert all(ends_at_entry(frames[::-1], CALLS) for frames, _, _ in entries), out


def test_print_cgroup_names_the_commands_cgroup(progs, tmp_path):
    """-- COMMAND runs COMMAND in <own cgroup>/tracekit-stackcount-PID,
    PID the tool's: its 6 calls are counted under that path. The test
    talks to the workload through the tool's stdin and stdout (COMMAND's);
    the stacks go to -o FILE."""
    path = progs["pie"]
    out = tmp_path / "out.folded"
    p = subprocess.Popen([tool_path("stackcount"), "-f", "--print-cgroup", "-o", out,
                          f"{path}:target_func", "--", path],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    try:
        assert p.stdout.readline() == "ready\n"
        p.stdin.write("calls 6\n")
        p.stdin.flush()
        assert p.stdout.readline() == "done\n"
        wait_noted(p.pid, path)   # symbolized after COMMAND exits
        p.stdin.close()
        assert p.wait(timeout=60) == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    stack, count = only(folded(out.read_text()))
    cg, *frames = stack.split(";")
    assert cg == own_cgroup().rstrip("/") + f"/tracekit-stackcount-{p.pid}", stack
    assert count == 6 and ends_at_entry(frames, CALLS), stack
