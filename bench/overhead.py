"""Overhead of a tracer on a workload: the shared part of
bench/syscount_overhead.py and bench/runqlat_overhead.py.

Each tracer run is bracketed by runs without a tracer, and the tracers
take turns in a rotating order, so that the drift of a shared, noisy
machine falls on all of them alike. Overhead = the workload's cost with
the tracer minus the mean of the two runs around it; medians over the
rounds."""
import os
import platform
import re
import select
import signal
import statistics
import subprocess
import sys
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def die(msg):
    print(f"{Path(sys.argv[0]).stem}: {msg}", file=sys.stderr)
    sys.exit(1)


def build(tmp, programs=(), bpf=(), floor=True):
    """Build C programs (name, source in bench/) and BPF objects (name,
    source in bench/) into tmp, and the floor's loader (tmp/floor) unless
    floor is False."""
    cc, clang = os.environ.get("CC", "cc"), os.environ.get("CLANG", "clang")
    arch = platform.machine()
    bpf_arch = {"x86_64": "x86", "aarch64": "arm64"}.get(arch, arch)
    vmlinux = ROOT / "vmlinux" / {"aarch64": "arm64"}.get(arch, arch)
    cmds = [[cc, "-O2", "-Wall", "-o", f"{tmp}/{name}", str(HERE / src)]
            for name, src in programs]
    cmds += [[clang, "-O2", "-g", "-target", "bpf", f"-D__TARGET_ARCH_{bpf_arch}",
              f"-I{vmlinux}", "-c", str(HERE / src), "-o", f"{tmp}/{name}"]
             for name, src in bpf]
    if floor:
        cmds.append([cc, "-O2", "-Wall", "-o", f"{tmp}/floor", str(HERE / "floor_loader.c"),
                     "-Wl,-Bstatic", "-lbpf", "-Wl,-Bdynamic", "-lelf", "-lz"])
    for cmd in cmds:
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            die(f"build failed: {' '.join(cmd)}\n{r.stderr}")


class Tracer:
    """A tracer process, started and waited on until it has attached.
    "{pid}" in its argv (and expect) is the pid given to start(): a
    workload spawned before it (alternate's spawn). drain: its stdout is
    read all along once it is ready (a tracer printing every event must
    not block on a full pipe), by a thread of this process."""

    def __init__(self, name, argv, ready, env=None, expect=None, drain=False):
        self.name, self.argv, self.ready = name, argv, ready
        self.env = dict(os.environ, **(env or {}))
        self.expect = expect  # regexp its final output must match
        self.drain = drain
        self.samples = []
        self.proc = None
        self.out = ""
        self.pid = None

    def start(self, pid=None):
        self.pid = pid
        argv = [a.replace("{pid}", str(pid)) for a in self.argv] if pid else self.argv
        pass_fds = ()
        if self.ready == "fd":
            rfd, wfd = os.pipe()
            self.env["TRACEKIT_READY_FD"] = str(wfd)
            pass_fds = (wfd,)
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=self.env,
                                     pass_fds=pass_fds)
        if self.ready == "fd":
            os.close(wfd)
            src = rfd
        else:  # on stdout: any line ("line": libbpf-tools' banner), or one
            # matching the regexp self.ready (bpftrace's BEGIN, after attach)
            src = self.proc.stdout.fileno()
        got = b""
        want = re.compile(b"\n" if self.ready in ("fd", "line") else
                          self.ready.encode() + b".*\n")
        while not want.search(got):
            r, _, _ = select.select([src], [], [], 60)
            chunk = os.read(src, 4096) if r else b""
            if not chunk:
                self.proc.kill()
                _, err = self.proc.communicate()
                die(f"{self.name} did not start: {err.decode(errors='replace')}")
            got += chunk
        if self.ready == "fd":
            os.close(rfd)
        self.out = got.decode(errors="replace")
        self.drained = []
        self.drainer = None
        if self.drain:
            self.drainer = threading.Thread(target=self._drain, daemon=True)
            self.drainer.start()

    def _drain(self):
        fd = self.proc.stdout.fileno()
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return
            self.drained.append(chunk)

    def _communicate(self, timeout):
        """(stdout, stderr) once it has exited, as Popen.communicate."""
        if not self.drainer:
            return self.proc.communicate(timeout=timeout)
        self.proc.wait(timeout)
        self.drainer.join()
        return b"".join(self.drained), self.proc.stderr.read()

    def stop(self):
        """SIGINT; again after 5 s (bpftrace 0.17 now and then misses the
        first); the tracer's output must then show the workload."""
        self.proc.send_signal(signal.SIGINT)
        try:
            out, err = self._communicate(5)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGINT)
            try:
                out, err = self._communicate(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                out, err = self._communicate(None)
                die(f"{self.name} did not end on SIGINT:\n{err.decode(errors='replace')}")
        self.out += out.decode(errors="replace")
        self.err = err.decode(errors="replace")
        expect = self.expect and self.expect.replace("{pid}", str(self.pid))
        if expect and not re.search(expect, self.out, re.M):
            die(f"{self.name} did not see the workload:\n{self.out}{self.err}")


def alternate(tracers, measure, rounds, spawn=None):
    """Run measure() (the workload's cost) with each tracer attached, in
    rotating order, each between two runs without a tracer. Fills each
    tracer's samples with (cost, cost - mean(around)); returns the costs
    without a tracer. With spawn: each run first spawns its workload
    (spawn() returns it, with its pid), a tracer is then started with
    that pid (Tracer's "{pid}"), and measure(workload) runs it."""
    def run(t=None):
        w = spawn() if spawn else None
        if t:
            t.start(w.pid if w else None)
        cost = measure(w) if spawn else measure()
        if t:
            t.stop()
        return cost

    run()  # warm up
    prev = run()
    base = [prev]
    for rnd in range(rounds):
        k = rnd % len(tracers)
        for t in tracers[k:] + tracers[:k]:
            with_t = run(t)
            after = run()
            base.append(after)
            t.samples.append((with_t, with_t - (prev + after) / 2))
            prev = after
        print(f"round {rnd + 1}/{rounds}: " + ", ".join(
            f"{t.name} {t.samples[-1][1]:+.1f}" for t in tracers), file=sys.stderr)
    return base


def table_rows(tracers, base, ref, digits):
    """Markdown rows: none, then each tracer's cost, median overhead, its
    range, and the ratio of its median overhead to ref's."""
    med = {t.name: statistics.median(s[1] for s in t.samples) for t in tracers}
    rows = [f"| none | {statistics.median(base):.{digits}f} | | | |"]
    for t in tracers:
        ov = [s[1] for s in t.samples]
        rows.append(f"| {t.name} | {statistics.median(s[0] for s in t.samples):.{digits}f} | "
                    f"{med[t.name]:+.{digits}f} | {min(ov):+.{digits}f} .. "
                    f"{max(ov):+.{digits}f} | {med[t.name] / med[ref]:.2f} |")
    return rows
