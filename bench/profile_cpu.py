#!/usr/bin/python3
"""CPU cost of tracekit's profile against a peer, on one workload, runs
alternating: each tool samples every CPU at -F HZ for SECONDS from the
moment it has attached (then SIGINT) and prints its stacks; its CPU time (user + sys of the tool process, from wait4,
so BPF loading, reading new processes and symbolizing at exit included)
is measured, with the part spent before it had attached.

Workload (built here, -O0 with frame pointers, running through all runs):
  stk-bench     tests/e2e/progs/stack_spin.c "two": one thread in
                main -> a -> b -> c, one in x -> y -> z, both spinning
  stk-manysyms  a generated program with NFUNCS functions, spinning through
                all of them (many symbols, many distinct stacks)

The peers: libbpf-tools' profile, and bpftrace's profile probe (apt-get
install bpftrace), keyed like bcc's profile (pid, comm, kernel and user
stack), idle task excluded. Debian 12's libbpf-tools (bcc 0.26) does not
ship profile; Debian 13's (0.31) does, as profile-libbpf, built against
glibc 2.38+: it is fetched once with apt-get download from trixie into
BUILD/bench/peers (with trixie's libc6, libelf1t64, zlib1g, libzstd1) and
run through that libc's own dynamic loader, untouched.

Also reports how the outputs agree: the samples each shows of the known
chains and of stk-manysyms, as a share of the samples due (HZ per second
of the thread's CPU time while the tool sampled), and how many of
stk-manysyms' samples each names by function.

  /usr/bin/python3 bench/profile_cpu.py [--runs 3] [--seconds 10] [--hz 999]
      [--nfuncs 20000] [--bin build/bin] [--peers libbpf-tools,bpftrace]
      [--base-bin OTHER/build/bin]

Prints a markdown table on stdout; progress on stderr."""
import argparse
import functools
import os
import re
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CFLAGS = ["-O0", "-fno-omit-frame-pointer", "-mno-omit-leaf-frame-pointer",
          "-fno-inline", "-pthread"]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def build(d, nfuncs):
    spin = d / "stk-bench"
    subprocess.run(["cc", *CFLAGS, "-o", str(spin), str(ROOT / "tests/e2e/progs/stack_spin.c")],
                   check=True)
    src = d / "manysyms.c"
    with open(src, "w") as f:
        f.write("typedef void fn(volatile unsigned long *);\n")
        for i in range(nfuncs):
            f.write(f"__attribute__((noinline)) void sym_{i:05d}(volatile unsigned long *x)"
                    f" {{ for (int i = 0; i < 2000; i++) *x += i; }}\n")
        f.write(f"fn *table[{nfuncs}] = {{\n")
        f.write(",\n".join(f"sym_{i:05d}" for i in range(nfuncs)))
        # x is global: its sum is the work done (bench/unwind_cpu.py reads it).
        f.write("\n};\nvolatile unsigned long x;\nint main(void) {\n"
                f"for (;;) for (int i = 0; i < {nfuncs}; i++) table[i](&x); }}\n")
    many = d / "stk-manysyms"
    subprocess.run(["cc", *CFLAGS, "-o", str(many), str(src)], check=True)
    return spin, many


