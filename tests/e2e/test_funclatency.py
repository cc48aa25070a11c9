"""funclatency end to end: a workload program the test builds (PIE and
not) makes an exact number of calls of a user function, of a libc
function or of a syscall, when the test asks; funclatency must count
exactly those calls, in the right log2 bucket for a call of known length.

Kernel functions need fentry/fexit or kprobes: those tests skip, naming
why, on a kernel without them (make check-vm runs them elsewhere)."""
import contextlib
import os
import platform
import re
import subprocess

import pytest

from conftest import (EMULATED_CPU, ROOT, Tool, Workload, assert_no_kernel_function_tracing,
                      has_cookies, has_ksym, json_lines, kernel_fn, kernel_has, loss_record,
                      own_cgroup, require, run, scratch_cgroup, tool_path)

PROG_SRC = ROOT / "tests/e2e/progs/funclat_target.c"
# A call sleeps 17 ms: bucket 16..31 ms, 16384..32767 us, 2^24..2^25-1 ns
# (16.8..33.5 ms), each with 14 ms or more to spare for a late wakeup.
SLEEP_MS = 17

# A kernel function reached exactly once per fsync(2): the syscall's entry
# point, called through the syscall table (never inlined), and in the BTF
# of 5.10, 6.1 and 6.18 (unlike getppid's: a syscall without arguments
# has its entry point as an alias of __do_sys_getppid, BTF's name for it).

HIST_KEYS = {"type", "time", "function", "binary", "unit", "scale", "buckets",
             "total", "p50", "p90", "p99", "sum_ns", "avg_ns"}
ET_EXEC, ET_DYN = 2, 3


@pytest.fixture(scope="module")
def progs(tmp_path_factory):
    """The workload, built as a PIE and as a fixed-address executable."""
    d = tmp_path_factory.mktemp("funclat")
    out = {"pie": d / "fl-target-pie", "nopie": d / "fl-target-nopie"}
    flags = {"pie": ["-fPIE", "-pie"], "nopie": ["-fno-pie", "-no-pie"]}
    for kind, path in out.items():
        subprocess.run(["cc", "-O0", *flags[kind], "-o", str(path), str(PROG_SRC)],
                       check=True)
        with open(path, "rb") as f:
            e_type = int.from_bytes(f.read(18)[16:18], "little")
        assert e_type == (ET_DYN if kind == "pie" else ET_EXEC), (kind, e_type)
    return out


class Target(Workload):
    """The workload: send("work 3 20") returns once its calls are made;
    "timed ..." keeps the durations it reports."""

    def send(self, cmd):
        words = super().send(cmd)
        if cmd.startswith("timed "):
            self.durations = [int(w) for w in words]


def trace(args, path, cmds, env=None, target=None):
    """Run funclatency while a fresh workload runs cmds; args may name
    the workload's pid as "PID". Returns (stdout, stderr, pid); target,
    a list, gets the Target (for its durations)."""
    with Target(path) as t:
        args = [str(t.pid) if a == "PID" else a for a in args]
        with Tool("funclatency", *args, env=env) as tool:
            for c in cmds:
                t.send(c)
            out, err, rc = tool.stop()
    assert rc == 0, err
    if target is not None:
        target.append(t)
    return out, err, t.pid


# What a call costs funclatency's probes and the workload's clock reads
# around it, at most: a call measured D outside took between D - SLACK_NS
# and D inside. Under QEMU's TCG (the kernel matrix) a uprobe's trap and
# single-step are emulated: 3 calls measured 7.7 ms more outside than
# inside on 6.1 (2.6 ms a call), over the 2 ms that holds on real CPUs.
SLACK_NS = 10_000_000 if EMULATED_CPU else 2_000_000


def log2_low(v):
    return 0 if v <= 0 else 1 << (v.bit_length() - 1)


