#!/usr/bin/python3
"""What --unwind costs: tracekit's profile with --unwind fp, auto (the
default) and cfi, and perf record --call-graph dwarf + perf script, on one
workload, runs alternating with runs of no tool at all; medians.

Each contender samples every CPU at -F HZ for SECONDS from the moment it
has attached (tracekit: TRACEKIT_READY_FD; perf: started with its events
disabled, enabled through --control and acknowledged), then SIGINT. perf
then runs `perf script` on what it recorded (its unwinding happens there).

The workload: bench/profile_cpu.py's (stk-bench: one thread in
main;a;b;c, one in x;y;z; stk-manysyms: 20000 functions called from
main), and stk-nofp, tests/e2e/progs/unwind_chain.c built -O2
-fomit-frame-pointer as tests/e2e/test_unwind.py builds it, spinning in
main;chain_a;chain_b;chain_c. Each counts its work in a global, read
from /proc/PID/mem at both ends of the window.

Measured for each run:
- the tool's CPU: user + sys of its process (wait4); for perf, perf
  record's and perf script's, both.
- the BPF programs' run time: kernel.bpf_stats_enabled is set for the
  bench (restored after) and run_time_ns of the tool's programs (the kernel's
  counters that bpftool prog show prints, read from the fdinfo of the
  tool's program fds) at both ends of the window. It is spent
  in the sampled tasks' interrupts, not in the tool's CPU.
- the workload's loss: the work its threads did per second of their own
  CPU time, against the runs without a tool. This kernel has no
  IRQ_TIME_ACCOUNTING: an interrupt's time (the sampling, BPF, perf's copy
  of 8 KiB of user stack per sample) is charged to the task it
  interrupts, so work per CPU second falls by what the interrupts cost,
  for every contender alike. Also the work per wall second, which falls
  by the tool's own CPU too (4 spinners on 2 CPUs).
- stacks right: of each workload thread's samples, the share that shows
  its whole chain (main;a;b;c, x;y;z, main;sym_NNNNN, main;chain_a;
  chain_b;chain_c); and samples got against those due (HZ per second of
  the threads' CPU time).

  /usr/bin/python3 bench/unwind_cpu.py [--runs 3] [--seconds 10] [--hz 999]
      [--nfuncs 20000] [--bin build/bin]

Prints a markdown table on stdout; progress on stderr."""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import profile_cpu as pc  # noqa: E402

ROOT = pc.ROOT
NOFP_CFLAGS = ["-O2", "-fomit-frame-pointer"]   # test_unwind.py's "nofp" build
MODES = ["fp", "auto", "cfi"]
# Per workload thread: its full chain, as a regex over ";frame;frame;...;".
CHAINS = {
    "abc": ("stk-bench", r";main;a;b;c;", "main;a;b;c"),
    "xyz": ("stk-bench", r";x;y;z;", "x;y;z"),
    "many": ("stk-manysyms", r";main;sym_\d{5};", "main;sym_N (stk-manysyms)"),
    "nofp": ("stk-nofp", r";main;chain_a;chain_b;chain_c;",
             "main;chain_a;chain_b;chain_c (-O2 -fomit-frame-pointer)"),
}
# stk-bench's two threads share a comm; in tracekit's folded output (per
# process, not per thread) a sample is told by its frames.
THREAD_FRAMES = {"abc": {"main", "a", "b", "c"}, "xyz": {"second", "x", "y", "z"}}
log = pc.log


class Work:
    """A global counter of a live workload process, read through
    /proc/PID/mem: its value / unit is the work done so far."""

    def __init__(self, pid, binary, symbol, unit):
        syms = subprocess.run(["nm", "--defined-only", str(binary)], capture_output=True,
                              text=True, check=True).stdout
        value = next(int(l.split()[0], 16) for l in syms.splitlines()
                     if l.split()[-1] == symbol)
        real = os.path.realpath(binary)
        with open(f"/proc/{pid}/maps") as f:
            base = next(int(l.split("-")[0], 16) for l in f
                        if l.split()[-1] == real and int(l.split()[2], 16) == 0)
        self.fd = os.open(f"/proc/{pid}/mem", os.O_RDONLY)
        self.addr, self.unit = base + value, unit

    def read(self):
        return int.from_bytes(os.pread(self.fd, 8, self.addr), "little") / self.unit