def cpu_of(pid):
    """Seconds on CPU of a live process so far: its threads' schedstat
    (ns, exact; /proc/PID/stat counts ticks)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/schedstat") as f:
            total += int(f.read().split()[0])
    return total / 1e9


class Window:
    """CPU seconds of the workload's threads over the sampling window
    (from the tool's attach to SECONDS later): what each should have
    been sampled for, HZ samples per CPU second."""

    def __init__(self, threads, seconds):
        self.threads, self.seconds = threads, seconds   # {name: (pid, tid)}
        self.start = self.end = None

    def snap(self):
        out = {}
        for name, (pid, tid) in self.threads.items():
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                out[name] = int(f.read().split()[0]) / 1e9
        return out

    def cpu(self):
        return {k: self.end[k] - self.start[k] for k in self.start}


def run_tool(argv, ready, window, env=None, pass_fds=(), ok_codes=(0,)):
    """Run a tool to its end; ready(proc) returns once it has attached.
    Returns (stdout, stderr, cpu seconds at attach, total cpu seconds,
    wall seconds). window.proc is the tool's process while it runs (a
    window that reads the tool's BPF programs' statistics needs its pid).
    ok_codes: the exit codes that are success (perf record dies of the
    SIGINT it was sent: -2)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, pass_fds=pass_fds)
    window.proc = proc
    try:
        ready(proc)
        window.start, window.end = window.snap(), None
        t_end = time.monotonic() + window.seconds
        at_ready = cpu_of(proc.pid)
        out_f, err_f = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        # Drain both pipes while waiting, without threads: copy to files.
        fds = {proc.stdout.fileno(): out_f, proc.stderr.fileno(): err_f}
        while fds:
            timeout = None if window.end else max(0, t_end - time.monotonic())
            r, _, _ = select.select(list(fds), [], [], timeout)
            if not window.end and time.monotonic() >= t_end:
                # Both tools end on SIGINT, printing what they have.
                window.end = window.snap()
                proc.send_signal(signal.SIGINT)
            for fd in r:
                data = os.read(fd, 1 << 16)
                if data:
                    fds[fd].write(data)
                else:
                    del fds[fd]
        _, status, ru = os.wait4(proc.pid, 0)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    out_f.seek(0)
    err_f.seek(0)
    out, err = out_f.read().decode(errors="replace"), err_f.read().decode(errors="replace")
    if proc.returncode not in ok_codes:
        sys.exit(f"{argv[0]} failed (rc={proc.returncode}): {err}")
    return out, err, at_ready, ru.ru_utime + ru.ru_stime, wall


def tracekit(binary, hz, window, extra=()):
    rfd, wfd = os.pipe()
    env = dict(os.environ, TRACEKIT_READY_FD=str(wfd))

    def ready(proc):
        os.close(wfd)
        assert os.read(rfd, 16) == b"ready\n", "profile did not attach"
        os.close(rfd)
    argv = [str(binary), "-f", "-F", str(hz), *extra]
    out, err, at_ready, total, wall = run_tool(argv, ready, window, env, pass_fds=(wfd,))
    # What it reports lost: "profile: N stacks lost to ...", and the like.
    lost = sum(int(m[1]) for m in re.finditer(r"^profile: (\d+) (?:stacks|samples)", err, re.M))
    return parse_folded(out), at_ready, total, wall, lost


def parse_folded(out):
    """[(comm, user frames outer..inner, kernel frames outer..inner, n)]"""
    stacks = []
    for line in out.splitlines():
        stack, n = line.rsplit(" ", 1)
        comm, *frames = stack.split(";")
        # Without -d user and kernel frames are not told apart here: all
        # frames in one list, user first.
        stacks.append((comm, frames, int(n)))
    return stacks


TRIXIE_PKGS = ["libbpf-tools", "libc6", "libelf1t64", "zlib1g", "libzstd1"]


def fetch_libbpf_tools_profile(cache):
    """argv prefix that runs Debian 13's profile-libbpf, fetched once."""
    cache = cache.resolve()  # apt takes relative Dir:: paths as under /var
    root = cache / "trixie"
    lib = root / "usr/lib/x86_64-linux-gnu"
    tool = root / "usr/sbin/profile-libbpf"
    if not tool.exists():
        apt = cache / "apt"
        (apt / "lists/partial").mkdir(parents=True, exist_ok=True)
        (apt / "sources.list").write_text("deb http://deb.debian.org/debian trixie main\n")
        opts = [f"-oDir::Etc::SourceList={apt}/sources.list", "-oDir::Etc::SourceParts=/dev/null",
                f"-oDir::State::Lists={apt}/lists", f"-oDir::Cache={apt}"]
        log("fetching libbpf-tools' profile from trixie...")
        subprocess.run(["apt-get", "-qq", *opts, "update"], check=True)
        subprocess.run(["apt-get", "-qq", *opts, "download", *TRIXIE_PKGS], cwd=apt, check=True)
        for deb in apt.glob("*.deb"):
            subprocess.run(["dpkg", "-x", str(deb), str(root)], check=True)
    return [str(lib / "ld-linux-x86-64.so.2"), "--library-path", str(lib), str(tool)]


def libbpf_tools(prefix, hz, window):
    def ready(proc):
        time.sleep(1)   # it says nothing when attached with -f
    argv = [*prefix, "-f", "-F", str(hz)]
    out, err, at_ready, total, wall = run_tool(argv, ready, window)
    return parse_folded(out), at_ready, total, wall, None


BPFTRACE_PROG = (
    "profile:hz:%d /pid != 0/ { @[pid, comm, kstack(perf), ustack(perf)] = count(); }")


