#!/usr/bin/python3
"""tracekit's generic tools (trace, funccount, argdist) against bpftrace,
one-liner for one-liner, in one run: start-up to attached, peak RSS,
per-event overhead (events a filter drops, events printed or counted),
and funccount's exact count at a million hits a second.

The one-liners (PID: a sleeping process of this bench):
  trace      trace 't:syscalls:sys_enter_openat (pid == PID) "%s", filename'
             bpftrace: tracepoint:syscalls:sys_enter_openat /pid == PID/
                       { printf("%s\\n", str(args->filename)); }
  funccount  funccount 't:syscalls:sys_enter_get*'
             bpftrace: tracepoint:syscalls:sys_enter_get* { @[probe] = count(); }
  argdist    argdist -H 't:syscalls:sys_exit_read:ret'
             bpftrace: tracepoint:syscalls:sys_exit_read { @ = hist(args->ret); }
argdist is measured only where build/bin/argdist exists (one line says so
otherwise).

Start-up and peak RSS: bench/startup.py's Run (the tool on a pty, forked
by a small static helper, reaped with wait4: ru_maxrss is the tool's, not
Python's), RUNS runs, the two sides alternating in a rotating order;
medians. tracekit is ready at the first line it writes, which it writes
once attached (trace: its header; funccount, argdist: "Tracing... Hit
Ctrl-C to end."); one run of each side before them is not counted (a
cold start). bpftrace 0.17 prints "Attaching N probes..." BEFORE it
attaches them (checked on every run: its BPF link and perf event fds at
that line, and at the ready line), and nothing once attached, so each
bpftrace one-liner here starts with BEGIN { printf("ready\\n"); }, which
bpftrace runs once its probes are attached: that line is its readiness
(one more probe, which bpftrace triggers itself).

Per-event overhead: bench/syscount_overhead_loop.c makes CALLS calls of
the traced syscall (openat of a missing path, getppid, 1-byte reads of
/dev/zero) in each of BURSTS bursts, pinned to one CPU, timed by its
thread CPU time, fastest burst (noise only adds time). For each one-liner
and mode the two tools alternate as bench/overhead.py does (each traced
run between two untraced ones; overhead = traced - mean(around); medians
over ROUNDS rounds). Modes: "dropped": the filter names another process
(the sleeper), so every event is dropped in the kernel; "printed" /
"counted": the filter names the loop (trace: pid == LOOP; funccount and
argdist: -p LOOP; bpftrace: /pid == LOOP/), and every event is printed
(to a pipe this bench drains) or counted. Printed lines are counted
against the calls made; counts must equal the calls exactly.

One million a second: the loop from 2 threads, M getppid() calls known
exactly, under `funccount -p LOOP t:syscalls:sys_enter_getppid`; the count
must be M; the rate achieved is printed, and the untraced rate of the
same loop.

tracefs: bpftrace needs it at /sys/kernel/tracing (or debugfs's); when
missing, this bench mounts it and unmounts it at the end.

  sudo /usr/bin/python3 bench/trace_oneliners.py [--runs 7] [--rounds 7]
      [--bin build/bin] [--idle 1] [--million 10000000]

Prints a markdown section on stdout (for bench/results.py trace);
progress on stderr. Needs root, cc, bpftrace."""
import argparse
import ctypes
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import overhead
from overhead import Tracer, alternate
from startup import Run, build_helper

ROOT = Path(__file__).resolve().parents[1]
MISSING = "/tmp/.tracekit-bench-no-such-file"   # the loop's openat path
READY = 'BEGIN { printf("ready\\n"); } '


class Case:
    """One one-liner on both sides. startup: the argv of each for
    start-up and RSS; over(pid): each side's argv and expect for the
    overhead runs, filtered to pid ("{pid}": the loop's)."""

    def __init__(self, name, tool, tk_start, bt_start, tk_over, bt_over, kind, calls,
                 passed, diag=None):
        self.name, self.tool, self.kind, self.calls, self.passed = (
            name, tool, kind, calls, passed)
        self.tk_start, self.bt_start = tk_start, bt_start
        self.tk_over, self.bt_over = tk_over, bt_over
        # {mode: (what, argv(pid), why)}: another tracekit command line run
        # in that mode's rounds, to show where its time goes.
        self.diag = diag or {}


