#!/usr/bin/python3
"""Event storms: opensnoop during a million opens, execsnoop during 20,000
vfork+execs; tracekit against libbpf-tools (and bcc's Python tools when
they run here).

Each round runs the storm once with no tracer, then once under each tool,
in a rotating order, each tool's run followed by another untraced one; the
slowdown of a traced run is its wall time over the mean of the untraced
runs around it. The storm (tests/e2e/progs/storm.c) is a program with a
name of its own: each open is of a marker path, each exec is of a static
marker program that exits at once, so every event made can be told from
the machine's others in the output. Per run:

  delivered   output lines naming the marker, against the events made
  lost (real) events made and not printed
  lost (said) what the tool reported lost (tracekit: its "lost N events"
              line; libbpf-tools: "Lost N events on CPU #c!" lines)
  slowdown    storm wall time traced / untraced
  tool CPU    user + system seconds of the tool process, whole run (GNU
              time): start-up, the storm, and draining its buffer

Tools write to a file (`tool > file`: full buffering on both sides), are
started and waited on until attached as bench/peers.py says, and get
SIGINT once their output has stopped growing. Neither the tools nor the
storm are pinned to a CPU. Medians over the rounds.

    /usr/bin/python3 bench/event_storm.py [--rounds 3] [--opens 1000000]
        [--execs 20000] [--bin build/bin]

Prints a markdown section on stdout (for bench/results.py storms);
progress on stderr. Needs root, cc with static glibc, libbpf-tools."""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

from peers import ToolRun

ROOT = Path(__file__).resolve().parents[1]
PEERS = "/usr/sbin"


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def die(msg):
    log(f"event_storm: {msg}")
    sys.exit(1)


def build(d, name):
    storm = d / name
    subprocess.run(["cc", "-O2", "-o", str(storm), str(ROOT / "tests/e2e/progs/storm.c")],
                   check=True)
    # What each exec runs: static, so the exec is the kernel's work only.
    child = d / ("x" + name[1:])
    (d / "child.c").write_text("int main(void) { return 0; }\n")
    subprocess.run(["cc", "-O2", "-static", "-o", str(child), str(d / "child.c")], check=True)
    return storm, child


def storm_run(storm, args):
    r = subprocess.run([str(storm), *args], capture_output=True, text=True)
    if r.returncode:
        die(f"the storm failed: {r.stderr.strip()}")
    wall, cpu = map(float, r.stdout.split())
    return wall, cpu


def why_not(text):
    """The line of a tool's output that says why it did not start."""
    lines = [l.strip() for l in text.splitlines() if l.strip()] or ["no message"]
    for pattern in (r"^Unable", r"^Exception:", r"[Ee]rror|[Ff]ail"):
        for line in lines:
            if re.search(pattern, line):
                return line[:200]
    return lines[-1][:200]


def said_lost(tool, err):
    if tool.tracekit:
        m = re.search(r"lost (\d+) events", err)
        return int(m.group(1)) if m else 0
    return sum(int(n) for n in re.findall(r"Lost (\d+) events on CPU", err, re.I))


class Scenario:
    def __init__(self, title, tools, args, made, delivered):
        self.title, self.tools, self.args = title, tools, args
        self.made, self.delivered = made, delivered  # delivered(stdout) -> int
        self.rows = {t.name: [] for t in tools}
        self.failed = {}
        self.base = []


def run_scenario(sc, storm, rounds):
    log(f"== {sc.title}")
    prev = storm_run(storm, sc.args)[0]
    sc.base.append(prev)
    live = [t for t in sc.tools]
    for rnd in range(rounds):
        k = rnd % len(live) if live else 0
        for tool in live[k:] + live[:k]:
            if tool.name in sc.failed:
                continue
            try:
                tool.start()
            except RuntimeError:
                sc.failed[tool.name] = why_not(tool.stdout() + tool.stderr())
                log(f"{tool.name}: {sc.failed[tool.name]}")
                continue
            wall, _ = storm_run(storm, sc.args)
            tool.wait_quiet()
            tool.stop()
            after = storm_run(storm, sc.args)[0]
            sc.base.append(after)
            got = sc.delivered(tool.stdout())
            row = dict(wall=wall, slow=wall / ((prev + after) / 2), got=got,
                       real=sc.made - got, said=said_lost(tool, tool.stderr()),
                       cpu=tool.cpu, rss=tool.maxrss_kb / 1024)
            sc.rows[tool.name].append(row)
            prev = after
            log(f"round {rnd + 1}: {tool.name}: {got}/{sc.made} delivered, "
                f"lost {row['real']} (said {row['said']}), slowdown {row['slow']:.2f}x, "
                f"CPU {row['cpu']:.2f} s")


