"""funccount end to end: a workload the test builds calls fa() and fb(),
libc's getppid(), or makes the getppid and getpgid syscalls (inline
syscall instructions), an exact number of times when the test asks;
funccount must count exactly those, per probe.

Kernel functions need fentry or kprobes: on a kernel without both the
tool must fail in one line, checked here; where they work, that test
skips."""
import re
import subprocess

import pytest

from conftest import (ROOT, Tool, Workload, assert_no_kernel_function_tracing, has_cookies,
                      json_lines, loss_record, run)

PROG_SRC = ROOT / "tests/e2e/progs/funccount_target.c"
LOSS = {"type": "loss", "events_lost": 0, "map_inserts_failed": 0}


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    path = tmp_path_factory.mktemp("funccount") / "fc-target"
    subprocess.run(["cc", "-O0", "-o", str(path), str(PROG_SRC)], check=True)
    return path


def require_cookies():
    """Several user functions or tracepoints are told apart by BPF cookies
    (5.15): test_several_tracepoints_need_cookies checks the refusal."""
    if not has_cookies():
        pytest.skip("this kernel has no BPF cookies: several user functions or tracepoints "
                    "cannot be counted apart")


def trace(prog, args, cmds):
    """funccount ARGS (PID: the workload's) while a fresh workload runs
    cmds; returns its stdout."""
    with Workload(prog) as t:
        args = [str(t.pid) if a == "PID" else a for a in args]
        with Tool("funccount", *args) as tool:
            for c in cmds:
                t.send(c)
            out, err, rc = tool.stop()
    assert rc == 0, err
    return out


def table(out):
    """bcc's table at exit: {FUNC: COUNT}, checking its layout (a blank
    line, the header, the rows in count order)."""
    lines = out.split("\n")
    assert lines[:2] == ["", f"{'FUNC':<36} {'COUNT':>8}"] and lines[-1] == "", out
    rows = []
    for line in lines[2:-1]:
        m = re.fullmatch(r"(\S.{35}|\S{37,}) +(\d+)", line)
        assert m and len(line) >= 45, line
        rows.append((m.group(1).rstrip(), int(m.group(2))))
    assert [c for _, c in rows] == sorted(c for _, c in rows), out
    return dict(rows)


def counts(out):
    records = json_lines(out)
    assert loss_record(records) == LOSS
    body = records[:-1]
    assert all(r["type"] == "count" and r["count"] > 0 for r in body), body
    return {r["probe"]: r["count"] for r in body}


# ---- user functions ----

@pytest.mark.kernel
def test_user_glob_counts_each_function(prog):
    """f* matches fa, fb, fc and the C runtime's frame_dummy: only the
    two called appear, with their exact counts."""
    require_cookies()
    out = trace(prog, ["-p", "PID", f"{prog}:f*"], ["f 7 3", "f 2 0"])
    assert table(out) == {"fa": 9, "fb": 3}


def test_user_glob_json(prog):
    require_cookies()
    out = trace(prog, ["-j", "-p", "PID", f"{prog}:f*"], ["f 5 11"])
    records = json_lines(out)
    assert records[:-1] == [
        {"type": "count", "probe": "fa", "binary": str(prog), "count": 5},
        {"type": "count", "probe": "fb", "binary": str(prog), "count": 11}]
    assert loss_record(records) == LOSS


@pytest.mark.kernel
def test_one_user_function(prog):
    """A name without glob characters is that one function."""
    out = trace(prog, ["-p", "PID", f"p:{prog}:fb"], ["f 4 6"])
    assert table(out) == {"fb": 6}


def test_regex(prog):
    require_cookies()
    out = trace(prog, ["-j", "-r", "-p", "PID", f"{prog}:f(a|c)"], ["f 8 2"])
    assert counts(out) == {"fa": 8}


@pytest.mark.kernel
def test_libc_function(prog):
    """libc's getppid() wrapper, called by the workload alone in its
    process (-p)."""
    out = trace(prog, ["-j", "-p", "PID", "c:getppid"], ["libc 13"])
    assert counts(out) == {"getppid": 13}