def cases(tk):
    return [
        Case("trace", "trace",
             lambda pid: [f"{tk}/trace", f't:syscalls:sys_enter_openat (pid == {pid}) "%s", filename'],
             lambda pid: READY + f"tracepoint:syscalls:sys_enter_openat /pid == {pid}/ "
                                 '{ printf("%s\\n", str(args->filename)); }',
             lambda pid: [f"{tk}/trace", f't:syscalls:sys_enter_openat (pid == {pid}) "%s", filename'],
             lambda pid: READY + f"tracepoint:syscalls:sys_enter_openat /pid == {pid}/ "
                                 '{ printf("%s\\n", str(args->filename)); }',
             "openat", 40000, "printed",
             {"dropped": ("the same filter with no format (nothing fetched)",
                          lambda pid: [f"{tk}/trace",
                                       f"t:syscalls:sys_enter_openat (pid == {pid})"],
                          "an event the filter drops pays only for what the filter reads (the "
                          "pid; bpf/tk_plan.bpf.h reads the rest after it), so the two rows "
                          "agree; what is left over bpftrace's compiled comparison is trace's "
                          "generic path: the per-CPU scratch map's lookup, the plan's fetch of "
                          "a builtin and its one-comparison filter (tk_plan_eval)")}),
        Case("funccount", "funccount",
             lambda pid: [f"{tk}/funccount", "t:syscalls:sys_enter_get*"],
             lambda pid: READY + "tracepoint:syscalls:sys_enter_get* { @[probe] = count(); }",
             lambda pid: [f"{tk}/funccount", "-p", str(pid), "t:syscalls:sys_enter_get*"],
             lambda pid: READY + f"tracepoint:syscalls:sys_enter_get* /pid == {pid}/ "
                                 "{ @[probe] = count(); }",
             "getppid", 200000, "counted",
             {"dropped": ("on one tracepoint, sys_enter_getppid (no BPF cookie to read)",
                          lambda pid: [f"{tk}/funccount", "-p", str(pid),
                                       "t:syscalls:sys_enter_getppid"],
                          "bpf/funccount.bpf.c tests -p before it reads a hit's BPF cookie "
                          "(tk_probe_index), so over several tracepoints a dropped event costs "
                          "what it costs on one")}),
        Case("argdist", "argdist",
             lambda pid: [f"{tk}/argdist", "-H", "t:syscalls:sys_exit_read:ret"],
             lambda pid: READY + "tracepoint:syscalls:sys_exit_read { @ = hist(args->ret); }",
             lambda pid: [f"{tk}/argdist", "-p", str(pid), "-H", "t:syscalls:sys_exit_read:ret"],
             lambda pid: READY + f"tracepoint:syscalls:sys_exit_read /pid == {pid}/ "
                                 "{ @ = hist(args->ret); }",
             "read", 200000, "counted"),
    ]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def die(msg):
    log(f"trace_oneliners: {msg}")
    sys.exit(1)