def bpf_stats(pid):
    """run_time_ns and run_cnt summed over the BPF programs that pid holds
    open: the kernel's counters (those bpftool prog show prints), from
    the fdinfo of its program fds, each program once."""
    progs = {}
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                info = dict(l.split(":", 1) for l in f if ":" in l)
        except FileNotFoundError:
            continue
        if "run_time_ns" in info:   # a program (a link names one too)
            progs[int(info["prog_id"])] = (int(info["run_time_ns"]), int(info["run_cnt"]))
    return {"bpf_ns": sum(t for t, _ in progs.values()),
            "bpf_cnt": sum(n for _, n in progs.values()), "bpf_progs": len(progs)}


class Window(pc.Window):
    """profile_cpu's window (the threads' CPU time), with the work counters,
    the time, and the tool's BPF statistics (bpf=True) at both ends."""

    def __init__(self, threads, seconds, work, bpf):
        super().__init__(threads, seconds)
        self.work, self.bpf, self.proc = work, bpf, None
        self.progs = 0

    def snap(self):
        out = super().snap()
        out.update({f"work_{k}": w.read() for k, w in self.work.items()})
        out["t"] = time.monotonic()
        if self.bpf:
            stats = bpf_stats(self.proc.pid)
            self.progs = stats.pop("bpf_progs")
            out.update(stats)
        return out


def none(window):
    """No tool: the window alone."""
    window.start = window.snap()
    time.sleep(window.seconds)
    window.end = window.snap()
    return {"tool": 0.0, "ready": 0.0}, []


def tracekit(binary, mode, hz, window):
    stacks, at_ready, total, wall, lost = pc.tracekit(binary, hz, window, ["--unwind", mode])
    samples = []
    for comm, frames, n in stacks:
        thread = {"stk-manysyms": "many", "stk-nofp": "nofp"}.get(comm)
        if comm == "stk-bench":
            who = [t for t, names in THREAD_FRAMES.items() if names & set(frames)]
            thread = who[0] if len(who) == 1 else "abc|xyz"
        samples.append((thread, frames, n))
    return {"tool": total, "ready": at_ready, "lost": lost, "lines": len(stacks),
            "progs": window.progs, "out": sum(n for _, _, n in stacks)}, samples


def perf(hz, window, d, tids):
    data = d / "perf.data"
    ctl_r, ctl_w = os.pipe()
    ack_r, ack_w = os.pipe()
    argv = ["perf", "record", "-F", str(hz), "-a", "--call-graph", "dwarf", "-o", str(data),
            "-D", "-1", f"--control=fd:{ctl_r},{ack_w}"]

    def ready(proc):
        os.close(ctl_r)
        os.close(ack_w)
        os.write(ctl_w, b"enable\n")
        assert os.read(ack_r, 16).startswith(b"ack"), "perf record did not enable its events"
    try:
        _, err, at_ready, record, _ = pc.run_tool(argv, ready, window,
                                                  pass_fds=(ctl_r, ack_w), ok_codes=(0, -2))
    finally:
        os.close(ctl_w)
        os.close(ack_r)
    size = data.stat().st_size
    with tempfile.TemporaryFile("w+") as f:
        proc = subprocess.Popen(["perf", "script", "-i", str(data), "-F", "comm,tid,ip,sym"],
                                stdout=f, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"perf script failed (rc={os.waitstatus_to_exitcode(status)})")
        f.seek(0)
        samples = parse_perf_script(f, tids)
    data.unlink()
    lost = sum(int(m[1]) for m in re.finditer(r"lost (\d+) (?:chunks|samples)", err))
    m = re.search(r"\((\d+) samples\)", err)
    script = ru.ru_utime + ru.ru_stime
    return {"tool": record + script, "record": record, "script": script, "ready": at_ready,
            "lost": lost, "lines": int(m[1]) if m else None, "mb": size / 2**20}, samples


def parse_perf_script(f, tids):
    """perf script -F comm,tid,ip,sym: a line "comm tid", then one line
    per frame, innermost first, a blank line after each sample.
    Returns [(thread, frames outer..inner, 1)] for the workload's tids."""
    samples, tid, frames = [], None, []
    for line in f:
        if line.startswith("\t"):
            parts = line.split(None, 1)
            if len(parts) == 2:
                frames.append(parts[1].strip().removesuffix(" (inlined)"))
        elif line.strip():
            tid, frames = int(line.split()[-1]), []
        elif tid is not None:
            if tid in tids:
                samples.append((tids[tid], frames[::-1], 1))
            tid = None
    if tid is not None and tid in tids:
        samples.append((tids[tid], frames[::-1], 1))
    return samples