def assert_buckets_match(buckets, durations, unit):
    """Each call in the bucket of its duration as the workload measured
    it around the call, or, within SLACK_NS of a bucket's edge, the one
    below: a sleep lasts as long as the machine makes it (a loaded host,
    a stalled vCPU), so the bucket is derived from it, not assumed."""
    div = {"nsecs": 1, "usecs": 1000, "msecs": 1000000}[unit]
    got = sorted(b["low"] for b in buckets for _ in range(b["count"]))
    allowed = sorted((log2_low(max(d - SLACK_NS, 0) // div), log2_low(d // div))
                     for d in durations)
    assert len(got) == len(allowed), (buckets, durations)
    for low, (lo, hi) in zip(got, allowed):
        assert lo <= low <= hi, (buckets, durations)


def histograms(out, map_full=0):
    records = json_lines(out)
    loss = loss_record(records)
    assert loss == {"type": "loss", "events_lost": 0,
                    "map_inserts_failed": map_full}, loss
    hists = records[:-1]
    for h in hists:
        assert h["type"] == "histogram" and h["scale"] == "log2", h
        assert h["total"] == sum(b["count"] for b in h["buckets"])
        for b in h["buckets"]:
            assert b["count"] > 0 and b["high"] == (1 if b["low"] == 0 else 2 * b["low"] - 1)
    return hists


def mapped_libc(pid):
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            path = line.split()[-1]
            if re.search(r"/libc(\.so\.|-)", path):
                return os.path.realpath(path)
    pytest.fail(f"process {pid} maps no libc")


def text_hist(unit, counts):
    """bcc's star histogram of log2 buckets 0..len(counts)-1."""
    top = max(counts)
    lines = [f"     {unit:<19} : count    distribution"]
    for i, c in enumerate(counts):
        low, high = (0 if i == 0 else 1 << i), (1 << (i + 1)) - 1
        stars = "*" * (c * 40 // top)
        lines.append(f"{low:>10} -> {high:<10} : {c:<8} |{stars:<40}|")
    return "\n".join(lines) + "\n"


# ---- user functions (uprobes) ----

@pytest.mark.parametrize("kind", ["pie", "nopie"])
@pytest.mark.kernel
def test_counts_every_call_of_a_user_function(progs, kind):
    path = progs[kind]
    out, err, pid = trace(["-j", "-p", "PID", f"{path}:work"], path, ["work 25 0"])
    (h,) = histograms(out)
    assert set(h) == HIST_KEYS
    assert (h["function"], h["binary"], h["unit"]) == ("work", str(path), "nsecs")
    assert h["total"] == 25
    assert h["sum_ns"] > 0 and h["avg_ns"] == pytest.approx(h["sum_ns"] / 25)
    assert err == ""


@pytest.mark.parametrize("kind", ["pie", "nopie"])
@pytest.mark.parametrize("flags, unit, low", [
    ([], "nsecs", 1 << 24), (["-u"], "usecs", 1 << 14), (["-m"], "msecs", 16)])
@pytest.mark.kernel
def test_sleeping_call_lands_in_its_bucket(progs, kind, flags, unit, low):
    path = progs[kind]
    target = []
    out, _, _ = trace(["-j", *flags, "-p", "PID", f"{path}:work"], path,
                      [f"timed 3 {SLEEP_MS}"], target=target)
    (h,) = histograms(out)
    durations = target[0].durations
    assert h["unit"] == unit
    # On an idle machine every sleep lands in [low, 2 * low).
    assert_buckets_match(h["buckets"], durations, unit)
    assert all(d >= SLEEP_MS * 1e6 for d in durations)
    assert sum(durations) - 3 * SLACK_NS <= h["sum_ns"] <= sum(durations)
    assert h["sum_ns"] >= 3 * SLEEP_MS * 1_000_000   # each call sleeps that long


def test_text_is_bccs_histogram_and_summary(progs):
    path = progs["pie"]
    out, _, _ = trace(["-m", "-p", "PID", f"{path}:work"], path, [f"work 3 {SLEEP_MS}"])
    hist = text_hist("msecs", [0, 0, 0, 0, 3])
    m = re.fullmatch(r"\n" + re.escape(hist) +
                     r"\navg = (\d+) msecs, total: (\d+) msecs, count: 3\n\n", out)
    assert m, out
    avg, total = int(m.group(1)), int(m.group(2))
    assert 3 * SLEEP_MS <= total < 3 * 32 and avg == total // 3


def test_text_without_calls_is_an_empty_histogram(progs):
    path = progs["pie"]
    out, _, _ = trace(["-p", "PID", f"{path}:work"], path, [])
    assert out == "\n"


def test_without_pid_probes_every_process(progs):
    path = progs["nopie"]
    out, _, _ = trace(["-j", f"{path}:work"], path, ["work 5 0", "work 2 0"])
    (h,) = histograms(out)
    assert h["total"] == 7


def test_pid_probes_that_process_only(progs):
    path = progs["pie"]
    with Target(path) as a, Target(path) as b:
        with Tool("funclatency", "-j", "-p", a.pid, f"{path}:work") as tool:
            b.send("work 6 0")
            a.send("work 4 0")
            b.send("work 6 0")
            out, err, rc = tool.stop()
    assert rc == 0, err
    (h,) = histograms(out)
    assert h["total"] == 4


@pytest.mark.kernel
def test_library_function_with_pid(progs):
    """c:getpid: glibc's getpid() is a syscall wrapper, called N times;
    with -p the library is the one the process maps."""
    path = progs["nopie"]
    with Target(path) as t:
        with Tool("funclatency", "-j", "-p", t.pid, "c:getpid") as tool:
            t.send("getpid 9")
            out, err, rc = tool.stop()
        libc = mapped_libc(t.pid)
    assert rc == 0, err
    (h,) = histograms(out)
    assert (h["function"], h["binary"], h["total"]) == ("getpid", libc, 9)


@pytest.mark.kernel
def test_recursion_times_every_nested_call(progs):
    """recurse 5: 6 calls, each inside the last; recurse 20: 21 calls, of
    which the 16 outermost are timed and 5 counted as not recorded."""
    path = progs["pie"]
    out, _, _ = trace(["-j", "-p", "PID", f"{path}:recurse"], path, ["recurse 5"])
    (h,) = histograms(out)
    assert h["total"] == 6
    out, _, _ = trace(["-j", "-p", "PID", f"{path}:recurse"], path, ["recurse 20"])
    (h,) = histograms(out, map_full=5)
    assert h["total"] == 16


def test_relative_path_and_program_in_path(progs, monkeypatch):
    path = progs["pie"]
    monkeypatch.chdir(path.parent)
    out, _, _ = trace(["-j", "-p", "PID", f"./{path.name}:work"], path, ["work 2 0"])
    (h,) = histograms(out)
    assert (h["binary"], h["total"]) == (str(path), 2)
    monkeypatch.setenv("PATH", f"{path.parent}:{os.environ['PATH']}")
    out, _, _ = trace(["-j", "-p", "PID", f"{path.name}:work"], path, ["work 3 0"])
    (h,) = histograms(out)
    assert (h["binary"], h["total"]) == (str(path), 3)


def test_interval_count_clears_and_exits(progs):
    path = progs["pie"]
    with Target(path) as t:
        with Tool("funclatency", "-j", "-p", t.pid, f"{path}:work", "1", "2") as tool:
            t.send("work 3 0")
            out, err, rc = tool.wait()
    assert rc == 0, err
    assert [h["total"] for h in histograms(out)] == [3, 0]


def test_interval_option_time_lines_and_duration(progs):
    """bcc's -i SEC (as [interval]), -T (the time, HH:MM:SS, before each
    interval's histogram) and -d SEC (ends by itself): every interval
    block starts with its time, and the calls made add up across them."""
    path = progs["pie"]
    with Target(path) as t:
        with Tool("funclatency", "-T", "-i", "1", "-d", "2.5", "-p", t.pid,
                  f"{path}:work") as tool:
            t.send("work 3 0")
            out, err, rc = tool.wait()
    assert rc == 0, err
    lines = out.splitlines()
    times = [i for i, l in enumerate(lines) if re.fullmatch(r"\d\d:\d\d:\d\d", l)]
    first = next(i for i, l in enumerate(lines) if l)
    assert len(times) >= 2 and times[0] == first, out
    counts = [int(m[1]) for l in lines for m in [re.match(r"\s+\d+ -> \d+\s+: (\d+) ", l)] if m]
    assert sum(counts) == 3, out


def test_dry_run_and_verbose_show_uprobes(progs):
    path = progs["pie"]
    with Target(path) as t:
        res = run("funclatency", "--dry-run", "-p", t.pid, f"{path}:work")
    assert res.returncode == 0, res.stderr
    assert res.stdout == (f"probe entry uprobe {path}:work\n"
                          f"probe exit uretprobe {path}:work\n")
    _, err, _ = trace(["-v", "-p", "PID", f"{path}:work"], path, [])
    assert f"funclatency: probe entry: uprobe {path}:work\n" in err
    assert f"funclatency: probe exit: uretprobe {path}:work\n" in err


# ---- --print-cgroup ----

@contextlib.contextmanager
def target_in_new_cgroup(path, tag):
    """A workload in a cgroup v2 the test makes under the root: yields
    (the cgroup's path below the root, as --print-cgroup names it, the
    workload). The cgroup is removed once the workload has ended."""
    with scratch_cgroup(f"tk-funclat-{tag}-{os.getpid()}") as d:
        with Target(path) as t:
            (d / "cgroup.procs").write_text(str(t.pid))
            yield "/" + d.name, t


@pytest.mark.kernel
def test_print_cgroup_counts_each_cgroups_calls(progs):
    """--print-cgroup: a histogram per cgroup v2 of the caller. 4 calls
    from a workload in a cgroup the test made, 6 from one in the test's
    own: exactly those, in the histogram of each."""
    path = progs["pie"]
    with target_in_new_cgroup(path, "json") as (name, inside), Target(path) as outside:
        with Tool("funclatency", "-j", "--print-cgroup", f"{path}:work") as tool:
            inside.send("work 4 0")
            outside.send("work 6 0")
            out, err, rc = tool.stop()
    assert rc == 0, err
    hists = histograms(out)
    totals = {name: 4, own_cgroup(): 6}
    assert [(h["cgroup"], h["total"]) for h in hists] == sorted(totals.items())
    assert all(set(h) == HIST_KEYS | {"cgroup"} and h["function"] == "work" for h in hists)


def test_print_cgroup_interval_counts_each_call_once(progs):
    """Every second, 3 times: each interval has the calls made since the
    last (a record only for a cgroup with calls), each call once."""
    path = progs["pie"]
    with target_in_new_cgroup(path, "interval") as (name, t):
        with Tool("funclatency", "-j", "--print-cgroup", f"{path}:work", "1", "3") as tool:
            t.send("work 3 0")
            out, err, rc = tool.wait()
    assert rc == 0, err
    hists = histograms(out)
    assert [h["cgroup"] for h in hists] == [name] * len(hists)
    assert sum(h["total"] for h in hists) == 3


def test_print_cgroup_text_sections(progs):
    """bcc's layout with a section per cgroup, "cgroup = PATH", in path
    order, then one summary of all calls."""
    path = progs["pie"]
    with target_in_new_cgroup(path, "text") as (name, inside), Target(path) as outside:
        with Tool("funclatency", "-m", "--print-cgroup", f"{path}:work") as tool:
            inside.send(f"work 3 {SLEEP_MS}")
            outside.send(f"work 2 {SLEEP_MS}")
            out, err, rc = tool.stop()
    assert rc == 0, err
    sections = sorted([(name, text_hist("msecs", [0, 0, 0, 0, 3])),
                       (own_cgroup(), text_hist("msecs", [0, 0, 0, 0, 2]))])
    m = re.fullmatch(re.escape("\n" + "".join(f"\ncgroup = {c}\n{h}" for c, h in sections)) +
                     r"\navg = \d+ msecs, total: \d+ msecs, count: 5\n\n", out)
    assert m, out


def test_print_cgroup_per_function(progs):
    """With -F: a section per function and cgroup, "Function = NAME,
    cgroup = PATH", by function then cgroup."""
    require_cookies()
    path = progs["pie"]
    with target_in_new_cgroup(path, "func") as (name, inside), Target(path) as outside:
        with Tool("funclatency", "-m", "-F", "--print-cgroup", f"{path}:tk_fn_*") as tool:
            inside.send(CALLS)
            outside.send("calls 1 1 1")
            out, err, rc = tool.stop()
    assert rc == 0, err
    sections = re.findall(r"\nFunction = (\w+), cgroup = (\S+)\n     msecs               : "
                          r"count    distribution\n         0 -> 1          : "
                          r"(\d+) +\|\*{40}\|\n", out)
    outside_calls = {"tk_fn_alpha": 1, "tk_fn_beta": 2, "tk_fn_gamma": 1}
    assert sections == sorted([(f, name, str(n)) for f, n in PER_FUNCTION.items()] +
                              [(f, own_cgroup(), str(n)) for f, n in outside_calls.items()]), out
    assert out.endswith(f", count: {sum(PER_FUNCTION.values()) + 4}\n\n")


def test_print_cgroup_names_the_command_cgroup(progs, tmp_path):
    """-- COMMAND's calls are made in tracekit-funclatency-PID, beside
    the tool's own cgroup."""
    path = progs["pie"]
    out = tmp_path / "out.json"
    p = subprocess.Popen([tool_path("funclatency"), "-j", "--print-cgroup", "-o", str(out),
                          f"{path}:work", "--", "sh", "-c", f"echo 'work 5 0' | {path} >/dev/null"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, err = p.communicate(timeout=120)
    assert (p.returncode, err) == (0, "")
    (h,) = histograms(out.read_text())
    assert (h["cgroup"], h["total"]) == (
        own_cgroup().rstrip("/") + f"/tracekit-funclatency-{p.pid}", 5)


# ---- errors ----

@pytest.mark.parametrize("spec, why", [
    ("PROG:no_such_fn", "no function no_such_fn in PROG (.dynsym and .symtab)"),
    ("PROG:getpid", "getpid is not defined in PROG, which imports it from a "
                    "shared library; give LIB:getpid (c:getpid for libc)"),
    ("/nonexistent/prog:work", "/nonexistent/prog: No such file or directory"),
    ("/etc/passwd:work", "/etc/passwd is not an ELF file"),
    ("tk-no-such-lib:f", "no library libtk-no-such-lib.so in the ld.so cache or the "
                         "library directories, and no program tk-no-such-lib in PATH"),
    ("c:tk_no_such_fn", "no function tk_no_such_fn in LIBC"),
    ("tk_no_such_kernel_fn", "no kernel function tk_no_such_kernel_fn in /proc/kallsyms"),
    ("PROG:", "expected FUNC (a kernel function), LIB:FUNC or PATH:FUNC"),
    ("vfs read", "'vfs read' is not a kernel function name (letters, digits, '_' and '.')"),
    ("PROG:tk_nothing_*", "no function matches 'tk_nothing_*' (PROG: .symtab)"),
    ("tk-no-such-lib:f*", "no library libtk-no-such-lib.so in the ld.so cache or the "
                          "library directories, and no program tk-no-such-lib in PATH"),
])
def test_func_that_names_nothing_is_a_usage_error(progs, spec, why):
    prog = str(progs["pie"])
    libc = mapped_libc(os.getpid())
    spec = spec.replace("PROG", prog)
    res = run("funclatency", spec)
    assert res.returncode == 2, res.stderr
    assert res.stdout == ""
    why = why.replace("PROG", prog).replace("LIBC", libc)
    assert re.fullmatch(re.escape(f"funclatency: invalid FUNC '{spec}': {why}") +
                        r"( \([^)]*\))?; see 'funclatency --help'\n", res.stderr), res.stderr


def pid_max():
    with open("/proc/sys/kernel/pid_max") as f:
        return int(f.read())


@pytest.mark.parametrize("args, message", [
    ([], "missing FUNC: a kernel function (vfs_read), LIB:FUNC (c:malloc) or PATH:FUNC"),
    (["-u", "-m", "vfs_read"],
     "options -u/--microseconds and -m/--milliseconds cannot be combined"),
    (["c:getpid", "0"], "invalid interval value '0': expected an integer from 1 to 2147483647"),
    (["c:getpid", "1", "2", "3"], "unexpected argument '3' after [interval [count]]"),
    (["-i", "0", "c:getpid"], "invalid --interval value '0': expected an integer from 1 to 86400"),
    (["--uid"], "option '--uid' needs a value"),
    (["-p", "PIDMAX", "c:getpid"], "invalid --pid value 'PIDMAX': no such process"),
])
def test_usage_errors(args, message):
    args = [str(pid_max()) if a == "PIDMAX" else a for a in args]
    message = message.replace("PIDMAX", str(pid_max()))
    res = run("funclatency", *args)
    assert res.returncode == 2
    assert res.stdout == ""
    assert res.stderr == f"funclatency: {message}; see 'funclatency --help'\n"


def test_micro_is_u_and_uid_is_long_only(progs):
    path = progs["pie"]
    out, _, _ = trace(["-j", "-u", "--uid", "0", "-p", "PID", f"{path}:work"], path,
                      ["work 2 0"])
    (h,) = histograms(out)
    assert (h["unit"], h["total"]) == ("usecs", 2)


# ---- kernel functions ----

@pytest.mark.kernel
def test_kernel_function_without_fentry_or_kprobes_fails_in_one_line():
    if kernel_has("fentry") or kernel_has("kprobe"):
        pytest.skip("this kernel has fentry or kprobes: nothing to refuse")
    res = run("funclatency", "vfs_read")
    assert res.returncode == 1
    assert res.stdout == ""
    assert res.stderr.startswith("funclatency: cannot trace kernel function vfs_read: ")
    assert res.stderr.count("\n") == 1 and res.stderr.endswith("\n")
    assert "fentry" in res.stderr and "kprobes" in res.stderr


RETURN_OF = {"fentry": "fexit", "kprobe": "kretprobe"}


@pytest.mark.parametrize("method", ["fentry", "kprobe"])
@pytest.mark.kernel
def test_kernel_function_counts_every_call(progs, method):
    require(method)
    fn = kernel_fn()
    path = progs["pie"]
    out, err, _ = trace(["-j", "-v", "-p", "PID", fn], path, ["fsync 11"],
                        env={"TRACEKIT_ATTACH": method})
    (h,) = histograms(out)
    assert set(h) == HIST_KEYS - {"binary"}
    assert (h["function"], h["unit"], h["total"]) == (fn, "nsecs", 11)
    probes = [l for l in err.splitlines() if l.startswith("funclatency: probe ")]
    assert probes == [f"funclatency: probe entry: {method} {fn}",
                      f"funclatency: probe exit: {RETURN_OF[method]} {fn}"]


@pytest.mark.parametrize("method", ["fentry", "kprobe"])
@pytest.mark.kernel
def test_kernel_function_dry_run_shows_method(method):
    require(method)
    fn = kernel_fn()
    res = run("funclatency", "--dry-run", fn, env={"TRACEKIT_ATTACH": method})
    assert res.returncode == 0, res.stderr
    assert res.stdout == (f"probe entry {method} {fn}\n"
                          f"probe exit {RETURN_OF[method]} {fn}\n")


@pytest.mark.parametrize("method", ["fentry", "kprobe"])
@pytest.mark.kernel
def test_kernel_function_text_and_units(progs, method):
    require(method)
    fn = kernel_fn()
    path = progs["pie"]
    out, _, _ = trace(["-u", "-p", "PID", fn], path, ["fsync 4"],
                      env={"TRACEKIT_ATTACH": method})
    m = re.fullmatch(r"\n     usecs               : count    distribution\n"
                     r"(?:.*\n)+\navg = \d+ usecs, total: \d+ usecs, count: 4\n\n", out)
    assert m, out


# ---- patterns: globs, -r, -F, -l ----

# The workload's three functions for patterns: "calls A B C" calls
# tk_fn_alpha A times, tk_fn_beta B times, tk_fn_gamma C times, and each
# tk_fn_gamma call calls tk_fn_beta once inside it.
CALLS = "calls 3 5 7"
PER_FUNCTION = {"tk_fn_alpha": 3, "tk_fn_beta": 5 + 7, "tk_fn_gamma": 7}


def uprobe_multi_method():
    return "uprobe_multi" if has_ksym("bpf_uprobe_multi_link_attach") else "uprobe"


USER_METHODS = [None, "uprobe"]  # the kernel's best; one uprobe per function


def require_cookies():
    """-F over several user functions needs BPF cookies; the refusal
    without them is checked where the kernel lacks them (the VM's 5.10)."""
    if not has_cookies():
        pytest.skip("this kernel has no BPF cookies: -F over user functions is "
                    "refused (test_per_function_user_without_cookies_is_refused)")


def user_method(attach):
    return attach or uprobe_multi_method()


@pytest.mark.parametrize("attach", USER_METHODS)
@pytest.mark.kernel
def test_glob_times_every_matched_function_in_one_histogram(progs, attach):
    path = progs["pie"]
    out, err, _ = trace(["-j", "-v", "-p", "PID", f"{path}:tk_fn_*"], path, [CALLS],
                        env={"TRACEKIT_ATTACH": attach} if attach else None)
    (h,) = histograms(out)
    assert set(h) == HIST_KEYS - {"function"} | {"pattern", "functions"}
    assert (h["pattern"], h["functions"], h["binary"]) == ("tk_fn_*", 3, str(path))
    assert h["total"] == sum(PER_FUNCTION.values())
    method = user_method(attach)
    probes = [l for l in err.splitlines() if l.startswith("funclatency: probe ")]
    assert probes == [f"funclatency: probe entry: {method} {path}:tk_fn_* (3 functions)",
                      f"funclatency: probe exit: {method.replace('up', 'uretp')} "
                      f"{path}:tk_fn_* (3 functions)"]


@pytest.mark.parametrize("kind", ["pie", "nopie"])
@pytest.mark.parametrize("attach", USER_METHODS)
@pytest.mark.kernel
def test_per_function_histograms(progs, kind, attach):
    """-F: a histogram per function, named; across processes too (no -p:
    the cookie, not the address, says which function a hit is)."""
    require_cookies()
    path = progs[kind]
    out, _, _ = trace(["-j", "-F", f"{path}:tk_fn_*"], path, [CALLS, CALLS],
                      env={"TRACEKIT_ATTACH": attach} if attach else None)
    hists = histograms(out)
    assert [(h["function"], h["total"]) for h in hists] == \
        [(f, 2 * n) for f, n in PER_FUNCTION.items()]
    assert all(set(h) == HIST_KEYS and h["binary"] == str(path) for h in hists)


def test_per_function_text_is_bccs_layout(progs):
    """bcc's sections: "Function = NAME" and its histogram, for each
    function called, in name order; then one summary of all calls."""
    require_cookies()
    path = progs["pie"]
    out, _, _ = trace(["-m", "-F", "-p", "PID", f"{path}:tk_fn_*"], path, [CALLS])
    # Each call takes well under a millisecond, unless a loaded host or a
    # stalled vCPU stretches one: the calls of each section are counted
    # whatever rows they are in.
    sections = re.findall(r"\nFunction = (\w+)\n     msecs               : "
                          r"count    distribution\n((?: +\d+ -> \d+ +: \d+ +\|[* ]{40}\|\n)+)",
                          out)
    counts = [(f, sum(int(m) for m in re.findall(r": (\d+) ", rows))) for f, rows in sections]
    assert counts == list(PER_FUNCTION.items()), out
    assert out.startswith("\n\nFunction = tk_fn_alpha\n")
    assert out.endswith(", count: 22\n\n")


def test_regex_matches_whole_names(progs):
    require_cookies()
    path = progs["nopie"]
    out, _, _ = trace(["-j", "-F", "-r", "-p", "PID", f"{path}:tk_fn_(alpha|gamma)"],
                      path, [CALLS])
    assert [(h["function"], h["total"]) for h in histograms(out)] == \
        [("tk_fn_alpha", 3), ("tk_fn_gamma", 7)]
    # whole names: "tk_fn_" matches none of them
    res = run("funclatency", "-r", f"{path}:tk_fn_")
    assert res.returncode == 2
    assert res.stderr == (f"funclatency: invalid FUNC '{path}:tk_fn_': no function matches "
                          f"the regex 'tk_fn_' ({path}: .symtab); see 'funclatency --help'\n")


@pytest.mark.kernel
def test_per_function_user_without_cookies_is_refused(progs):
    if has_cookies():
        pytest.skip("this kernel has BPF cookies: -F over user functions works "
                    "(test_per_function_histograms)")
    res = run("funclatency", "-F", f"{progs['pie']}:tk_fn_*")
    assert (res.returncode, res.stdout) == (1, "")
    assert res.stderr == ("funclatency: -F over several user functions needs BPF cookies "
                          "(bpf_get_attach_cookie, Linux 5.15): a hit's address differs in "
                          "each process (ASLR); use a kernel with them, or one function "
                          "per run\n")


def test_pattern_of_one_function_is_that_function(progs):
    path = progs["pie"]
    with Target(path) as t:
        res = run("funclatency", "--dry-run", "-p", t.pid, f"{path}:tk_fn_al*")
    assert res.returncode == 0, res.stderr
    assert res.stdout == (f"probe entry uprobe {path}:tk_fn_alpha\n"
                          f"probe exit uretprobe {path}:tk_fn_alpha\n")
    out, _, _ = trace(["-j", "-p", "PID", f"{path}:tk_fn_al*"], path, [CALLS])
    (h,) = histograms(out)
    assert (h["function"], h["total"]) == ("tk_fn_alpha", 3)


def test_pattern_dry_run_names_the_multi_link(progs):
    path = progs["pie"]
    res = run("funclatency", "--dry-run", f"{path}:tk_fn_*")
    assert res.returncode == 0, res.stderr
    m = uprobe_multi_method()
    assert res.stdout == (f"probe entry {m} {path}:tk_fn_* (3 functions)\n"
                          f"probe exit {m.replace('up', 'uretp')} {path}:tk_fn_* (3 functions)\n")


def test_library_glob(progs):
    """c:getpp*: glibc's getppid (and nothing else of that prefix)."""
    path = progs["nopie"]
    with Target(path) as t:
        res = run("funclatency", "--dry-run", "-p", t.pid, "c:getpp*")
        libc = mapped_libc(t.pid)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith(f"probe entry uprobe {libc}:getppid\n")


@pytest.mark.parametrize("level, total", [(1, 1), (3, 3), (16, 16)])
@pytest.mark.kernel
def test_level_times_only_the_outermost_calls(progs, level, total):
    """recurse 20: 21 nested calls; -l LEVEL times the LEVEL outermost,
    the deeper ones are left out by request, not counted as lost."""
    path = progs["pie"]
    out, _, _ = trace(["-j", "-l", str(level), "-p", "PID", f"{path}:recurse"], path,
                      ["recurse 20"])
    (h,) = histograms(out, map_full=0)
    assert h["total"] == total


def test_level_across_functions(progs):
    """-l 1: tk_fn_beta inside tk_fn_gamma is nested, so not timed: only
    the 5 calls made on their own are."""
    require_cookies()
    path = progs["pie"]
    out, _, _ = trace(["-j", "-F", "-l", "1", "-p", "PID", f"{path}:tk_fn_*"], path,
                      [CALLS])
    assert [(h["function"], h["total"]) for h in histograms(out)] == \
        [("tk_fn_alpha", 3), ("tk_fn_beta", 5), ("tk_fn_gamma", 7)]


@pytest.mark.parametrize("args, message", [
    (["-l", "0", "c:getpid"], "invalid --level value '0': expected an integer from 1 to 16"),
    (["-l", "17", "c:getpid"], "invalid --level value '17': expected an integer from 1 to 16"),
    (["--level", "x", "c:getpid"], "invalid --level value 'x': expected an integer from 1 to 16"),
    (["-r", "c:getpid("], "invalid FUNC 'c:getpid(': not a POSIX extended regular "
                          "expression: Unmatched ( or \\("),
])
def test_pattern_usage_errors(args, message):
    res = run("funclatency", *args)
    assert (res.returncode, res.stdout) == (2, "")
    assert res.stderr == f"funclatency: {message}; see 'funclatency --help'\n"


def test_pattern_past_the_limit_is_a_usage_error():
    """libc has well over 1000 functions: bcc's probe limit, named with how
    to narrow the pattern."""
    res = run("funclatency", "c:*")
    assert (res.returncode, res.stdout) == (2, "")
    assert re.fullmatch(r"funclatency: invalid FUNC 'c:\*': '\*' matches (\d+) functions, "
                        r"more than 1000 \(bcc's probe limit\); narrow the pattern: a longer "
                        r"prefix than '', or fewer alternatives; see 'funclatency --help'\n",
                        res.stderr), res.stderr
    res = run("funclatency", "-r", "c:.*")
    assert (res.returncode, res.stdout) == (2, ""), res.stderr
    assert "'.*' matches " in res.stderr and "(bcc's probe limit)" in res.stderr


def test_kernel_pattern_that_matches_nothing_is_a_usage_error():
    res = run("funclatency", "tk_no_such_kernel_fn_*")
    assert (res.returncode, res.stdout) == (2, "")
    assert re.fullmatch(r"funclatency: invalid FUNC 'tk_no_such_kernel_fn_\*': no kernel "
                        r"function matches 'tk_no_such_kernel_fn_\*' "
                        r"\((available_filter_functions|kallsyms)\); "
                        r"see 'funclatency --help'\n", res.stderr), res.stderr


# Two syscall entry points (see KERNEL_FN) for kernel patterns.
KERNEL_GLOB = {"x86_64": "__x64_sys_f*sync",
               "aarch64": "__arm64_sys_f*sync"}.get(platform.machine())


def kernel_glob():
    if not KERNEL_GLOB:
        pytest.skip(f"no fsync entry point known for {platform.machine()}")
    return KERNEL_GLOB


def kernel_multi_method(attach):
    if attach:
        return attach
    return "kprobe_multi" if has_ksym("fprobe_register") else "kprobe"


@pytest.mark.parametrize("attach", [None, "kprobe"])
@pytest.mark.kernel
def test_kernel_glob_per_function(progs, attach):
    """fsync 4 and fdatasync 6: __x64_sys_f*sync, a histogram each; one
    kprobe.multi link where the kernel has it, else a kprobe per function
    (and there, without BPF cookies, a hit known by its address)."""
    require("kprobe")
    glob = kernel_glob()
    path = progs["pie"]
    out, err, _ = trace(["-j", "-v", "-F", "-p", "PID", glob], path,
                        ["fsync 4", "fdatasync 6"],
                        env={"TRACEKIT_ATTACH": attach} if attach else None)
    prefix = glob.split("f*")[0]
    assert [(h["function"], h["total"]) for h in histograms(out)] == \
        [(prefix + "fdatasync", 6), (prefix + "fsync", 4)]
    m = kernel_multi_method(attach)
    probes = [l for l in err.splitlines() if l.startswith("funclatency: probe ")]
    assert probes == [f"funclatency: probe entry: {m} {glob} (2 functions)",
                      f"funclatency: probe exit: {m.replace('kp', 'kretp')} {glob} (2 functions)"]


@pytest.mark.parametrize("attach", [None, "kprobe"])
@pytest.mark.kernel
def test_kernel_regex_in_one_histogram(progs, attach):
    require("kprobe")
    glob = kernel_glob()
    prefix = glob.split("f*")[0]
    path = progs["nopie"]
    out, _, _ = trace(["-j", "-r", "-p", "PID", prefix + "f(data)?sync"], path,
                      ["fsync 4", "fdatasync 6"],
                      env={"TRACEKIT_ATTACH": attach} if attach else None)
    (h,) = histograms(out)
    assert (h["pattern"], h["functions"], h["total"]) == (prefix + "f(data)?sync", 2, 10)


@pytest.mark.kernel
def test_kernel_pattern_without_kprobes_fails_in_one_line():
    """Several kernel functions take no fentry: without kprobes the one
    line names what is missing (this host)."""
    assert_no_kernel_function_tracing("funclatency", "vfs_(read|write) (2 functions)",
                                      "-r", "vfs_(read|write)", attach="kprobe")