def bpftrace(hz, window):
    def ready(proc):
        line = proc.stdout.readline().decode()
        assert line.startswith("Attaching"), line
    argv = ["bpftrace", "-e", BPFTRACE_PROG % hz]
    # Its maps hold 4096 keys by default, and a full map drops samples
    # silently: room for as many as tracekit's.
    env = dict(os.environ, BPFTRACE_MAP_KEYS_MAX="16384")
    out, err, at_ready, total, wall = run_tool(argv, ready, window, env)
    return parse_bpftrace(out), at_ready, total, wall, None


def parse_bpftrace(out):
    """bpftrace's map print: @[pid, comm, \\n\\tADDR SYM+OFF (MOD)\\n..., ...]: N"""
    stacks = []
    for m in re.finditer(r"@\[(\d+), ([^,\n]*), (.*?)\]: (\d+)\n", out, re.S):
        # ", " ends the kernel stack; either stack may be empty.
        kstack, ustack = re.split(r"(?:^|\n), ", m[3], maxsplit=1)
        frames = []
        for part in (ustack, kstack):   # user first, each outer..inner
            names = [re.sub(r"\+\d+$", "", l.split()[1]) for l in part.splitlines()
                     if len(l.split()) >= 2]
            frames += reversed(names)
        stacks.append((m[2], frames, int(m[4])))
    return stacks


