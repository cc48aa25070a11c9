#!/usr/bin/python3
"""Overhead of runqlat on a context-switch-heavy workload: tracekit's,
libbpf-tools', bpftrace's runqlat.bt, and the floor (empty tp_btf programs
on the same three scheduler tracepoints).

The workload (bench/pingpong.c) is two processes on one CPU passing a
byte back and forth through pipes: each round trip is two wakeups and two
context switches, each of which every runqlat traces. Cost = ns of CPU
time of the two processes per round trip (time the CPU gives to other
tasks is not counted), the fastest of several bursts. Tracers alternate with
untraced runs as bench/overhead.py says; the table gives medians over the
rounds.

    /usr/bin/python3 bench/runqlat_overhead.py [--rounds 7] [--trips 50000]

Prints a markdown section on stdout (for bench/results.py runqlat);
progress on stderr. Needs root, clang, libbpf-dev, libbpf-tools."""
import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from overhead import ROOT, Tracer, alternate, build, die, table_rows


def bpftrace_runqlat():
    """bpftrace's own runqlat.bt, less its #include <linux/sched.h>, which
    bpftrace 0.17 cannot parse on Debian 12 (unknown __aligned_u64): the
    one name it takes from it is TASK_RUNNING, 0."""
    text = Path("/usr/sbin/runqlat.bt").read_text()
    return text.replace("#include <linux/sched.h>", "").replace("TASK_RUNNING", "0")


def measure(prog, trips, bursts, cpu):
    r = subprocess.run(["taskset", "-c", str(cpu), prog, str(trips), str(bursts)],
                       capture_output=True, text=True, check=True)
    return min(float(x) for x in r.stdout.split())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--trips", type=int, default=50000, help="round trips per burst")
    ap.add_argument("--bursts", type=int, default=5, help="bursts per run (fastest taken)")
    ap.add_argument("--bin", default=os.environ.get("TRACEKIT_BIN", str(ROOT / "build/bin")))
    args = ap.parse_args()
    if os.geteuid() != 0:
        die("run as root: it loads BPF programs")
    tk = Path(args.bin) / "runqlat"
    peer = Path("/usr/sbin/runqlat")
    for p in (tk, peer):
        if not os.access(p, os.X_OK):
            die(f"{p} is missing (make; apt-get install libbpf-tools)")

    tmp = tempfile.mkdtemp(prefix="runqlat-bench-")
    try:
        build(tmp, programs=[("pingpong", "pingpong.c")],
              bpf=[("floor.bpf.o", "runqlat_overhead_floor.bpf.c")])
        hist = r"usecs.*\n(.*\n)*\s+\d+ -> \d+\s+: [1-9]"
        tracers = [
            Tracer("tracekit runqlat", [str(tk)], "fd", expect=hist),
            Tracer("libbpf-tools runqlat", ["stdbuf", "-oL", str(peer)], "line", expect=hist),
            Tracer("floor: empty tp_btf x3", [f"{tmp}/floor", f"{tmp}/floor.bpf.o",
                                              "floor_wakeup", "floor_wakeup_new",
                                              "floor_switch"], "line"),
        ]
        if shutil.which("bpftrace") and os.path.exists("/usr/sbin/runqlat.bt"):
            tracers.append(Tracer("bpftrace runqlat.bt", ["bpftrace", "-e", bpftrace_runqlat()],
                                  "Tracing CPU scheduler", expect=r"@usecs:\s*\n\[\d+"))
        cpu = max(os.sched_getaffinity(0))
        base = alternate(tracers, lambda: measure(f"{tmp}/pingpong", args.trips,
                                                  args.bursts, cpu), args.rounds)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    med = {t.name: statistics.median(s[1] for s in t.samples) for t in tracers}
    tk_o, lt_o = med["tracekit runqlat"], med["libbpf-tools runqlat"]
    fl = med["floor: empty tp_btf x3"]
    lines = [
        "## runqlat: overhead on a context-switch-heavy workload",
        "",
        f"- Workload: `bench/pingpong.c`, two processes on CPU {cpu} passing a byte through "
        f"pipes; {args.rounds} rounds, each run {args.bursts} bursts of {args.trips} round "
        "trips (fastest burst), timed by the CPU time of both; a round trip is 2 wakeups and "
        "2 context switches",
        "- Each tracer run sits between two untraced runs; overhead = with - mean(around); "
        "medians over the rounds. All tools trace every task (no filter) with their "
        "default options",
        "",
        "| tracer | ns/round trip | overhead ns/round trip (median) | min .. max "
        "| vs libbpf-tools |",
        "|---|---:|---:|---:|---:|",
    ]
    lines += table_rows(tracers, base, "libbpf-tools runqlat", 0)
    lines += [
        "",
        f"**tracekit / libbpf-tools = {tk_o / lt_o:.2f}** (ratio of median overheads). "
        f"Above the floor of three empty tp_btf programs ({fl:+.0f} ns), tracekit's "
        f"programs cost {tk_o - fl:+.0f} ns per round trip and libbpf-tools' "
        f"{lt_o - fl:+.0f} ns.",
        "",
    ]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
