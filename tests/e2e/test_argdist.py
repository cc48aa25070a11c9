"""argdist end to end: counts and histograms of values the test chooses,
asserted exactly. A workload (tests/e2e/progs/argdist_target.c) calls
hit(VALUE, NAME) an exact number of times, and reads /dev/zero with
known sizes in a thread of its own (so that a tid != pid filter keeps
those reads and drops its stdin's); argdist probes it with uprobes and
the read syscall's tracepoints (this host has no kprobes and refuses
fentry: kernel functions are the kernel matrix's)."""
import os
import re
import subprocess

import pytest

from conftest import (ROOT, Tool, Workload, assert_no_kernel_function_tracing, json_lines,
                      loss_record, require, run)

PROGS = ROOT / "tests/e2e/progs"
HEADER = f"\t{'COUNT':<10} EVENT"
LOSS = {"type": "loss", "events_lost": 0, "map_inserts_failed": 0}
READS = ["read 1 3", "read 5 4", "read 100 5", "read 4096 2"]
READ_BUCKETS = {(0, 1): 3, (4, 7): 4, (64, 127): 5, (4096, 8191): 2}
EXIT_READ = "t:syscalls:sys_exit_read:ret:tid != pid"


@pytest.fixture(scope="module")
def prog(tmp_path_factory):
    out = tmp_path_factory.mktemp("argdist") / "argdist-target"
    subprocess.run(["cc", "-O0", "-fno-inline", "-pthread", "-o", str(out),
                    str(PROGS / "argdist_target.c")], check=True)
    return out


def argdist(prog, args, cmds):
    """argdist -p WORKLOAD args while a fresh workload runs cmds:
    (stdout, stderr)."""
    with Workload(prog) as w:
        with Tool("argdist", "-p", w.pid, *args) as tool:
            for c in cmds:
                w.send(c)
            out, err, rc = tool.stop()
    assert rc == 0, err
    return out, err


def sections(out):
    """{specifier: its lines} in bcc's layout: a specifier's line, then
    its rows (tab-indented counts, or a histogram's lines)."""
    got, cur = {}, None
    for line in out.splitlines():
        if line.startswith(("\t", " ")):
            got[cur].append(line)
        else:
            cur = line
            assert cur not in got, out
            got[cur] = []
    return got


def counts(lines):
    """A -C section's rows: [(count, EVENT)], checking the header and the
    order (the largest count last)."""
    assert lines[0] == HEADER, lines
    rows = []
    for line in lines[1:]:
        m = re.fullmatch(r"\t(\d+) +(.*)", line)
        assert m and len(line) > 12 and line[11] == " ", line
        rows.append((int(m[1]), m[2]))
    assert [c for c, _ in rows] == sorted(c for c, _ in rows), lines
    return rows


def buckets(lines):
    """A -H section's non-empty buckets: {(low, high): count}."""
    assert re.fullmatch(r" +\S+ +: count +distribution", lines[0]), lines
    got = {}
    for line in lines[1:]:
        m = re.fullmatch(r" *(\d+) -> (\d+) +: (\d+) +\|[* ]+\|", line)
        assert m, line
        if int(m[3]):
            got[(int(m[1]), int(m[2]))] = int(m[3])
    return got


# ---- what BPF reads and counts ----

@pytest.mark.kernel
def test_histogram_puts_each_read_size_in_its_bucket(prog):
    """The workload's own reads (its thread's: tid != pid) of 1, 5, 100
    and 4096 bytes, 3, 4, 5 and 2 times: exactly those in their buckets;
    its stdin reads (the main thread's) are filtered out in BPF."""
    out, err = argdist(prog, ["-H", EXIT_READ], READS)
    got = sections(out)
    assert list(got) == [EXIT_READ], out
    assert got[EXIT_READ][0].split() == ["ret", ":", "count", "distribution"]
    assert buckets(got[EXIT_READ]) == READ_BUCKETS
    assert err == ""