def table(sc):
    med = statistics.median
    lines = [f"### {sc.title}", "",
             f"Untraced: {med(sc.base):.2f} s (median of {len(sc.base)} runs; "
             f"{min(sc.base):.2f}-{max(sc.base):.2f} s: a slowdown inside that spread "
             "is noise).", "",
             "| tool | delivered / made | lost (real) | lost (reported) | storm time (s) "
             "| slowdown | tool CPU (s) | tool peak RSS (MB) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, rows in sc.rows.items():
        if name in sc.failed:
            lines.append(f"| {name} | does not run here: {sc.failed[name]} | | | | | | |")
            continue
        if not rows:
            continue
        got = [r["got"] for r in rows]
        lines.append(
            f"| {name} | {med(got):,.0f} / {sc.made:,} (min {min(got):,}) "
            f"| {med(r['real'] for r in rows):,.0f} (max {max(r['real'] for r in rows):,}) "
            f"| {med(r['said'] for r in rows):,.0f} (max {max(r['said'] for r in rows):,}) "
            f"| {med(r['wall'] for r in rows):.2f} | {med(r['slow'] for r in rows):.2f}x "
            f"| {med(r['cpu'] for r in rows):.2f} | {med(r['rss'] for r in rows):.1f} |")
    return lines


def verdict(sc, tk, peer):
    """The issue's target for the million-open storm."""
    med = statistics.median
    if not sc.rows.get(tk) or not sc.rows.get(peer):
        return [f"Target not judged: {tk} or {peer} did not run."]
    t, p = sc.rows[tk], sc.rows[peer]
    lost = max(r["real"] for r in t)
    honest = all(r["real"] == r["said"] for r in t)
    ts, ps = med(r["slow"] for r in t), med(r["slow"] for r in p)
    out = [
        f"Target, zero events lost with the default buffer: "
        f"{'met' if lost == 0 else f'MISSED: up to {lost:,} lost'} "
        f"(tracekit's reported losses {'match' if honest else 'do NOT match'} the real ones "
        f"in every run).",
        f"Target, a slowdown well under libbpf-tools': tracekit {ts:.2f}x against "
        f"{ps:.2f}x; tracekit adds {(ts - 1) / (ps - 1) if ps > 1 else float('nan'):.2f} "
        f"of the time libbpf-tools adds.",
    ]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--opens", type=int, default=1000000)
    ap.add_argument("--execs", type=int, default=20000)
    ap.add_argument("--bin", default=os.environ.get("TRACEKIT_BIN", str(ROOT / "build/bin")))
    args = ap.parse_args()
    if os.geteuid() != 0:
        die("run as root: the tools load BPF programs")
    tk = Path(args.bin)
    for p in (tk / "opensnoop", tk / "execsnoop", Path(PEERS) / "opensnoop",
              Path(PEERS) / "execsnoop"):
        if not os.access(p, os.X_OK):
            die(f"{p} is missing (make; apt-get install libbpf-tools)")

    tmp = Path(tempfile.mkdtemp(prefix="storm-bench-"))
    try:
        name = "s" + uuid.uuid4().hex[:11]   # a comm of its own (< 16 bytes)
        storm, child = build(tmp, name)
        target = tmp / f"marker-{name}"
        target.write_text("x")
        bcc_open = shutil.which("opensnoop-bpfcc")
        bcc_exec = shutil.which("execsnoop-bpfcc")

        def opens_seen(out):
            return out.count(str(target))

        def execs_seen(out):
            return sum(1 for line in out.splitlines()
                       if line.split(None, 1)[:1] == [child.name])

        def tools(tool, bcc):
            ts = [ToolRun("tracekit", [str(tk / tool)], True),
                  ToolRun("libbpf-tools", [f"{PEERS}/{tool}"], False)]
            if bcc:
                ts.append(ToolRun("bcc (Python)", [bcc], False))
            return ts

        scenarios = [
            Scenario(f"opensnoop: {args.opens:,} opens of one path (open + close)",
                     tools("opensnoop", bcc_open), ["open", str(args.opens), str(target)],
                     args.opens, opens_seen),
            Scenario(f"execsnoop: {args.execs:,} vfork + exec of a static program that exits",
                     tools("execsnoop", bcc_exec), ["exec", str(args.execs), str(child), "x"],
                     args.execs, execs_seen),
        ]
        for sc in scenarios:
            run_scenario(sc, storm, args.rounds)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    lines = ["## Event storms: opensnoop and execsnoop", "",
             f"Made by `bench/event_storm.py`: {args.rounds} rounds; each tool's run sits "
             "between two untraced runs of the same storm; medians (min/max where "
             "given). Tools write to a file; nothing is pinned.", ""]
    for sc in scenarios:
        lines += table(sc) + [""]
    lines += verdict(scenarios[0], "tracekit", "libbpf-tools") + [""]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
