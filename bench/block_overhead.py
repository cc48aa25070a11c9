#!/usr/bin/python3
"""Overhead of biolatency and biosnoop on a block I/O workload, tracekit's
against libbpf-tools' (Debian's, /usr/sbin), and their events lost.

The workload (bench/bio_randread.c) makes 4 KiB O_DIRECT reads of a loop
device at random offsets; the loop device's backing file (in a temporary
directory) is read once first, so that its page cache serves the loop
driver and a read costs what the block layer and the loop worker cost,
which is what a tracer adds to. Cost = wall-clock ns per read, the fastest
of several bursts. Tracers alternate with untraced runs as bench/overhead.py
says (each tracer run between two untraced runs, rotating order); the
table gives medians over the rounds. All tools trace every disk with their
default options; biosnoop's output (one line per request) goes to a pipe
that this script drains. The floor: empty programs on the same two
tracepoints (bench/block_overhead_floor.bpf.c), what any tracer of issue
and completion pays before its own work.

libbpf-tools' biosnoop attaches a kernel function (blk_account_io_start:
fentry or kprobe); where the kernel refuses both it cannot load, and its
error is shown instead of a row.

BPF cost: the wall-clock slowdown of a request that takes tens of
microseconds is within a shared machine's noise; the kernel's BPF
statistics (BPF_ENABLE_STATS, held only for these runs) give each tool's
own run time per request: 3 runs of one burst per tool.

Events lost, at the default buffer size: one more run of each tracekit
tool with -j -d on the loop disk, over one burst at full speed; the
requests it reports against the reads made, and its loss record.

    /usr/bin/python3 bench/block_overhead.py [--rounds 7] [--reads 20000]
    /usr/bin/python3 bench/block_overhead.py --cost-only [--cost-runs 9] \
        [--base-bin OTHER/build/bin]

--cost-only measures the BPF cost alone, quickly, for a change's A/B:
--base-bin adds another build's biolatency beside this one's, in the
same runs. --peer-biosnoop PATH compares biosnoop with a libbpf-tools
biosnoop built elsewhere: Debian's (0.26) attaches a kernel function
that 6.1 and later no longer have, and 5.10's and 6.12's verifiers
refuse it.

Prints a markdown section on stdout (for bench/results.py block);
progress on stderr. Needs root, cc, losetup, libbpf-tools."""
import argparse
import ctypes
import json
import platform
import os
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from overhead import ROOT, Tracer, alternate, build, die, table_rows

SIZE = 256 << 20  # the loop device: 65536 blocks of 4 KiB
FLOOR = "floor: empty raw_tp x2"


def measure(prog, dev, reads, bursts):
    r = subprocess.run([prog, dev, str(reads), str(bursts)],
                       capture_output=True, text=True, check=True)
    return min(float(x) for x in r.stdout.split())


