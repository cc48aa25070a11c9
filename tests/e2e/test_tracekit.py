"""The tracekit front command: `tracekit list` against the doctor's own
report of each tool (the same dry runs), `tracekit TOOL ARGS` against the
tool run directly, and its errors."""
import os
import re

import pytest

from conftest import json_lines, run
from test_doctor import doctor_json, tool_of

RUNS = {"yes", "no", "some"}


def first_sentence(tool):
    """What the list's purpose is: the first sentence of the tool's
    --help text, its lines joined."""
    out = run(tool, "--help").stdout.splitlines()
    text = []
    for line in out[1:]:   # after "Usage: ..."
        if not line or line.startswith(" "):
            break
        text.append(line)
    text = " ".join(text)
    return text[:text.index(". ") + 1] if ". " in text else text


@pytest.fixture(scope="module")
def listing():
    """`tracekit list -j` and the doctor's report, back to back."""
    r = run("tracekit", "list", "-j", timeout=300)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    return json_lines(r.stdout), doctor_json()


def test_list_is_what_the_doctor_found(listing):
    rows, report = listing
    by_tool = {}
    for label, check in report["tools"].items():
        by_tool.setdefault(tool_of(label), []).append((label, check))
    assert [r["tool"] for r in rows] == sorted(by_tool)   # one row each, by name
    for row in rows:
        checks = by_tool[row["tool"]]
        oks = [c["ok"] for _, c in checks]
        want = "yes" if all(oks) else "some" if any(oks) else "no"
        assert (row["type"], row["runs"]) == ("tool", want), (row, checks)
        assert [c["label"] for c in row["checks"]] == [l for l, _ in checks]
        for got, (_, check) in zip(row["checks"], checks):
            assert got["ok"] == check["ok"]
            if not check["ok"]:
                assert got["error"] == check["error"]
            else:
                assert re.fullmatch(r"[a-z_]+ \(\d+ probes?\).*|no probes.*", got["how"]), got


def test_list_purposes_are_the_tools_own(listing):
    rows, _ = listing
    purposes = {r["tool"]: r["purpose"] for r in rows}
    assert purposes["execsnoop"] == "Trace exec() syscalls, successful and failed."
    for tool in ("runqlat", "ext4slower", "funclatency", "tcpconnect"):
        assert purposes[tool] == first_sentence(tool), tool
    assert all(p and p != "?" for p in purposes.values()), purposes


def test_list_text_matches_json(listing):
    rows, _ = listing
    r = run("tracekit", "list", timeout=300)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    lines = r.stdout.splitlines()
    assert re.fullmatch(r"TOOL +RUNS +PURPOSE", lines[0]), lines[0]
    got = [re.fullmatch(r"(\S+) +(yes|no|some) +(\S.*)", l) for l in lines[1:]]
    assert all(got), lines
    assert [(m[1], m[2]) for m in got] == [(r["tool"], r["runs"]) for r in rows]
    for m, row in zip(got, rows):   # the sentence up to its detail
        assert row["purpose"].startswith(m[3]), (m[3], row["purpose"])


def test_list_verbose_says_why_a_tool_cannot_run(listing):
    rows, _ = listing
    r = run("tracekit", "list", "-v", timeout=300)
    assert r.returncode == 0, r.stderr
    for row in rows:
        for check in row["checks"]:
            line = check["how"] if check["ok"] else check["error"]
            assert line in r.stdout, (row["tool"], line)


def test_list_without_checks_runs_no_tool(listing):
    rows, _ = listing
    r = run("tracekit", "list", "--no-check", "-j")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    quick = json_lines(r.stdout)
    assert [(q["tool"], q["purpose"], q["runs"]) for q in quick] == \
        [(row["tool"], row["purpose"], None) for row in rows]
    text = run("tracekit", "list", "--no-check").stdout.splitlines()
    assert re.fullmatch(r"TOOL +PURPOSE", text[0]) and len(text) == len(rows) + 1


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["--bogus"], ["-j", "-d", "x"]])
def test_tool_runs_as_itself(args):
    front = run("tracekit", "execsnoop", *args)
    direct = run("execsnoop", *args)
    assert (front.returncode, front.stdout, front.stderr) == \
        (direct.returncode, direct.stdout, direct.stderr)


def test_tool_traces_through_the_front_command():
    marker = f"tracekit-front-{os.getpid()}"
    r = run("tracekit", "execsnoop", "-j", "--", "/bin/sh", "-c", f"exec /bin/true {marker}")
    assert r.returncode == 0, r.stderr
    execs = [e for e in json_lines(r.stdout) if e.get("type") == "exec"]
    assert [e["argv"] for e in execs] == [["/bin/sh", "-c", f"exec /bin/true {marker}"],
                                          ["/bin/true", marker]], execs


def test_help_and_doctor_are_the_tools():
    assert run("tracekit", "help", "runqlat").stdout == run("runqlat", "--help").stdout
    front = run("tracekit", "doctor", "--no-tools", "-j")
    assert front.returncode == 0, front.stderr
    (report,) = json_lines(front.stdout)
    assert report["type"] == "doctor" and report["tools"] == {}


@pytest.mark.parametrize("args", [[], ["--help"], ["-h"], ["help"]])
def test_own_help(args):
    r = run("tracekit", *args)
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout.startswith("Usage: tracekit COMMAND [ARG...]\n")
    for command in ("list", "doctor", "help [TOOL]", "TOOL [ARG...]", "--version"):
        assert command in r.stdout, command


@pytest.mark.parametrize("name, closest", [
    ("execsnop", "execsnoop, exitsnoop, opensnoop"),
    ("runqlst", "runqlat, runqlen"),
    ("lsit", "list"),
    ("../bin/execsnoop", "execsnoop"),   # a path is not a tool name
    ("tracekit", "trace"),               # not itself
    ("xyzzy-nothing", None),
])
def test_unknown_tool_names_the_closest(name, closest):
    for args in ([name], ["help", name]):
        r = run("tracekit", *args)
        assert (r.returncode, r.stdout) == (2, ""), r
        assert r.stderr.startswith(f"tracekit: no tool or command '{name}' (tools are in "), r.stderr
        assert r.stderr.endswith("'tracekit list' shows them\n"), r.stderr
        if closest:
            assert re.search(rf"\); closest: .*\b{closest}\b.*; ", r.stderr), r.stderr
        else:
            assert "closest" not in r.stderr, r.stderr


def test_the_daemon_is_not_run_from_here():
    r = run("tracekit", "tracekitd")
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == ("tracekit: tracekitd is the daemon, not a tool: run it as tracekitd, "
                        "or under systemd (systemctl start tracekitd)\n")


@pytest.mark.parametrize("args, words", [
    (["--bogus"], "unknown option '--bogus'"),
    (["list", "--bogus"], "list: unknown option '--bogus'"),
    (["list", "--parallel"], "option '--parallel' needs a value"),
    (["list", "--parallel", "0"], "invalid --parallel value '0'"),
    (["help", "a", "b"], "help takes one tool; not 'b'"),
])
def test_usage_errors(args, words):
    r = run("tracekit", *args)
    assert (r.returncode, r.stdout) == (2, ""), r
    assert r.stderr == f"tracekit: {words}" + r.stderr[len("tracekit: ") + len(words):]
    assert r.stderr.endswith("; see 'tracekit --help'\n") and r.stderr.count("\n") == 1, r.stderr