@pytest.mark.kernel
def test_counts_by_an_integer_and_a_string(prog):
    """hit(7, "seven") 3 times, hit(9, "nine") 5 times, hit(-2, "neg")
    twice: one row each, by count, signed by the cast."""
    spec = f"u:{prog}:hit:(long)arg1,(char *)arg2"
    out, err = argdist(prog, ["-C", spec], ["hit 7 seven 3", "hit 9 nine 5", "hit -2 neg 2"])
    assert counts(sections(out)[spec]) == [
        (2, "(long)arg1 = -2, (char *)arg2 = neg"),
        (3, "(long)arg1 = 7, (char *)arg2 = seven"),
        (5, "(long)arg1 = 9, (char *)arg2 = nine")]
    assert list(sections(out)) == [spec]
    assert err == ""


@pytest.mark.kernel
def test_filter_drops_exactly_what_it_names(prog):
    """arg1 != 9 drops the 5 hits of 9, and a string filter keeps a name
    by its prefix."""
    ints = f"u:{prog}:hit:arg1:arg1 != 9"
    names = f'u:{prog}:hit:(char *)arg2:(char *)arg2 == "s*"'
    out, _ = argdist(prog, ["-C", ints, "-C", names],
                     ["hit 7 seven 3", "hit 9 nine 5", "hit 4 six 2"])
    got = sections(out)
    assert counts(got[ints]) == [(2, "arg1 = 4"), (3, "arg1 = 7")]
    assert counts(got[names]) == [(2, "(char *)arg2 = six"), (3, "(char *)arg2 = seven")]


@pytest.mark.kernel
def test_several_specifiers_in_one_run(prog):
    """A histogram, two counts with their own filters and a count of
    hits (no EXPR: "total calls"), each printed in the order given."""
    by_value = f"u:{prog}:hit:arg1"
    calls = f"u:{prog}:hit::arg1 > 5"
    comm = "t:syscalls:sys_exit_read:comm:tid != pid && ret == 100"
    out, _ = argdist(prog, ["-C", by_value, "-H", EXIT_READ, "-C", calls, "-C", comm],
                     ["hit 7 seven 3", "hit 2 two 1"] + READS)
    got = sections(out)
    assert list(got) == [by_value, EXIT_READ, calls, comm], out
    assert counts(got[by_value]) == [(1, "arg1 = 2"), (3, "arg1 = 7")]
    assert buckets(got[EXIT_READ]) == READ_BUCKETS
    assert counts(got[calls]) == [(3, "total calls")]
    assert counts(got[comm]) == [(5, "comm = argdist-target")]


@pytest.mark.kernel
def test_json_records_are_typed(prog):
    """-j: a count record per key with typed values, a histogram record
    with its buckets, then the loss record."""
    spec = f"u:{prog}:hit:(long)arg1,(char *)arg2,comm"
    out, _ = argdist(prog, ["-j", "-C", spec, "-H", EXIT_READ], ["hit -3 x 2"] + READS)
    records = json_lines(out)
    assert loss_record(records) == LOSS
    count, hist = records[:-1]
    assert count == {"type": "count", "probe": spec, "count": 2, "values": [
        {"expr": "(long)arg1", "type": "integer", "value": -3},
        {"expr": "(char *)arg2", "type": "string", "value": "x", "truncated": False},
        {"expr": "comm", "type": "string", "value": "argdist-target", "truncated": False}]}
    assert hist["type"] == "histogram" and hist["probe"] == EXIT_READ
    assert hist["expr"] == "ret" and hist["faults"] == 0 and hist["total"] == 14
    assert {(b["low"], b["high"]): b["count"] for b in hist["buckets"]} == READ_BUCKETS


@pytest.mark.kernel
def test_full_keys_map_reports_its_drops(prog):
    """--max-keys 3 and 10 distinct values: 3 keys counted once each, the
    7 other hits dropped and reported at exit (text and JSON)."""
    spec = f"u:{prog}:hit:arg1"
    out, err = argdist(prog, ["--max-keys", "3", "-C", spec], ["keys 10"])
    rows = counts(sections(out)[spec])
    assert len(rows) == 3 and all(c == 1 for c, _ in rows), out
    assert err == "argdist: 7 map inserts failed: a map was full; counts are incomplete\n"
    out, _ = argdist(prog, ["-j", "--max-keys", "3", "-C", spec], ["keys 10"])
    records = json_lines(out)
    assert loss_record(records) == dict(LOSS, map_inserts_failed=7)
    assert len(records) == 4