# ---- tracepoints ----

@pytest.mark.kernel
def test_one_tracepoint(prog):
    out = trace(prog, ["-p", "PID", "t:syscalls:sys_enter_getppid"], ["getppid 17"])
    assert table(out) == {"syscalls:sys_enter_getppid": 17}


@pytest.mark.kernel
def test_tracepoint_glob_counts_each_tracepoint(prog):
    """sys_enter_getp* matches getppid, getpgid, getpgrp, getpid and
    getpriority: each of the two made counts exactly."""
    require_cookies()
    out = trace(prog, ["-p", "PID", "t:syscalls:sys_enter_getp*"],
                ["getppid 21", "getpgid 4", "getppid 1"])
    assert table(out) == {"syscalls:sys_enter_getpgid": 4,
                          "syscalls:sys_enter_getppid": 22}


def test_tracepoint_glob_json_and_dry_run(prog):
    require_cookies()
    out = trace(prog, ["-j", "-p", "PID", "t:syscalls:sys_enter_getp[gp]id"],
                ["getpgid 3", "getppid 9"])
    assert counts(out) == {"syscalls:sys_enter_getpgid": 3,
                           "syscalls:sys_enter_getppid": 9}
    r = run("funccount", "--dry-run", "t:syscalls:sys_enter_getp[gp]id")
    assert (r.returncode, r.stdout) == (0, "probe probe tp syscalls:sys_enter_getp[gp]id "
                                           "(2 tracepoints)\n"), r.stderr


def test_tracepoint_category_glob_and_regex(prog):
    require_cookies()
    out = trace(prog, ["-j", "-r", "-p", "PID", "t:sys(calls|nope):sys_(enter|exit)_getpgid"],
                ["getpgid 6"])
    assert counts(out) == {"syscalls:sys_enter_getpgid": 6, "syscalls:sys_exit_getpgid": 6}


# ---- intervals, duration, COMMAND ----

def test_interval_blocks_and_duration(prog):
    """-i 1 -d 3.5: bcc's blocks (a blank line, the time with -T, the
    table), the calls each counted once across them; -d ends the run."""
    with Workload(prog) as t:
        tool = Tool("funccount", "-T", "-i", "1", "-d", "3.5", "-p", str(t.pid),
                    "t:syscalls:sys_enter_getppid").start()
        t.send("getppid 5")
        out, err, rc = tool.wait()
    assert rc == 0, err
    assert out.startswith("\n") and out.endswith("\n"), out
    blocks = out[1:-1].split("\n\n")
    assert len(blocks) >= 2, out
    total = 0
    for b in blocks:
        lines = b.split("\n")
        assert re.fullmatch(r"\d\d:\d\d:\d\d", lines[0]), out
        assert lines[1] == f"{'FUNC':<36} {'COUNT':>8}", out
        for line in lines[2:]:
            name, n = line.split()
            assert name == "syscalls:sys_enter_getppid", out
            total += int(n)
    assert total == 5, out


def test_interval_json_numbers_each_interval(prog):
    with Workload(prog) as t:
        tool = Tool("funccount", "-j", "-i", "1", "-d", "2.5", "-p", str(t.pid),
                    "t:syscalls:sys_enter_getppid").start()
        t.send("getppid 8")
        out, err, rc = tool.wait()
    assert rc == 0, err
    records = json_lines(out)
    assert loss_record(records) == LOSS
    body = records[:-1]
    assert sum(r["count"] for r in body) == 8, out
    assert all(set(r) == {"type", "time", "interval", "probe", "count"} for r in body), out


def test_command(prog):
    """-- COMMAND: its whole life is traced, start-up included: the C
    runtime's frame_dummy (.init_array) runs once before main."""
    require_cookies()
    r = run("funccount", "-j", f"{prog}:f*", "--", str(prog), "f", "3", "12")
    assert r.returncode == 0, r.stderr
    assert counts(r.stdout) == {"fa": 3, "fb": 12, "frame_dummy": 1}


