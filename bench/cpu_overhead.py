#!/usr/bin/python3
"""Overhead of cpudist, runqlen, offwaketime, hardirqs and softirqs,
tracekit's against libbpf-tools' (Debian's, /usr/sbin) where they run
here, and each against a floor of empty tp_btf programs on the same
tracepoints.

Three workloads:

- scheduler (cpudist, runqlen, offwaketime): bench/pingpong.c, two
  processes on one CPU passing a byte through pipes; a round trip is two
  wakeups and two context switches; cost = CPU ns per round trip, as
  bench/runqlat_overhead.py;
- hard interrupts (hardirqs): bench/bio_randread.c's 4 KiB O_DIRECT
  reads of a 64 MiB file at random offsets: each read is a request to
  the disk (this sandbox may not open /dev/vda itself, but a file on it
  reads the same way) and its completion one hard interrupt; cost =
  wall-clock ns per read;
- softirqs: bench/tcp_load.c's stream over loopback, 1 KiB send()
  calls, on CPU 0 as bench/net_overhead.py: each send raises NET_RX, a
  softirq (and no hard interrupt: loopback is a software device); cost =
  wall-clock ns per MiB.

Tracers alternate with untraced runs as bench/overhead.py says (each
tracer run between two untraced runs, rotating order); medians over the
rounds. A peer that cannot attach here gets its error line instead of a
row.

    /usr/bin/python3 bench/cpu_overhead.py [--rounds 5]

Prints a markdown section on stdout (for bench/results.py cpu); progress
on stderr. Needs root, cc, clang, libbpf-dev, libbpf-tools."""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from block_overhead import enable_bpf_stats, prog_stats
from net_overhead import peer_error
from overhead import ROOT, Tracer, alternate, build, die, table_rows

MIB, CHUNK = 256, 1024
READS, FILE_MIB = 5000, 64


def measure(argv):
    r = subprocess.run(argv, capture_output=True, text=True, check=True)
    return min(float(x) for x in r.stdout.split())


def bpf_cost(tracers, run, times=3):
    """{name: (events, BPF ns per event)}: each tracer's programs' total
    run time (BPF_ENABLE_STATS) over one run of the workload, divided by
    the runs of its most-run program (one per traced event: a switch, an
    interrupt's entry), the median of times runs; the stats are on only
    here, not while the overhead is timed."""
    fd = enable_bpf_stats()
    got = {}
    try:
        for t in tracers:
            per = []
            for _ in range(times):
                t.start()
                before = prog_stats(t.proc.pid)
                run()
                after = prog_stats(t.proc.pid)
                t.stop()
                d = [(after[k][0] - before.get(k, (0, 0))[0],
                      after[k][1] - before.get(k, (0, 0))[1]) for k in after]
                n = max((c for c, _ in d), default=0)
                per.append((n, sum(x for _, x in d) / n if n else 0.0))
            got[t.name] = (statistics.median(n for n, _ in per),
                           statistics.median(x for _, x in per))
    finally:
        os.close(fd)
    return got