@pytest.mark.kernel
def test_command_is_counted_to_its_end(prog):
    """-- COMMAND: the tool ends with it, counting its calls only."""
    spec = f"u:{prog}:hit:arg1,(char *)arg2"
    r = run("argdist", "-C", spec, "-H", EXIT_READ, "--", prog, "--batch",
            "hit 4 four 6", "hit 5 five 1", *READS)
    assert (r.returncode, r.stderr) == (0, ""), r.stderr
    got = sections(r.stdout)
    assert counts(got[spec]) == [(1, "arg1 = 5, (char *)arg2 = five"),
                                 (6, "arg1 = 4, (char *)arg2 = four")]
    assert buckets(got[EXIT_READ]) == READ_BUCKETS


@pytest.mark.kernel
def test_print_cgroup_keys_by_cgroup(prog):
    """--print-cgroup: each row and histogram names the cgroup of the
    hits, here COMMAND's own (the same path for both)."""
    spec = f"u:{prog}:hit:arg1"
    r = run("argdist", "--print-cgroup", "-C", spec, "-H", EXIT_READ, "--", prog, "--batch",
            "hit 3 x 2", "read 8 2")
    assert (r.returncode, r.stderr) == (0, ""), r.stderr
    lines = r.stdout.splitlines()
    assert lines[:2] == [spec, HEADER], r.stdout
    m = re.fullmatch(r"\t2 +arg1 = 3, cgroup = (/\S*)", lines[2])
    assert m, r.stdout
    assert lines[3] == f"{EXIT_READ}, cgroup = {m[1]}", r.stdout
    assert buckets(lines[4:]) == {(8, 15): 2}


def read_until(tool, lines, done, limit=400):
    """Read a periodic run's lines into lines until done(lines) (it
    prints a block every second, so each readline returns)."""
    while not done(lines):
        line = tool.proc.stdout.readline().decode()
        assert line and len(lines) < limit, lines
        lines.append(line.rstrip("\n"))


def row_counts(lines, event):
    return [int(m[1]) for m in (re.fullmatch(rf"\t(\d+) +{re.escape(event)}", l) for l in lines)
            if m]


@pytest.mark.parametrize("cumulative", [False, True])
@pytest.mark.kernel
def test_intervals_count_what_happened_in_each(prog, cumulative):
    """-i 1: a block per second, each with its time; 3 hits, then 2 more
    once the 3 were printed. Per interval the blocks' counts add up to 5
    (however the intervals fell); with -c each block has the total so
    far, rising to 5."""
    spec = f"u:{prog}:hit:arg1"
    if cumulative:
        seen = lambda lines, n: n in row_counts(lines, "arg1 = 7")  # noqa: E731
    else:
        seen = lambda lines, n: sum(row_counts(lines, "arg1 = 7")) >= n  # noqa: E731
    lines = []
    with Workload(prog) as w:
        with Tool("argdist", "-p", w.pid, "-i", "1", "-C", spec,
                  *(["-c"] if cumulative else [])) as tool:
            w.send("hit 7 x 3")
            read_until(tool, lines, lambda l: seen(l, 3))
            w.send("hit 7 x 2")
            read_until(tool, lines, lambda l: seen(l, 5))
            out, err, rc = tool.stop()
    assert rc == 0, err
    text = "\n".join(lines) + "\n" + out
    blocks = re.split(r"^\[\d\d:\d\d:\d\d\]\n", text, flags=re.M)
    assert blocks[0] == "" and len(blocks) >= 3, text
    values = []
    for b in blocks[1:]:
        rows = counts(sections(b)[spec])
        assert all(e == "arg1 = 7" for _, e in rows) and len(rows) <= 1, text
        values += [c for c, _ in rows]
    if cumulative:
        assert values == sorted(values) and values[-1] == 5 and 3 in values, text
    else:
        assert sum(values) == 5 and max(values) <= 3, text


def test_number_of_intervals_ends_the_run(prog):
    """-n 2 with -i 1: two blocks, then the tool ends by itself."""
    r = run("argdist", "-i", "1", "-n", "2", "-C", f"u:{prog}:hit:arg1")
    assert (r.returncode, r.stderr) == (0, ""), r.stderr
    assert len(re.findall(r"^\[\d\d:\d\d:\d\d\]$", r.stdout, flags=re.M)) == 2, r.stdout