def peer_error(argv):
    """The error of a peer that cannot attach here (None if it can)."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        p.terminate()
        p.communicate()
        return None
    lines = [x for x in err.splitlines() if x.strip()]
    why = [x for x in lines if "load failed" in x][:1] + lines[-1:]
    return " / ".join(why) or f"exit {p.returncode}: {out.strip()}"


def enable_bpf_stats():
    """BPF_ENABLE_STATS: the kernel counts each program's runs and run
    time while the returned fd is open (it adds two clock reads to every
    BPF program run on the machine, so only for the cost runs)."""
    libc = ctypes.CDLL(None, use_errno=True)
    attr = ctypes.create_string_buffer(16)  # union bpf_attr: enable_stats.type = 0
    fd = libc.syscall(321 if platform.machine() == "x86_64" else 280, 32, attr, 16)
    if fd < 0:
        die(f"BPF_ENABLE_STATS: {os.strerror(ctypes.get_errno())}")
    return fd


def prog_stats(pid):
    """{prog id: (run_cnt, run_time_ns)} of the BPF programs pid holds."""
    got = {}
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") != "anon_inode:bpf-prog":
                continue
            info = dict(line.split(":", 1) for line in
                        open(f"/proc/{pid}/fdinfo/{fd}").read().splitlines() if ":" in line)
        except OSError:
            continue
        got[int(info["prog_id"])] = (int(info["run_cnt"]), int(info["run_time_ns"]))
    return got


def bpf_cost(tracer, prog, dev, reads):
    """(requests, BPF ns per request) of tracer's programs over one burst:
    their total run time over the runs of the one run most often (each
    request runs issue and completion once)."""
    tracer.start()
    before = prog_stats(tracer.proc.pid)
    measure(prog, dev, reads, 1)
    after = prog_stats(tracer.proc.pid)
    tracer.stop()
    diff = {k: (after[k][0] - before.get(k, (0, 0))[0], after[k][1] - before.get(k, (0, 0))[1])
            for k in after}
    runs = max(c for c, _ in diff.values())
    for k, (c, t) in diff.items():
        if c:
            r = subprocess.run(["bpftool", "prog", "show", "id", str(k), "-j"],
                               capture_output=True, text=True)
            name = json.loads(r.stdout).get("name", str(k)) if r.returncode == 0 else str(k)
            tracer.per_prog.setdefault(name, []).append(t / c)
    return runs, sum(t for _, t in diff.values()) / max(runs, 1)


def cost_runs(tracers, prog, dev, args):
    """{tracer: [(requests, ns per request)]}: args.cost_runs runs of each,
    the tracers in turn, with the kernel's BPF statistics on."""
    stats_fd = enable_bpf_stats()
    try:
        cost = {t.name: [] for t in tracers}
        for t in tracers:
            t.per_prog = {}
        for _ in range(args.cost_runs):
            for t in tracers:
                cost[t.name].append(bpf_cost(t, prog, dev, args.reads))
    finally:
        os.close(stats_fd)
    return cost


def print_cost_only(tracers, cost, peer_errs):
    """--cost-only's report: each tool's BPF ns per request, each run and
    the median, and its ratio to libbpf-tools' same tool (biolatency's
    for the floor), or why that one could not load (peer_errs)."""
    ns = {n: statistics.median(c for _, c in v) for n, v in cost.items()}
    for t in tracers:
        tool = "biosnoop" if "biosnoop" in t.name else "biolatency"
        peer = ns.get(f"libbpf-tools {tool}")
        runs = " ".join(f"{c:.0f}" for _, c in cost[t.name])
        progs = ", ".join(f"{p} {statistics.median(v):.0f}" for p, v in sorted(t.per_prog.items()))
        vs = f"{ns[t.name] / peer:.3f} of libbpf-tools' {tool}" if peer else \
            f"libbpf-tools' {tool} cannot load: {peer_errs[tool]}"
        print(f"{t.name}: median {ns[t.name]:.0f} ns per request, {vs} (runs: {runs}; "
              f"per program: {progs})")