@pytest.mark.kernel
def test_several_tracepoints_need_cookies():
    """Without BPF cookies (5.10) several tracepoints cannot be told
    apart: one line says so, and what would do."""
    if has_cookies():
        pytest.skip("this kernel has BPF cookies: no refusal to check")
    r = run("funccount", "t:syscalls:sys_enter_getp*")
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == ("funccount: funccount over several tracepoints needs BPF cookies "
                        "(bpf_get_attach_cookie, Linux 5.15) to tell them apart; use a kernel "
                        "with them, or one tracepoint per run\n")


# ---- errors ----

@pytest.mark.parametrize("pattern, why", [
    ("PROG:tk_nothing_*", "no function matches 'tk_nothing_*' (PROG: .symtab)"),
    ("PROG:no_such_fn", "no function no_such_fn in PROG (.dynsym and .symtab)"),
    ("t:tk_nocat:sys_*", "no tracepoint category matches 'tk_nocat' (tracefs events/ "
                         "lists those this kernel has)"),
    ("t:syscalls:tk_nope*", "no tracepoint matches 'tk_nope*' in syscalls (tracefs events/ "
                            "lists those this kernel has)"),
    ("t:sched", "expected t:CATEGORY:NAME, such as t:syscalls:sys_enter_get*"),
    ("t:sched:../x", "expected t:CATEGORY:NAME, such as t:syscalls:sys_enter_get*"),
    ("u:PROG:probe", "USDT probes are not supported yet; p:PROG:probe counts calls of a "
                     "user function"),
    ("a:b:c:d", "expected FUNC, LIB:FUNC, p::FUNC, p:LIB:FUNC, t:CATEGORY:NAME or "
                "u:LIB:PROBE"),
])
def test_pattern_that_names_nothing_is_a_usage_error(prog, pattern, why):
    pattern = pattern.replace("PROG", str(prog))
    r = run("funccount", pattern)
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr == (f"funccount: invalid PATTERN '{pattern}': "
                        f"{why.replace('PROG', str(prog))}; see 'funccount --help'\n")


def test_bad_regex_is_a_usage_error(prog):
    r = run("funccount", "-r", f"{prog}:f(")
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr.startswith(f"funccount: invalid PATTERN '{prog}:f(': not a POSIX "
                               "extended regular expression: ")
    assert r.stderr.count("\n") == 1


def test_bad_glob_is_a_usage_error(prog):
    """An unclosed bracket matches no name (fnmatch)."""
    r = run("funccount", f"{prog}:f[")
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr.startswith(f"funccount: invalid PATTERN '{prog}:f[': no function "
                               "matches 'f['"), r.stderr
    assert r.stderr.count("\n") == 1


@pytest.mark.parametrize("args, message", [
    ([], "missing PATTERN: kernel functions (vfs_*), LIB:FUNC (c:str*), PATH:FUNC or "
         "t:CATEGORY:NAME (tracepoints)"),
    (["c:getpid", "c:getppid"], "unexpected argument 'c:getppid': one PATTERN per run"),
    (["-i", "0", "c:getpid"], "invalid -i/--interval value '0': expected an integer "
                              "from 1 to 86400"),
    (["-D", "c:getpid"], "bcc's option '-D' is not in tracekit: the BPF program is compiled "
                         "ahead of time (bpf/funccount.bpf.c); --verbose shows how it "
                         "attaches"),
])
def test_usage_errors(args, message):
    r = run("funccount", *args)
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr.startswith(f"funccount: {message}"), r.stderr
    assert r.stderr.count("\n") == 1


@pytest.mark.parametrize("func, args, attach", [
    ("vfs_read", ["vfs_read"], None),
    ("vfs_read", ["k:vfs_read"], None),
    ("vfs_read", ["p::vfs_read"], "kprobe"),
    ("vfs_(read|write) (2 functions)", ["-r", "vfs_(read|write)"], "kprobe"),
])
@pytest.mark.kernel
def test_kernel_functions_without_fentry_or_kprobes_fail_in_one_line(func, args, attach):
    assert_no_kernel_function_tracing("funccount", func, *args, attach=attach)