@pytest.mark.parametrize("method", ["fentry", "kprobe"])
@pytest.mark.kernel
def test_kernel_function_counts_by_member_chain(method, tmp_path):
    """k:vfs_read keyed by the file's name and the count asked, for the
    file the test reads, exactly once (the kernel matrix)."""
    require(method)
    name = f"tk-argdist-{os.getpid()}"
    path = tmp_path / name
    path.write_bytes(b"x" * 1234)
    spec = (f"k:vfs_read:file->f_path.dentry->d_name.name,count:"
            f'file->f_path.dentry->d_name.name == "{name}"')
    with Tool("argdist", "-p", os.getpid(), "-C", spec,
              env={"TRACEKIT_ATTACH": method}) as tool:
        with open(path, "rb", buffering=0) as f:
            assert len(f.read(4096)) == 1234
        out, err, rc = tool.stop()
    assert rc == 0, err
    assert counts(sections(out)[spec]) == [
        (1, f"file->f_path.dentry->d_name.name = {name}, count = 4096")]


@pytest.mark.kernel
def test_kernel_function_without_fentry_or_kprobes_fails_in_one_line():
    assert_no_kernel_function_tracing("argdist", "vfs_read", "-C", "k:vfs_read:count")


# ---- bad input ----

@pytest.mark.parametrize("opt, spec, message, caret", [
    ("-C", "t:syscalls:sys_exit_read:ret +", "expected an expression", 30),
    ("-C", "t:syscalls:sys_exit_read:(ret", "unbalanced '(': no ')' closes it", 25),
    ("-C", "t:syscalls:sys_exit_read:ret:ret > 0:1", "a ':' after the filter", 36),
    ("-C", "x:foo:ret", "unknown probe type", 0),
    ("-C", "t:syscalls:sys_exit_read:rett",
     "'rett' is not a field of syscalls:sys_exit_read, a builtin or a kernel symbol; "
     "closest: ret", 25),
    ("-C", "t:syscalls:sys_exit_read:ret:rett > 0",
     "'rett' is not a field of syscalls:sys_exit_read, a builtin or a kernel symbol; "
     "closest: ret", 29),
    ("-H", "t:syscalls:sys_enter_read:comm",
     "-H makes a histogram of an integer: this is a string (-C counts strings)", 26),
    ("-H", "t:syscalls:sys_exit_read:ret,ret", "-H takes one EXPR", 29),
    ("-H", "t:syscalls:sys_exit_read", "-H needs an EXPR: PROBE:EXPR[:FILTER]", 24),
])
def test_specifier_errors_show_the_place(opt, spec, message, caret):
    r = run("argdist", opt, spec)
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    first, rest = r.stderr.split("\n", 1)
    assert first.startswith(f"argdist: {message}"), r.stderr
    assert rest == f"  {spec}\n  {' ' * caret}^\n", r.stderr


@pytest.mark.parametrize("args, message", [
    ([], "missing -C or -H"),
    (["t:sched:sched_switch"], "unexpected argument 't:sched:sched_switch'"),
    (["-C", "t:sched:tk_nope:pid"], "invalid PROBE 't:sched:tk_nope:pid': no tracepoint "
                                    "sched:tk_nope in this kernel"),
    (["-I", "linux/fs.h", "-C", "t:sched:sched_switch"],
     "bcc's option '-I' is not in tracekit: not needed: types come from the kernel's BTF"),
    (["-z", "100", "-C", "t:sched:sched_switch"],
     "bcc's option '-z' is not in tracekit: strings hold 63 bytes"),
    (["-n", "2", "-C", "t:sched:sched_switch"], "-n/--number counts intervals"),
    (["-T", "0", "-C", "t:sched:sched_switch"], "invalid -T/--top value '0'"),
    (["-i", "x", "-C", "t:sched:sched_switch"], "invalid -i/--interval value 'x'"),
    (["--max-keys", "0", "-C", "t:sched:sched_switch"], "invalid --max-keys value '0'"),
    (["-C", "t:sched:sched_switch"] * 9, "too many specifiers: at most 8"),
])
def test_usage_errors(args, message):
    r = run("argdist", *args)
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr.startswith(f"argdist: {message}"), r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