def tracefs_mounted():
    return any(os.path.isdir(f"{d}/events/syscalls")
               for d in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"))


class Loop:
    """The syscall loop, spawned waiting for its go (-w), pinned to cpu."""

    def __init__(self, exe, kind, calls, bursts, cpu, threads=1):
        self.p = subprocess.Popen(
            [exe, "-w", "-k", kind, "-t", str(threads), str(calls), str(bursts)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            preexec_fn=(lambda: os.sched_setaffinity(0, {cpu})) if cpu is not None else None)
        line = self.p.stdout.readline()
        if not line.startswith("pid "):
            die(f"the loop did not start: {line!r}")
        self.pid = int(line.split()[1])

    def run(self):
        """Its output lines, once it has run."""
        out, _ = self.p.communicate("go\n")
        if self.p.returncode:
            die(f"the loop failed (rc {self.p.returncode})")
        return out.split("\n")


def expects(case, total):
    """(tracekit's, bpftrace's) regexp of a counted run's final output:
    the loop's calls, exactly."""
    if case.tool == "funccount":
        return (r"^syscalls:sys_enter_getppid\s+%d$" % total,
                r"^@\[tracepoint:syscalls:sys_enter_getppid\]: %d$" % total)
    if case.tool == "argdist":   # bcc's "0 -> 1" row holds 0 and 1; bpftrace's [1] bucket
        return (r"\b0 -> 1\s*:\s*%d\b" % total, r"^\[1\]\s+%d\s" % total)
    return None, None


def main():
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--runs", type=int, default=7, help="start-up runs per side")
    ap.add_argument("--rounds", type=int, default=7, help="overhead rounds per one-liner and mode")
    ap.add_argument("--bursts", type=int, default=5, help="bursts per loop run (fastest taken)")
    ap.add_argument("--idle", type=float, default=1.0,
                    help="seconds each tool runs once attached, before SIGINT (start-up runs)")
    ap.add_argument("--million", type=int, default=10000000,
                    help="calls made under funccount at full speed (2 threads)")
    ap.add_argument("--bin", default=os.environ.get("TRACEKIT_BIN", str(ROOT / "build/bin")))
    ap.add_argument("--only", default="", help="comma-separated one-liners (trace,funccount,argdist)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        die("run as root: it loads BPF programs")
    tk = Path(args.bin).resolve()
    bpftrace = shutil.which("bpftrace")
    if not bpftrace:
        die("bpftrace is missing (make bench-deps installs it)")
    bt_version = subprocess.run([bpftrace, "--version"], capture_output=True,
                                text=True).stdout.split()[-1]
    all_cases = cases(tk)
    if args.only:
        all_cases = [c for c in all_cases if c.name in args.only.split(",")]
    notes = []
    todo = []
    for c in all_cases:
        if not os.access(tk / c.tool, os.X_OK):
            if c.tool == "argdist":
                msg = (f"argdist: not measured: {tk / 'argdist'} is not built (argdist is not "
                       "on this branch yet); its row runs once it is")
                log(msg)
                notes.append(msg)
                continue
            die(f"{tk / c.tool} is missing (make)")
        todo.append(c)

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(36, 1, 0, 0, 0) != 0:   # PR_SET_CHILD_SUBREAPER, for Run
        die("prctl(PR_SET_CHILD_SUBREAPER) failed")
    mounted = False
    if not tracefs_mounted():
        subprocess.run(["mount", "-t", "tracefs", "tracefs", "/sys/kernel/tracing"], check=True)
        mounted = True
        log("mounted tracefs at /sys/kernel/tracing (unmounted at the end)")
    sleeper = subprocess.Popen(["sleep", "infinity"])
    tmp = Path(tempfile.mkdtemp(prefix="trace-oneliners-"))
    start = {}     # (case, side): [Run]
    over = {}      # (case, mode): ([tk, bt] Tracers, untraced costs)
    delivered = {}  # (case, side): [printed lines / calls]
    million = []
    try:
        helper = build_helper(tmp)
        overhead.build(tmp, programs=[("loop", "syscount_overhead_loop.c")], floor=False)
        loop = str(tmp / "loop")
        cpu = max(os.sched_getaffinity(0))

        # (a), (b): start-up and peak RSS, after one run of each not
        # counted (the first start of a binary pays for a cold cache).
        for rnd in range(-1, args.runs):
            for c in todo:
                sides = [("tracekit", c.tk_start(sleeper.pid), "line"),
                         ("bpftrace", [bpftrace, "-e", c.bt_start(sleeper.pid)], "bpftrace")]
                for side, argv, how in (sides if rnd % 2 == 0 else sides[::-1]):
                    r = Run(argv, how, args.idle if rnd >= 0 else 0, helper).go()
                    if r.error:
                        die(f"{c.name} {side} did not attach: {r.error}")
                    if rnd < 0:
                        continue
                    start.setdefault((c.name, side), []).append(r)
                    log(f"start-up {rnd + 1}/{args.runs} {c.name} {side}: ready {r.ready:.3f} s "
                        f"on {r.line[:40]!r}"
                        + (f" ('Attaching' at {r.attaching:.3f} s with links+perf events "
                           f"{r.links_attaching})" if r.attaching is not None else "")
                        + f", links+perf events {r.links_ready} then, {r.links_idle} after "
                        f"idle; peak RSS {r.rss / 1024:.1f} MiB")

        # (c): per-event overhead.
        for c in todo:
            total = c.calls * args.bursts
            for mode in ("dropped", c.passed):
                target = str(sleeper.pid) if mode == "dropped" else "{pid}"
                tk_exp, bt_exp = expects(c, total) if mode != "dropped" else (None, None)
                printing = mode == "printed"
                tracers = [
                    Tracer(f"tracekit {c.name}", c.tk_over(target), "fd", expect=tk_exp,
                           drain=printing),
                    Tracer(f"bpftrace {c.name}", [bpftrace, "-e", c.bt_over(target)], "ready",
                           expect=bt_exp, drain=printing),
                ]
                if mode in c.diag:
                    what, argv, _ = c.diag[mode]
                    tracers.append(Tracer(f"tracekit {c.name}, {what}", argv(target), "fd"))
                log(f"overhead: {c.name}, events {mode}")
                runs_out = []

                def measure(w, tracers=tracers, runs_out=runs_out):
                    lines = w.run()
                    return min(float(x) for x in lines if re.fullmatch(r"[\d.]+", x))

                # Every traced run's output is looked at as it stops.
                for t in tracers:
                    stop = t.stop

                    def checked_stop(t=t, stop=stop, mode=mode):
                        stop()
                        if printing:
                            n = t.out.count(MISSING)
                            delivered.setdefault((c.name, mode, t.name), []).append(n / total)
                    t.stop = checked_stop
                base = alternate(tracers, measure, args.rounds,
                                 spawn=lambda: Loop(loop, c.kind, c.calls, args.bursts, cpu))
                over[c.name, mode] = (tracers, base)

        # (d): funccount at full speed, exact.
        if any(c.tool == "funccount" for c in todo):
            per = args.million // 2
            bursts = 5
            calls = max(1, per // bursts)
            m = calls * bursts * 2
            for i in range(3):
                w = Loop(loop, "getppid", calls, bursts, None, threads=2)
                free = int(w.run()[-2].split()[2])
                w = Loop(loop, "getppid", calls, bursts, None, threads=2)
                t = Tracer("funccount", [f"{tk}/funccount", "-p", "{pid}",
                                         "t:syscalls:sys_enter_getppid"], "fd")
                t.start(w.pid)
                tot = w.run()[-2].split()
                t.stop()
                made, wall = int(tot[1]), int(tot[2])
                got = re.search(r"^syscalls:sys_enter_getppid\s+(\d+)$", t.out, re.M)
                counted = int(got.group(1)) if got else 0
                million.append((made, counted, wall, free))
                log(f"million {i + 1}/3: made {made}, counted {counted}, "
                    f"{made / wall * 1e9:,.0f}/s traced, {made / free * 1e9:,.0f}/s untraced")
    finally:
        sleeper.kill()
        sleeper.wait()
        shutil.rmtree(tmp, ignore_errors=True)
        if mounted:
            subprocess.run(["umount", "/sys/kernel/tracing"])

    report(args, todo, start, over, delivered, million, notes, bt_version)


def report(args, todo, start, over, delivered, million, notes, bt_version):
    def med(c, side, key, scale=1):
        return statistics.median(getattr(r, key) for r in start[c, side]) / scale

    P = print
    P("## Generic tools against bpftrace: trace, funccount, argdist one-liners\n")
    P(f"bpftrace {bt_version} (Debian). Made by `bench/trace_oneliners.py` (`make bench-trace`); "
      "one run, the two sides alternating; medians. The machine is shared (2 CPUs, QEMU "
      "VMs and builds beside): only the ratios of one run mean anything.\n")
    P("| one-liner | tracekit | bpftrace |")
    P("|---|---|---|")
    for c in todo:
        P(f"| {c.name} | `{shlex.join([c.tool] + c.tk_start('PID')[1:])}` "
          f"| `{c.bt_start('PID')[len(READY):]}` |")
    for n in notes:
        P(f"\n{n}.")
    P()
    P(f"### Start-up to attached and peak RSS ({args.runs} runs each, after one uncounted "
      "run of each)\n")
    P("Start-up: spawn to the first line the tool writes once attached (tracekit: trace's "
      "header, funccount's \"Tracing...\"; bpftrace: its BEGIN block's line, run once its "
      "probes are attached; it prints \"Attaching N probes...\" before attaching, "
      "column \"Attaching at\"). Peak RSS: ru_maxrss (wait4) of the tool, after "
      f"{args.idle:g} s idle and a SIGINT (its exit's printing included).\n")
    P("| one-liner | tracekit start-up (s) | bpftrace start-up (s) | bpftrace \"Attaching\" at (s) "
      "| ratio (target <= 0.33) | tracekit peak RSS (MB) | bpftrace peak RSS (MB) "
      "| ratio (target <= 0.25) |")
    P("|---|---:|---:|---:|---:|---:|---:|---:|")
    verdict_s, verdict_m = [], []
    for c in todo:
        s_tk, s_bt = med(c.name, "tracekit", "ready"), med(c.name, "bpftrace", "ready")
        a_bt = statistics.median(r.attaching for r in start[c.name, "bpftrace"])
        m_tk, m_bt = (med(c.name, "tracekit", "rss", 1024), med(c.name, "bpftrace", "rss", 1024))
        P(f"| {c.name} | {s_tk:.3f} | {s_bt:.3f} | {a_bt:.3f} | {s_tk / s_bt:.2f} | "
          f"{m_tk:.1f} | {m_bt:.1f} | {m_tk / m_bt:.2f} |")
        r_tk = [r.ready for r in start[c.name, "tracekit"]]
        verdict_s.append(f"{c.name} {'met' if s_tk / s_bt <= 1 / 3 else 'MISSED'} "
                         f"({s_tk / s_bt:.2f}x: {s_tk * 1e3:.0f} vs {s_bt * 1e3:.0f} ms"
                         + (f"; {(s_tk - s_bt / 3) * 1e3:.1f} ms over a third of bpftrace's, "
                            f"tracekit's runs {min(r_tk) * 1e3:.0f}..{max(r_tk) * 1e3:.0f} ms"
                            if s_tk / s_bt > 1 / 3 else "") + ")")
        verdict_m.append(f"{c.name} {'met' if m_tk / m_bt <= 0.25 else 'MISSED'} "
                         f"({m_tk / m_bt:.2f}x: {m_tk:.1f} vs {m_bt:.1f} MB"
                         + (f"; {m_tk - m_bt / 4:.1f} MB over a quarter" if m_tk / m_bt > 0.25
                            else "") + ")")
    P()
    ranges = []
    for c in todo:
        for side in ("tracekit", "bpftrace"):
            rs = start[c.name, side]
            ranges.append(f"{c.name} {side} {min(r.ready for r in rs):.3f}..{max(r.ready for r in rs):.3f} s, "
                          f"{min(r.rss for r in rs) / 1024:.1f}..{max(r.rss for r in rs) / 1024:.1f} MB")
    P("Ranges over the runs: " + "; ".join(ranges) + ".  ")
    if any(c.tool == "trace" for c in todo):
        P("trace's and argdist's peak RSS is above funccount's: their BPF objects are 3.6 and "
          "4.2 MB (8 slots of 8 attach kinds of programs, each with the plan machinery inlined, "
          "and their line info), which libbpf reads whole to load the one program a probe "
          "needs; funccount's is 0.13 MB. Their probes here name only tracepoint "
          "fields and builtins, so they parse no BTF of their own (libtrace/kbtf.c parses it "
          "only when a probe needs it, and frees it before libbpf parses its copy).  ")
    att = []
    for c in todo:
        r = start[c.name, "bpftrace"][0]
        att.append(f"{c.name} {r.links_attaching} at \"Attaching\", {r.links_ready} at the ready "
                   f"line, {r.links_idle} after idle; tracekit {start[c.name, 'tracekit'][0].links_ready} "
                   f"at its line, {start[c.name, 'tracekit'][0].links_idle} after")
    P("BPF links + perf events (first run): " + "; ".join(att) + ".\n")

    P(f"### Per-event overhead ({args.rounds} rounds per row)\n")
    P("ns added per event (per traced syscall) over the untraced loop: the loop's thread CPU "
      "time per call, fastest of its bursts, traced minus the mean of the untraced runs "
      "around; medians (range). Dropped: the filter names another process. Printed: each "
      "event printed to a pipe the bench drains (delivered: lines printed / events made, "
      "median). Counted: the count checked equal to the calls made.\n")
    P("| one-liner | events | calls per run | untraced ns/call | tracekit +ns/event | "
      "bpftrace +ns/event | ratio (target <= 1) | delivered tracekit / bpftrace |")
    P("|---|---|---:|---:|---:|---:|---:|---|")
    verdict_o = []
    for c in todo:
        for mode in ("dropped", c.passed):
            (t_tk, t_bt, *_), base = over[c.name, mode]
            o = [statistics.median(s[1] for s in t.samples) for t in (t_tk, t_bt)]
            rg = [f"{min(s[1] for s in t.samples):+.0f}..{max(s[1] for s in t.samples):+.0f}"
                  for t in (t_tk, t_bt)]
            d = [delivered.get((c.name, mode, t.name)) for t in (t_tk, t_bt)]
            dl = (" / ".join(f"{statistics.median(x):.1%}" for x in d) if all(d) else
                  "exact count" if mode == "counted" else "")
            ratio = o[0] / o[1] if o[1] > 0 else float("nan")
            P(f"| {c.name} | {mode} | {c.calls * args.bursts} | {statistics.median(base):.1f} "
              f"| {o[0]:+.1f} ({rg[0]}) | {o[1]:+.1f} ({rg[1]}) | {ratio:.2f} | {dl} |")
            lo = [min(s[1] for s in t.samples) for t in (t_tk, t_bt)]
            hi = [max(s[1] for s in t.samples) for t in (t_tk, t_bt)]
            overlap = lo[0] <= hi[1] and lo[1] <= hi[0]
            verdict_o.append(f"{c.name} {mode} {'met' if o[0] <= o[1] else 'MISSED'} "
                             f"({o[0]:+.0f} vs {o[1]:+.0f} ns/event"
                             + (f", {o[0] - o[1]:.0f} ns over" if o[0] > o[1] else "")
                             + ("; the rounds' ranges overlap" if o[0] > o[1] and overlap else "")
                             + ")")
    P()
    for c in todo:
        for mode, (what, _, why) in c.diag.items():
            ts, _ = over[c.name, mode]
            o = [statistics.median(s[1] for s in t.samples) for t in ts]
            P(f"Where tracekit's time goes, {c.name}, events {mode}: `{c.tool}` as above "
              f"{o[0]:+.1f} ns/event, {what} {o[2]:+.1f}, bpftrace {o[1]:+.1f} (same rounds): "
              f"{why}.\n")
    if million:
        P("### funccount at a million hits a second\n")
        P(f"`funccount -p LOOP t:syscalls:sys_enter_getppid` while the loop makes M getppid() "
          "calls from 2 threads (unpinned), 3 times; the rate is M over the loop's wall time "
          "under funccount (untraced: the same loop just before).\n")
        P("| run | M (calls made) | funccount's count | exact | rate traced (events/s) "
          "| rate untraced (calls/s) |")
        P("|---:|---:|---:|---|---:|---:|")
        for i, (made, counted, wall, free) in enumerate(million):
            P(f"| {i + 1} | {made:,} | {counted:,} | {'yes' if made == counted else '**NO**'} "
              f"| {made / wall * 1e9:,.0f} | {made / free * 1e9:,.0f} |")
        exact = all(m == c for m, c, _, _ in million)
        best = max(m / w * 1e9 for m, _, w, _ in million)
        P()
        P(f"**Target: funccount counts every hit at >= 1,000,000 events/s: "
          f"{'met' if exact and best >= 1e6 else 'MISSED'}** (count "
          f"{'exact in every run' if exact else 'NOT exact'}; best rate {best:,.0f}/s"
          + ("" if best >= 1e6 else ": this machine did not reach 1,000,000/s") + ").\n")
    P("**Target: start-up at most 1/3 of bpftrace's:** " + "; ".join(verdict_s) + ".  ")
    P("**Target: peak RSS at most 1/4 of bpftrace's:** " + "; ".join(verdict_m) + ".  ")
    P("**Target: per-event overhead no more than bpftrace's:** " + "; ".join(verdict_o) + ".")


if __name__ == "__main__":
    main()