def agreement(stacks, cpu, hz):
    """Per workload thread, samples shown / samples due (HZ x its CPU
    seconds in the window); and the share of stk-manysyms' samples that
    name one of its functions."""
    def has(frames, chain):
        return f";{chain};" in ";" + ";".join(frames) + ";"
    abc = sum(n for c, f, n in stacks if c == "stk-bench" and has(f, "main;a;b;c"))
    xyz = sum(n for c, f, n in stacks if c == "stk-bench" and has(f, "x;y;z"))
    many = [(f, n) for c, f, n in stacks if c == "stk-manysyms"]
    many_n = sum(n for f, n in many)
    named = sum(n for f, n in many if any(re.fullmatch(r"sym_\d{5}", x) for x in f))
    return {"abc": abc / (hz * cpu["abc"]), "xyz": xyz / (hz * cpu["xyz"]),
            "many": many_n / (hz * cpu["many"]), "named": named / many_n if many_n else 0}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--hz", type=int, default=999)
    ap.add_argument("--nfuncs", type=int, default=20000)
    ap.add_argument("--bin", default=str(ROOT / "build/bin"))
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--peers", default="libbpf-tools,bpftrace",
                    help="which peers to run, comma-separated (bpftrace takes 2 min a run)")
    ap.add_argument("--base-bin", help="also run this build's profile, as a peer (an A/B of "
                    "two builds of tracekit in the same runs)")
    args = ap.parse_args()
    wanted = set(args.peers.split(",")) - {""}
    if wanted - {"libbpf-tools", "bpftrace"}:
        sys.exit(f"--peers: unknown {', '.join(sorted(wanted - {'libbpf-tools', 'bpftrace'}))}"
                 "; the peers are libbpf-tools and bpftrace")
    prof = Path(args.bin) / "profile"
    if not prof.exists():
        sys.exit(f"{prof} is not built; run make")
    peers = {}
    if "libbpf-tools" in wanted:
        peers["libbpf-tools"] = ("libbpf-tools profile 0.31",
                                 functools.partial(libbpf_tools, fetch_libbpf_tools_profile(
                                     Path(args.build) / "bench/peers")))
    if args.base_bin:
        base = Path(args.base_bin) / "profile"
        if not base.exists():
            sys.exit(f"--base-bin: {base} is not built")
        peers["base"] = (f"tracekit profile ({args.base_bin})",
                         lambda hz, window: tracekit(base, hz, window))
    if "bpftrace" in wanted:
        if not shutil.which("bpftrace"):
            sys.exit("no peer: apt-get install bpftrace")
        peers["bpftrace"] = ("bpftrace " + subprocess.run(
            ["bpftrace", "--version"], capture_output=True, text=True).stdout.split()[-1], bpftrace)

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        log(f"building the workload ({args.nfuncs} functions)...")
        spin, many = build(d, args.nfuncs)
        work = [subprocess.Popen([str(spin), "two", "1000000"], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True),
                subprocess.Popen([str(many)])]
        names = ["tracekit", *peers]
        results = {n: [] for n in names}
        try:
            _, pid, tid2 = work[0].stdout.readline().split()
            work[0].stdin.write("go\n")
            work[0].stdin.flush()
            threads = {"abc": (pid, pid), "xyz": (pid, tid2),
                       "many": (work[1].pid, work[1].pid)}
            time.sleep(1)
            for i in range(args.runs):
                # A rotating order: drift falls on every tool alike.
                for name in names[i % len(names):] + names[:i % len(names)]:
                    window = Window(threads, args.seconds)
                    if name == "tracekit":
                        stacks, at_ready, total, wall, lost = tracekit(prof, args.hz, window)
                    else:
                        stacks, at_ready, total, wall, lost = peers[name][1](args.hz, window)
                    agree = agreement(stacks, window.cpu(), args.hz)
                    results[name].append({"ready": at_ready, "total": total, "wall": wall,
                                          "lines": len(stacks), "lost": lost, **agree})
                    log(f"run {i + 1} {name}: cpu {total:.3f} s (at attach {at_ready:.3f} s), "
                        f"wall {wall:.1f} s, {len(stacks)} output stacks, lost {lost}, "
                        + ", ".join(f"{k} {v:.3f}" for k, v in agree.items()))
        finally:
            for w in work:
                w.kill()
                w.wait()

    def med(name, k):
        return statistics.median(r[k] for r in results[name])

    def lost(name):
        v = [r["lost"] for r in results[name]]
        return "not reported" if None in v else f"{statistics.median(v):.0f}"

    print(f"## profile: CPU time of the tool, -F {args.hz} for {args.seconds} s, "
          f"all CPUs, folded stacks\n")
    print(f"Workload on {os.cpu_count()} CPUs: stk-bench (thread 1 in main;a;b;c, thread 2 in "
          f"x;y;z) and stk-manysyms ({args.nfuncs} functions), all spinning. "
          f"{args.runs} runs of each tool, alternating; medians. "
          f"Samples are given as a share of those due: {args.hz} per second of the "
          f"thread's CPU time while the tool sampled.\n")
    print("| tool | CPU total (s) | CPU to attach (s) | CPU after attach (s) | wall (s) "
          "| output stacks | a;b;c | x;y;z | manysyms | manysyms named "
          "| stacks lost, reported |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    labels = {"tracekit": "tracekit profile", **{n: p[0] for n, p in peers.items()}}
    for name, label in labels.items():
        total, ready = med(name, "total"), med(name, "ready")
        print(f"| {label} | {total:.3f} | {ready:.3f} | {total - ready:.3f} | "
              f"{med(name, 'wall'):.1f} | {med(name, 'lines'):.0f} | "
              + " | ".join(f"{100 * med(name, k):.1f}%" for k in ("abc", "xyz", "many", "named"))
              + f" | {lost(name)} |")
    print()
    for peer in peers:
        ratio = med("tracekit", "total") / med(peer, "total")
        after = ((med("tracekit", "total") - med("tracekit", "ready")) /
                 max(med(peer, "total") - med(peer, "ready"), 1e-9))
        print(f"Ratio tracekit / {labels[peer]}, median CPU: total {ratio:.3f}, "
              f"after attach {after:.3f}.  ")
    for peer in peers:
        if peer == "bpftrace" or lost(peer) != "not reported":
            continue
        more = (med("tracekit", "total") - med(peer, "total")) * 1e3
        print(f"\ntracekit's profile spends {med('tracekit', 'total') / med(peer, 'total'):.2f}x "
              f"{labels[peer]}'s CPU ({more:+.0f} ms over the run). It names kernel "
              f"frames after attaching, by the kernel's %pB where it can (libbpf-tools reads "
              f"/proc/kallsyms before), and symbolizes "
              f"{med('tracekit', 'lines') / med(peer, 'lines'):.1f}x as many distinct stacks: "
              f"it names {100 * med('tracekit', 'named'):.0f}% of stk-manysyms' samples by "
              f"function where {labels[peer]} names {100 * med(peer, 'named'):.0f}%. "
              f"{args.nfuncs} functions' stacks in the kernel's stack map of 16384 buckets "
              f"collide: {labels[peer]} loses those stacks, prints them as "
              f"`[Missed User Stack]` and does not count them; tracekit keeps them in its "
              f"spill map, sends those it cannot keep by their frames, and loses "
              f"{lost('tracekit')} (a loss would be reported, with --stack-storage-size "
              f"or --buffer-kb to make room).")


if __name__ == "__main__":
    main()