def losses(tool, disk, prog, dev, reads):
    """(requests reported, loss record) of tool -j -d disk over one burst."""
    t = Tracer(f"{tool.name} -j", [str(tool), "-j", "-d", disk], "fd", drain=True)
    t.start()
    measure(prog, dev, reads, 1)
    t.stop()
    recs = [json.loads(x) for x in t.out.splitlines() if x.startswith("{")]
    (loss,) = [r for r in recs if r["type"] == "loss"]
    seen = sum(r["type"] == "bio" for r in recs)
    seen += sum(r["total"] for r in recs if r["type"] == "histogram")
    return seen, loss


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--reads", type=int, default=20000, help="reads per burst")
    ap.add_argument("--bursts", type=int, default=3, help="bursts per run (fastest taken)")
    ap.add_argument("--bin", default=os.environ.get("TRACEKIT_BIN", str(ROOT / "build/bin")))
    ap.add_argument("--cost-runs", type=int, default=3, help="BPF cost runs per tool")
    ap.add_argument("--cost-only", action="store_true",
                    help="only the BPF cost runs: no wall-clock rounds, no loss runs")
    ap.add_argument("--base-bin", help="with --cost-only: this build's biolatency too (an A/B "
                    "of a change)")
    ap.add_argument("--peer-biosnoop", metavar="PATH",
                    help="libbpf-tools' biosnoop built elsewhere, instead of Debian's (whose "
                    "0.26 loads on none of the kernels the project tests)")
    args = ap.parse_args()
    if args.base_bin and not args.cost_only:
        die("--base-bin goes with --cost-only")
    if os.geteuid() != 0:
        die("run as root: it loads BPF programs and makes a loop device")
    tk = {n: Path(args.bin) / n for n in ("biolatency", "biosnoop")}
    peer = {n: Path("/usr/sbin") / n for n in ("biolatency", "biosnoop")}
    if args.peer_biosnoop:
        peer["biosnoop"] = Path(args.peer_biosnoop)
    for p in (*tk.values(), *peer.values()):
        if not os.access(p, os.X_OK):
            die(f"{p} is missing (make; apt-get install libbpf-tools)")

    tmp = tempfile.mkdtemp(prefix="block-bench-")
    dev = None
    try:
        build(tmp, programs=[("bio_randread", "bio_randread.c")],
              bpf=[("floor.bpf.o", "block_overhead_floor.bpf.c")])
        prog = f"{tmp}/bio_randread"
        img = f"{tmp}/loop.img"
        with open(img, "wb") as f:
            f.truncate(SIZE)
        dev = subprocess.run(["losetup", "--find", "--show", img], capture_output=True,
                             text=True, check=True).stdout.strip()
        disk = os.path.basename(dev)
        if shutil.which("udevadm"):
            subprocess.run(["udevadm", "settle", "--timeout=30"], check=False)
        subprocess.run(["dd", f"if={img}", "of=/dev/null", "bs=1M"], capture_output=True)

        hist = r"usecs.*\n(.*\n)*\s+\d+ -> \d+\s+: [1-9]"
        tracers = [
            Tracer("tracekit biolatency", [str(tk["biolatency"])], "fd", expect=hist),
            Tracer("libbpf-tools biolatency", ["stdbuf", "-oL", str(peer["biolatency"])],
                   "line", expect=hist),
            Tracer("tracekit biosnoop", [str(tk["biosnoop"])], "fd",
                   expect=rf"\s{disk}\s+R\s", drain=True),
            Tracer(FLOOR, [f"{tmp}/floor", f"{tmp}/floor.bpf.o", "floor_issue",
                           "floor_complete"], "line"),
        ]
        snoop_err = peer_error([str(peer["biosnoop"]), "-v"])
        if snoop_err is None:
            # Newer libbpf-tools show the sync flag: RS.
            tracers.append(Tracer("libbpf-tools biosnoop", ["stdbuf", "-oL",
                                                            str(peer["biosnoop"])],
                                  "line", expect=rf"\s{disk}\s+RS?\s", drain=True))
        if args.cost_only:
            # A kernel's verifier may refuse libbpf-tools' biolatency
            # (5.10: -EACCES): its row goes, and the others stay.
            lat_err = peer_error([str(peer["biolatency"])])
            if lat_err is not None:
                tracers = [t for t in tracers if t.name != "libbpf-tools biolatency"]
            if args.base_bin:
                tracers.insert(1, Tracer(f"tracekit biolatency ({args.base_bin})",
                                         [str(Path(args.base_bin) / "biolatency")], "fd",
                                         expect=hist))
            cost = cost_runs(tracers, prog, dev, args)
            print_cost_only(tracers, cost, {"biolatency": lat_err, "biosnoop": snoop_err})
            return
        base = alternate(tracers, lambda: measure(prog, dev, args.reads, args.bursts),
                         args.rounds)
        lost = {n: losses(tk[n], disk, prog, dev, args.reads) for n in tk}
        cost = cost_runs(tracers, prog, dev, args)
    finally:
        if dev:
            subprocess.run(["losetup", "--detach", dev], check=False)
        shutil.rmtree(tmp, ignore_errors=True)

    med = {t.name: statistics.median(s[1] for s in t.samples) for t in tracers}
    none = statistics.median(base)
    lines = [
        "## block I/O: biolatency and biosnoop overhead on 4 KiB O_DIRECT random reads",
        "",
        f"- Workload: `bench/bio_randread.c`, 4 KiB O_DIRECT reads at random offsets of a "
        f"{SIZE >> 20} MiB loop device whose backing file is in the page cache; "
        f"{args.rounds} rounds, each run {args.bursts} bursts of {args.reads} reads "
        "(fastest burst), timed by wall clock per read",
        "- Each tracer run sits between two untraced runs; overhead = with - mean(around); "
        "slowdown = overhead / untraced cost; medians over the rounds. All tools trace every "
        "disk with their default options; biosnoop's output goes to a pipe drained as it "
        "comes",
    ]
    if args.peer_biosnoop:
        lines.append(f"- libbpf-tools' biosnoop: `{args.peer_biosnoop}` (--peer-biosnoop), "
                     "not Debian's")
    lines += [
        "",
        "| tracer | ns/read | overhead ns/read (median) | min .. max | vs libbpf-tools "
        "biolatency |",
        "|---|---:|---:|---:|---:|",
    ]
    lines += table_rows(tracers, base, "libbpf-tools biolatency", 0)
    tk_l, lt_l = med["tracekit biolatency"], med["libbpf-tools biolatency"]
    ratio = tk_l / lt_l
    lines += [
        "",
        f"**Target: biolatency's slowdown at most half of libbpf-tools': "
        f"{'met' if ratio <= 0.5 else 'MISSED'}** (tracekit / libbpf-tools = {ratio:.2f}, "
        f"ratio of median slowdowns: tracekit {tk_l / none:+.1%}, libbpf-tools "
        f"{lt_l / none:+.1%}).",
    ]
    if snoop_err is None:
        tk_s, lt_s = med["tracekit biosnoop"], med["libbpf-tools biosnoop"]
        lines.append(f"**Target: biosnoop's slowdown at most half of libbpf-tools': "
                     f"{'met' if tk_s <= 0.5 * lt_s else 'MISSED'}** (tracekit / "
                     f"libbpf-tools = {tk_s / lt_s:.2f}: tracekit {tk_s / none:+.1%}, "
                     f"libbpf-tools {lt_s / none:+.1%}).")
    else:
        lines.append(f"Target, biosnoop's slowdown at most half of libbpf-tools': not "
                     f"measured here (tracekit's slowdown {med['tracekit biosnoop'] / none:+.1%}; "
                     f"libbpf-tools' biosnoop cannot load on this kernel: `{snoop_err}`; "
                     "its blk_account_io_start is a kernel-function probe, and this kernel "
                     "refuses fentry and has no kprobes).")
    fl = med[FLOOR]
    lines.append(f"Above the floor of two empty programs on the same tracepoints "
                 f"({fl:+.0f} ns per read: what any tracer of issue and completion pays), "
                 f"tracekit's biolatency costs {tk_l - fl:+.0f} ns per read and libbpf-tools' "
                 f"{lt_l - fl:+.0f} ns ({(tk_l - fl) / (lt_l - fl):.2f}); the target would "
                 f"need tracekit's whole overhead under {lt_l / 2:.0f} ns.")
    ns = {n: statistics.median(c for _, c in v) for n, v in cost.items()}
    lines += ["", "BPF run time per request (kernel BPF stats, BPF_ENABLE_STATS: each "
              "tool's programs' run time over one burst, divided by the runs of its "
              f"busiest program, median of {args.cost_runs} runs each: the tools' own cost, "
              "which the "
              "wall-clock overhead above shows through this shared machine's noise):", ""]
    for t in tracers:
        progs = ", ".join(f"{p} {statistics.median(v):.0f}" for p, v in sorted(t.per_prog.items()))
        lines.append(f"- {t.name}: {ns[t.name]:.0f} ns per request "
                     f"({statistics.median(r for r, _ in cost[t.name])} runs; per program, "
                     f"ns per run: {progs})")
    bl = ns["tracekit biolatency"] / ns["libbpf-tools biolatency"]
    lines += ["", f"**Target: biolatency's BPF cost per request at most half of "
              f"libbpf-tools': {'met' if bl <= 0.5 else 'MISSED'}** ({bl:.2f}: "
              f"{ns['tracekit biolatency']:.0f} vs {ns['libbpf-tools biolatency']:.0f} ns)."]
    none_lost = all(seen == args.reads and not loss["events_lost"]
                    and not loss["map_inserts_failed"] for seen, loss in lost.values())
    lines.append(f"Target, zero events lost with the default buffer: "
                 f"{'met' if none_lost else 'MISSED'} (tracekit, -j -d {disk}, one burst of "
                 f"{args.reads} reads at full speed: " + "; ".join(
                     f"{n} reported {seen}, events lost {loss['events_lost']}, map inserts "
                     f"failed {loss['map_inserts_failed']}, probe runs missed "
                     f"{loss['runs_missed']}" for n, (seen, loss) in lost.items())
                 + ").")
    lines.append("")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