def verdict(tool, med, tk, peer, none, unit, cost, spread):
    t, p = med[tk], med.get(peer)
    if p is None:
        return None
    if p <= 0 or p < spread:
        bt, bp = cost[tk][1], cost[peer][1]
        if not bp:
            return (f"{tool}: not measurable in this run (overhead within the noise: "
                    f"medians {t:+.0f} vs {p:+.0f} {unit}, runs spread {spread:.0f}; "
                    f"libbpf-tools' programs ran {cost[peer][0]:.0f} times per burst)")
        return (f"{tool}: overhead within the noise (medians {t:+.0f} vs {p:+.0f} {unit}, "
                f"runs spread {spread:.0f}); BPF time per event **"
                f"{'met' if bt <= 0.5 * bp else 'MISSED'}** (tracekit / libbpf-tools = "
                f"{bt / bp:.2f}: {bt:.0f} vs {bp:.0f} ns, {cost[tk][0]:.0f} vs "
                f"{cost[peer][0]:.0f} events per burst)")
    return (f"{tool}: **{'met' if t <= 0.5 * p else 'MISSED'}** (tracekit / libbpf-tools "
            f"= {t / p:.2f}; {t:+.0f} vs {p:+.0f} {unit}, slowdowns {t / none:+.1%} vs "
            f"{p / none:+.1%})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--trips", type=int, default=50000, help="round trips per burst")
    ap.add_argument("--bin", default=os.environ.get("TRACEKIT_BIN", str(ROOT / "build/bin")))
    args = ap.parse_args()
    if os.geteuid() != 0:
        die("run as root: it loads BPF programs")
    names = ("cpudist", "runqlen", "offwaketime", "hardirqs", "softirqs")
    tk = {n: Path(args.bin) / n for n in names}
    for p in tk.values():
        if not os.access(p, os.X_OK):
            die(f"{p} is missing (make)")
    peers, errors = {}, {}
    for n in names:
        p = Path("/usr/sbin") / n
        if not os.access(p, os.X_OK):
            errors[n] = "has no such tool"
            continue
        err = peer_error([str(p), "1", "1"])
        if err and "failed" in err:
            r = subprocess.run([str(p), "1", "1"], capture_output=True, text=True)
            core = [x for x in r.stderr.splitlines() if "CO-RE relocation" in x][-1:]
            errors[n] = " / ".join(core + [err])
        else:
            peers[n] = p

    def lt(n, expect):
        return ([Tracer(f"libbpf-tools {n}", ["stdbuf", "-oL", str(peers[n])], "line",
                        drain=True, expect=expect)] if n in peers else [])

    hist = r"\s+\d+ -> \d+\s+: [1-9]"
    tmp = tempfile.mkdtemp(prefix="cpu-bench-")
    try:
        build(tmp, programs=[("pingpong", "pingpong.c"), ("tcp_load", "tcp_load.c"),
                             ("bio_randread", "bio_randread.c")],
              bpf=[("floor.bpf.o", "cpu_overhead_floor.bpf.c")])
        fl = [f"{tmp}/floor", f"{tmp}/floor.bpf.o"]
        cpu = max(os.sched_getaffinity(0))

        sched = [Tracer("tracekit cpudist", [str(tk["cpudist"])], "fd", drain=True,
                        expect=hist), *lt("cpudist", hist),
                 Tracer("floor: empty sched_switch", [*fl, "floor_switch"], "line"),
                 Tracer("tracekit runqlen", [str(tk["runqlen"])], "fd", drain=True,
                        expect=r"runqlen"), *lt("runqlen", r"runqlen"),
                 Tracer("tracekit offwaketime -f -n pingpong",
                        [str(tk["offwaketime"]), "-f", "-n", "pingpong"], "fd",
                        drain=True, expect=r"pingpong"),
                 Tracer("floor: empty sched_switch + sched_waking",
                        [*fl, "floor_switch", "floor_waking"], "line")]
        print("scheduler tools on pingpong", file=sys.stderr)
        base_s = alternate(sched, lambda: measure(["taskset", "-c", str(cpu),
                                                   f"{tmp}/pingpong", str(args.trips),
                                                   "3"]), args.rounds)

        data = f"{tmp}/reads.dat"
        with open(data, "wb") as f:
            for _ in range(FILE_MIB):
                f.write(os.urandom(1 << 20))
            os.fsync(f.fileno())
        hard = [Tracer("tracekit hardirqs", [str(tk["hardirqs"])], "fd", drain=True),
                *lt("hardirqs", None),
                Tracer("floor: empty irq_handler_entry/exit",
                       [*fl, "floor_irq_entry", "floor_irq_exit"], "line")]
        print("hardirqs on O_DIRECT reads of a file", file=sys.stderr)
        base_h = alternate(hard, lambda: measure([f"{tmp}/bio_randread", data, str(READS), "3"]),
                           args.rounds)
        soft = [Tracer("tracekit softirqs", [str(tk["softirqs"])], "fd", drain=True,
                       expect=r"net_rx"), *lt("softirqs", r"net_rx"),
                Tracer("floor: empty softirq_entry/exit",
                       [*fl, "floor_softirq_entry", "floor_softirq_exit"], "line")]
        print("softirqs on a loopback stream", file=sys.stderr)
        base_t = alternate(soft, lambda: measure(["taskset", "-c", "0", f"{tmp}/tcp_load",
                                                  "stream", str(MIB), str(CHUNK), "3"]),
                           args.rounds)
        run_s = lambda: measure(["taskset", "-c", str(cpu), f"{tmp}/pingpong",  # noqa: E731
                                 str(args.trips), "1"])
        run_h = lambda: measure([f"{tmp}/bio_randread", data, str(READS), "1"])  # noqa: E731
        run_t = lambda: measure(["taskset", "-c", "0", f"{tmp}/tcp_load",  # noqa: E731
                                 "stream", str(MIB), str(CHUNK), "1"])
        print("BPF run time per event", file=sys.stderr)
        cost = {**bpf_cost(sched, run_s), **bpf_cost(hard, run_h), **bpf_cost(soft, run_t)}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    med = {t.name: statistics.median(s[1] for s in t.samples) for t in sched + hard + soft}
    none_s, none_h, none_t = (statistics.median(b) for b in (base_s, base_h, base_t))

    def rows(tracers, base, ref):
        out = table_rows(tracers, base, ref if ref in med else tracers[0].name, 0)
        out[0] += " | |"
        for i, t in enumerate(tracers, 1):
            n, ns = cost[t.name]
            out[i] += f" {n:.0f} | {ns:.0f} |"
        return out

    head = ("| tracer | {u} | overhead {u} (median) | min .. max | vs {r} "
            "| BPF runs per run | BPF ns per run |")
    lines = [
        "## cpudist, runqlen, offwaketime, hardirqs, softirqs: overhead",
        "",
        f"- {args.rounds} rounds per workload; each tracer run sits between two untraced "
        "runs, in rotating order; overhead = with - mean(around); medians over the rounds; "
        "each run 3 bursts (fastest burst). Every tool traces every task with its default "
        "options (offwaketime: `-f -n pingpong`: folded, pingpong only, so that its exit does not symbolize every stack of the machine), output drained as it comes",
        "",
        f"Scheduler: `bench/pingpong.c` on CPU {cpu}, {args.trips} round trips per burst "
        "(2 wakeups, 2 context switches each), CPU ns per round trip:",
        "",
        head.format(u="ns/round trip", r="libbpf-tools cpudist"), "|---|---:|---:|---:|---:|---:|---:|",
        *rows(sched, base_s, "libbpf-tools cpudist"),
        "",
        f"Hard interrupts: `bench/bio_randread.c`, {READS} O_DIRECT 4 KiB reads per burst "
        f"of a {FILE_MIB} MiB file on the root disk (virtio-blk) at random offsets, one "
        "interrupt each, wall-clock ns per read:",
        "",
        head.format(u="ns/read", r="libbpf-tools hardirqs"), "|---|---:|---:|---:|---:|---:|---:|",
        *rows(hard, base_h, "libbpf-tools hardirqs"),
        "",
        f"Softirqs: `bench/tcp_load.c stream`, {MIB} MiB over loopback in {CHUNK}-byte "
        "send() calls, on CPU 0, wall-clock ns per MiB:",
        "",
        head.format(u="ns/MiB", r="libbpf-tools softirqs"), "|---|---:|---:|---:|---:|---:|---:|",
        *rows(soft, base_t, "libbpf-tools softirqs"),
        "",
        "BPF runs per run: runs of the tracer's most-run program over one burst (one per "
        "context switch, hard interrupt or softirq); BPF ns per run: all its programs' run "
        "time (BPF_ENABLE_STATS, on only for these extra runs) per such run; medians of 3.",
        "",
        "Targets, overhead at most half of libbpf-tools' (wall-clock or CPU overhead; where "
        "that is within the noise, the BPF time per event):",
        "",
    ]
    T = "Target, half of libbpf-tools': "  # bench/targets.py gathers "Target" lines
    for n, none, unit, base in (("cpudist", none_s, "ns per round trip", base_s),
                                ("hardirqs", none_h, "ns per read", base_h),
                                ("softirqs", none_t, "ns per MiB", base_t)):
        spread = statistics.quantiles(base, n=4)[2] - statistics.quantiles(base, n=4)[0]
        v = verdict(n, med, f"tracekit {n}", f"libbpf-tools {n}", none, unit, cost, spread)
        lines.append(f"{T}{v}" if v else f"{T}{n}: not measured (libbpf-tools': `{errors[n]}`)")
    lines.append(f"{T}runqlen: not measured here (libbpf-tools' cannot attach on this kernel: "
                 f"`{errors.get('runqlen', 'it attached')}`); tracekit's "
                 f"{med['tracekit runqlen']:+.0f} ns per round trip")
    lines.append(f"{T}offwaketime: not measured here (Debian's libbpf-tools {errors.get('offwaketime', '')}"
                 f"); tracekit's {med['tracekit offwaketime -f -n pingpong']:+.0f} ns per round "
                 f"trip, floor {med['floor: empty sched_switch + sched_waking']:+.0f}")
    lines.append("")
    print("\n".join(x + ("\n" if x.startswith("Target, half") else "") for x in lines))


if __name__ == "__main__":
    main()