def stacks_right(samples, cpu, hz):
    """Per thread: share of its samples with its whole chain; and all the
    threads' samples against those due."""
    out, got = {}, 0
    for t, (_, chain, _) in CHAINS.items():
        mine = [(f, n) for th, f, n in samples if th == t or (th == "abc|xyz" and t in th)]
        total = sum(n for _, n in mine)
        right = sum(n for f, n in mine if re.search(chain, ";" + ";".join(f) + ";"))
        out[t] = right / total if total else 0.0
    got = sum(n for th, _, n in samples if th)
    out["got"] = got / (hz * sum(cpu[t] for t in CHAINS))
    return out


def build(d, nfuncs):
    spin, many = pc.build(d, nfuncs)
    nofp = d / "stk-nofp"
    subprocess.run(["cc", *NOFP_CFLAGS, "-o", str(nofp),
                    str(ROOT / "tests/e2e/progs/unwind_chain.c")], check=True)
    return spin, many, nofp


def start_workload(spin, many, nofp, nfuncs):
    """The three programs, spinning; returns (processes, threads, work)."""
    work = [subprocess.Popen([str(spin), "two", "1000000"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True),
            subprocess.Popen([str(many)]),
            subprocess.Popen([str(nofp), "spin", "1000000"], stdout=subprocess.PIPE, text=True)]
    _, pid, tid2 = work[0].stdout.readline().split()
    work[0].stdin.write("go\n")
    work[0].stdin.flush()
    assert work[2].stdout.readline() == "ready\n"
    pid, tid2 = int(pid), int(tid2)
    threads = {"abc": (pid, pid), "xyz": (pid, tid2),
               "many": (work[1].pid, work[1].pid), "nofp": (work[2].pid, work[2].pid)}
    time.sleep(1)   # past start-up (the loader, libc's)
    counters = {
        # c() and z() count rounds of 2,000,000 additions.
        "abc": Work(pid, spin, "c_rounds", 1), "xyz": Work(pid, spin, "z_rounds", 1),
        # x gains 0 + 1 + ... + 1999 per function called.
        "many": Work(work[1].pid, many, "x", 1999 * 2000 // 2),
        # sink gains 0 + 1 + ... + 99999 per round of chain_c's loop.
        "nofp": Work(work[2].pid, nofp, "sink", 99999 * 100000 // 2),
    }
    return work, threads, counters


def set_bpf_stats(value):
    path = Path("/proc/sys/kernel/bpf_stats_enabled")
    old = path.read_text().strip()
    path.write_text(f"{value}\n")
    return old


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--hz", type=int, default=999)
    ap.add_argument("--nfuncs", type=int, default=20000)
    ap.add_argument("--bin", default=str(ROOT / "build/bin"))
    args = ap.parse_args()
    prof = Path(args.bin) / "profile"
    if not prof.exists():
        sys.exit(f"{prof} is not built; run make")
    for need, pkg in (("perf", "linux-perf"), ("nm", "binutils")):
        if not shutil.which(need):
            sys.exit(f"no {need}: apt-get install {pkg}")
    perf_version = subprocess.run(["perf", "--version"], capture_output=True,
                                  text=True).stdout.split()[-1]
    names = ["none", *MODES, "perf"]
    results = {n: [] for n in names}

    old_stats = set_bpf_stats(1)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        log(f"building the workload ({args.nfuncs} functions)...")
        spin, many, nofp = build(d, args.nfuncs)
        work, threads, counters = start_workload(spin, many, nofp, args.nfuncs)
        tids = {tid: name for name, (_, tid) in threads.items()}
        try:
            for i in range(args.runs):
                # A rotating order: drift falls on every contender alike.
                for name in names[i % len(names):] + names[:i % len(names)]:
                    window = Window(threads, args.seconds, counters, name in MODES)
                    if name == "none":
                        r, samples = none(window)
                    elif name == "perf":
                        r, samples = perf(args.hz, window, d, tids)
                    else:
                        r, samples = tracekit(prof, name, args.hz, window)
                    delta = window.cpu()
                    r["cpu"] = {t: delta[t] for t in CHAINS}
                    r["work"] = {t: delta[f"work_{t}"] for t in CHAINS}
                    r["secs"] = delta["t"]
                    r["bpf"] = delta.get("bpf_ns", 0) / 1e9
                    r["bpf_cnt"] = delta.get("bpf_cnt", 0)
                    if name != "none":
                        r.update(stacks_right(samples, r["cpu"], args.hz))
                    results[name].append(r)
                    log(f"run {i + 1} {name}: tool cpu {r['tool']:.3f} s, bpf {r['bpf']:.3f} s "
                        f"({r['bpf_cnt']} runs; {r.get('out')} samples out), "
                        f"window {r['secs']:.2f} s, "
                        + ", ".join(f"{t} {r['work'][t] / r['cpu'][t]:.1f}/cpu-s" for t in CHAINS)
                        + ("" if name == "none" else ", right "
                           + ", ".join(f"{t} {100 * r[t]:.1f}%" for t in CHAINS)
                           + f", got/due {100 * r['got']:.1f}%"))
        finally:
            for w in work:
                w.kill()
                w.wait()
            set_bpf_stats(old_stats)
    report(args, results, perf_version)


def report(args, results, perf_version):
    # The workload's rate per CPU second without a tool, per thread.
    rate0 = {t: statistics.median(r["work"][t] / r["cpu"][t] for r in results["none"])
             for t in CHAINS}
    for runs in results.values():
        for r in runs:
            cpu = sum(r["cpu"].values())
            useful = sum(r["work"][t] / rate0[t] for t in CHAINS)
            r["wcpu"] = cpu
            r["lost_task"] = cpu - useful            # CPU s of the workload's own time
            r["lost_per_sample"] = r["lost_task"] / (args.hz * cpu)   # per sample due
            r["lost_share"] = r["lost_task"] / cpu
            r["per_wall"] = useful / r["secs"]       # CPU s of work per second
    wall0 = statistics.median(r["per_wall"] for r in results["none"])

    def med(name, k):
        return statistics.median(r[k] for r in results[name])

    def rng(name, k, scale=1.0, fmt=".3f"):
        v = [r[k] * scale for r in results[name]]
        return f"{min(v):{fmt}}..{max(v):{fmt}}"

    labels = {"none": "no tool", **{m: f"tracekit profile --unwind {m}" for m in MODES},
              "perf": f"perf record --call-graph dwarf + perf script ({perf_version})"}
    print(f"## --unwind: CPU and stacks right, profile -F {args.hz} for {args.seconds} s "
          f"against perf --call-graph dwarf\n")
    print(f"Workload on {os.cpu_count()} CPUs, all spinning: stk-bench (thread 1 in main;a;b;c, "
          f"thread 2 in x;y;z; -O0 with frame pointers), stk-manysyms ({args.nfuncs} functions "
          f"called from main, with frame pointers) and stk-nofp (tests/e2e/progs/"
          f"unwind_chain.c built {' '.join(NOFP_CFLAGS)}, in main;chain_a;chain_b;chain_c). "
          f"{args.runs} runs of each contender and of no tool, in a rotating order; medians. "
          f"tracekit: `profile -f -F {args.hz} --unwind MODE`; perf: `perf record -F {args.hz} "
          f"-a --call-graph dwarf -o FILE` (8 KiB of user stack per sample), then "
          f"`perf script -i FILE -F comm,tid,ip,sym`. Made by `bench/unwind_cpu.py` "
          f"(`make bench-unwind`).\n")
    print("| contender | tool CPU (s) | of it, perf script (s) | BPF run time (s) "
          "| tool + BPF (s) | workload's CPU in the window (s) "
          "| workload CPU lost in its own time (s) | the same per sample (ns) | work per CPU s "
          "| work per wall s | samples got / due | main;a;b;c | x;y;z | main;sym_N "
          "| main;chain_a;chain_b;chain_c (no frame pointers) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in results:
        row = [labels[name]]
        if name == "none":
            row += ["—", "—", "—", "—", f"{med(name, 'wcpu'):.2f}",
                    f"{med(name, 'lost_task'):+.3f} ({rng(name, 'lost_task', fmt='+.3f')})",
                    f"{1e9 * med(name, 'lost_per_sample'):+.0f} "
                    f"({rng(name, 'lost_per_sample', 1e9, '+.0f')})", "100%", "100%",
                    "—", "—", "—", "—", "—"]
        else:
            tool, bpf = med(name, "tool"), med(name, "bpf")
            row += [f"{tool:.3f} ({rng(name, 'tool')})",
                    f"{med(name, 'script'):.3f}" if name == "perf" else "—",
                    f"{bpf:.3f}" if name != "perf" else "not visible",
                    f"{statistics.median(r['tool'] + r['bpf'] for r in results[name]):.3f}"
                    if name != "perf" else "—",
                    f"{med(name, 'wcpu'):.2f}",
                    f"{med(name, 'lost_task'):+.3f} ({rng(name, 'lost_task', fmt='+.3f')})",
                    f"{1e9 * med(name, 'lost_per_sample'):+.0f} "
                    f"({rng(name, 'lost_per_sample', 1e9, '+.0f')})",
                    f"{100 * (1 - med(name, 'lost_share')):.1f}%",
                    f"{100 * med(name, 'per_wall') / wall0:.1f}%",
                    f"{100 * med(name, 'got'):.1f}%"]
            row += [f"{100 * med(name, t):.1f}%" for t in CHAINS]
        print("| " + " | ".join(row) + " |")
    print()

    def both(name):   # tool CPU + BPF run time, per run
        return statistics.median(r["tool"] + r["bpf"] for r in results[name])
    fp, auto, cfi = both("fp"), both("auto"), both("cfi")
    ratio = auto / fp
    verdict = "met" if ratio <= 1.5 else "MISSED"
    print(f"**Target: CPU of the default (--unwind auto) at most 1.5x the frame-pointer walk's "
          f"(tool + BPF): {verdict}** ({ratio:.2f}x: {auto:.3f} s against {fp:.3f} s; "
          f"--unwind cfi {cfi / fp:.2f}x, {cfi:.3f} s).  ")
    perf_tool = med("perf", "tool")
    print(f"perf record + perf script: {perf_tool:.3f} s of CPU "
          f"({med('perf', 'record'):.3f} s record, {med('perf', 'script'):.3f} s script; "
          f"{perf_tool / auto:.1f}x tracekit's default), "
          f"{med('perf', 'mb'):.0f} MiB recorded; and {med('perf', 'lost_task'):+.3f} s of the "
          f"workload's own CPU against {med('auto', 'lost_task'):+.3f} s under --unwind auto.  ")
    print(f"BPF programs per tracekit run: {results['auto'][0]['progs']}; runs (samples) in the "
          f"window, median: " + ", ".join(f"{m} {med(m, 'bpf_cnt'):.0f}" for m in MODES)
          + "; BPF time per run: " + ", ".join(
              f"{m} {1e9 * med(m, 'bpf') / max(med(m, 'bpf_cnt'), 1):.0f} ns" for m in MODES)
          + ". Stacks reported lost (tracekit: its stderr; perf: lost chunks): "
          + ", ".join(f"{m} {med(m, 'lost'):.0f}" for m in [*MODES, "perf"]) + ".\n")
    print("How each figure was obtained:\n")
    print("- tool CPU: user + sys from wait4 of the tool's process (tracekit: from its start, "
          "BPF loading and the unwinding and symbolizing at exit included; perf: perf record's "
          "and then perf script's, both). Range over the runs in brackets.")
    print("- BPF run time: kernel.bpf_stats_enabled=1 for the bench (restored after); the "
          "run_time_ns of the programs the tool's process holds (the counters bpftool prog show "
          "prints, from /proc/PID/fdinfo of its program fds), "
          "read when the window opens and before the SIGINT, subtracted. It runs in the sampled "
          "tasks' interrupts and is not in the tool's CPU. perf's kernel side (copying 8 KiB of "
          "user stack and the registers into its ring buffer per sample) has no such counter.")
    print("- workload CPU lost in its own time: each workload thread counts its work (a global "
          "read from /proc/PID/mem at both ends of the window); its CPU time is from "
          "/proc/PID/task/TID/schedstat. This kernel has no IRQ_TIME_ACCOUNTING, so time in "
          "interrupts (the sampling itself, BPF, perf's copy) is charged to the task it "
          "interrupted: CPU time minus work / (work per CPU second without a tool) is the "
          "threads' CPU that went elsewhere, the same measure for every contender. The no-tool "
          "row's range is the noise of this figure (other jobs share the machine's caches). "
          "Per sample: that CPU over the samples due in the window (the -F rate per CPU second of the "
          "workload), comparable with the BPF time per run below. The BPF run time column is "
          "that of every sample on the machine, other jobs' too; the workload's share of it is "
          "its CPU in the window over the CPUs x the window's seconds. "
          "Work per CPU s: 100% minus that share. Work per wall s: the work done per second of "
          "the window against no tool; it falls by the tool's own CPU too (the spinners fill "
          "both CPUs).")
    print("- stacks right: of each thread's samples, the share that shows its whole chain, "
          "consecutive. perf: samples by thread id. tracekit's folded output is per process: "
          "stk-bench's samples are given to a thread by its functions (main, a, b, c / second, "
          "x, y, z); a sample with neither counts against both. Samples got / due: the four "
          f"threads' samples against {args.hz} per second of their CPU time in the window; tracekit's "
          "output also holds the samples taken between its attach and the window's start and "
          "after the SIGINT until it detaches, so its figure can pass 100% (the BPF runs in the "
          "window are the samples in it).")


if __name__ == "__main__":
    main()
