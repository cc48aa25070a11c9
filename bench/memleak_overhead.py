#!/usr/bin/python3
"""memleak's cost against valgrind's and heaptrack's, on the same
workloads in one run: Debian's sort on 16 MiB of lines and python3
loading 8 MiB of JSON (programs whose allocator calls are a small part
of their work), and an allocation storm (2,000,000 malloc/free pairs of
64 bytes, bench/alloc_storm.c).

Each workload runs plain, under tracekit's memleak (-- COMMAND; and on
the storm with -s 100, every 100th call kept, with -Z 32, no call kept
(its blocks are 64 bytes), with -s 100 on the uprobe and uretprobe pair
instead of the session (TRACEKIT_ATTACH=uprobe), and under bpftrace with
empty programs on malloc's entry and return: the floor of any tracer
that probes each call), under valgrind
--leak-check=full and under heaptrack. The time is the workload's own,
from its fork to its exit (bench/timeit.c): memleak's attach and
heaptrack's start-up are not counted, valgrind's start-up for the
command is (it is part of running a program under it). The runners take
turns in a rotating order each round; medians over the rounds.

    /usr/bin/python3 bench/memleak_overhead.py [--rounds 3]

Prints a markdown section on stdout (for bench/results.py memleak);
progress on stderr. Needs root, cc, valgrind, heaptrack."""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from overhead import ROOT, build, die


def workloads(tmp):
    """{name: argv} of the workloads, their inputs made in tmp."""
    rng = random.Random(12)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 12)))
             for _ in range(20000)]
    lines = Path(tmp, "lines.txt")
    with lines.open("w") as f:
        size = 0
        while size < 16 << 20:
            line = " ".join(rng.choice(words) for _ in range(6)) + "\n"
            f.write(line)
            size += len(line)
    doc = Path(tmp, "doc.json")
    records = []
    size = 0
    while size < 8 << 20:
        r = {"id": len(records), "name": rng.choice(words), "tags": rng.sample(words, 4),
             "score": rng.random()}
        records.append(r)
        size += len(json.dumps(r)) + 2
    doc.write_text(json.dumps(records))
    return {
        "sort, 16 MiB": ["sort", "-o", "/dev/null", str(lines)],
        "python3 json.load, 8 MiB": ["/usr/bin/python3", "-c",
                                     "import json, sys; json.load(open(sys.argv[1]))", str(doc)],
        "storm: 2,000,000 malloc/free": [f"{tmp}/alloc_storm", "2000000"],
    }


# The floor of any tracer that probes each call, measured with empty
# programs (bpftrace): what the kernel's uprobes cost before a tracer
# does any work of its own.
FLOOR = "uprobe:{libc}:malloc {{ }} uretprobe:{libc}:malloc {{ }}"


def libc_path():
    out = subprocess.run(["ldd", "/bin/true"], capture_output=True, text=True).stdout
    return next(line.split()[2] for line in out.splitlines() if "libc.so" in line)


def runners(tmp, memleak):
    """{name: function of the timeit command line to the whole argv}."""
    def prefix(*p):
        return lambda cmd: list(p) + cmd
    return {
        "plain": prefix(),
        "tracekit memleak": prefix(memleak, "-T", "5", "--"),
        "tracekit memleak -s 100": prefix(memleak, "-T", "5", "-s", "100", "--"),
        "tracekit memleak -Z 32": prefix(memleak, "-T", "5", "-Z", "32", "--"),
        "tracekit memleak -s 100, no session": prefix("env", "TRACEKIT_ATTACH=uprobe", memleak,
                                                      "-T", "5", "-s", "100", "--"),
        "probes alone: malloc entry and return, empty (bpftrace)":
            lambda cmd: ["bpftrace", "-q", "-e", FLOOR.format(libc=libc_path()),
                         "-c", " ".join(cmd)],
        "valgrind": prefix("valgrind", "--leak-check=full", "--trace-children=yes", "-q",
                           "--log-file=/dev/null"),
        "heaptrack": prefix("heaptrack", "-o", f"{tmp}/heaptrack"),
    }


# Runners for the storm alone: the cost per call, not of a program.
STORM_ONLY = ("tracekit memleak -s 100", "tracekit memleak -Z 32",
              "tracekit memleak -s 100, no session",
              "probes alone: malloc entry and return, empty (bpftrace)")


def timed(runner, argv, tmp):
    out = Path(tmp, "time")
    out.unlink(missing_ok=True)
    cmd = runner([f"{tmp}/timeit", str(out)] + argv)
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, env=dict(os.environ, LC_ALL="C"))
    if r.returncode or not out.exists():
        die(f"{' '.join(cmd)} failed (rc {r.returncode}):\n{r.stderr}")
    for f in Path(tmp).glob("heaptrack*"):
        f.unlink()
    return float(out.read_text())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--bin", default=os.environ.get("TRACEKIT_BIN", str(ROOT / "build/bin")))
    args = ap.parse_args()
    if os.geteuid() != 0:
        die("run as root: it loads BPF programs")
    memleak = str(Path(args.bin) / "memleak")
    for tool in (memleak, shutil.which("valgrind"), shutil.which("heaptrack"),
                 shutil.which("bpftrace")):
        if not tool or not os.access(tool, os.X_OK):
            die(f"{tool} is missing (make; make bench-deps installs valgrind, heaptrack and bpftrace)")
    tmp = tempfile.mkdtemp(prefix="memleak-bench-")
    try:
        build(tmp, programs=[("alloc_storm", "alloc_storm.c"), ("timeit", "timeit.c")],
              floor=False)
        loads = workloads(tmp)
        runs = runners(tmp, memleak)
        times = {(w, r): [] for w in loads for r in runs}
        names = list(runs)
        for k in range(args.rounds):
            order = names[k % len(names):] + names[:k % len(names)]
            for w, argv in loads.items():
                for r in order:
                    if r in STORM_ONLY and not w.startswith("storm"):
                        continue
                    t = timed(runs[r], argv, tmp)
                    times[(w, r)].append(t)
                    print(f"round {k + 1}: {w}: {r}: {t:.3f} s", file=sys.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print("## memleak: cost against valgrind and heaptrack\n")
    print(f"Medians of {args.rounds} rounds; the workload's own wall time (fork to exit). "
          "Slowdown: the time over the plain run's. The last column: tracekit's slowdown "
          "over valgrind's.\n")
    print("| workload | runner | time (s) | slowdown | of valgrind's |")
    print("|---|---|---:|---:|---:|")
    for w in loads:
        plain = statistics.median(times[(w, "plain")])
        vg = statistics.median(times[(w, "valgrind")]) / plain
        for r in names:
            if not times[(w, r)]:
                continue
            t = statistics.median(times[(w, r)])
            of_vg = f"{(t / plain) / vg:.3f}" if r.startswith("tracekit") else ""
            print(f"| {w} | {r} | {t:.3f} | {t / plain:.1f}x | {of_vg} |")
    print()


if __name__ == "__main__":
    main()
