#!/usr/bin/python3
"""Start-up time to attached, peak RSS and binary size of each tracekit
tool against its libbpf-tools twin (Debian's libbpf-tools, /usr/sbin) and
bpftrace's script of the same name (/usr/sbin/NAME.bt) where there is one.

Each tool runs RUNS times; in each round every tool is run by each project
in turn, the order rotated from round to round, so that the drift of a
shared machine falls on all alike. Medians are reported.

Start-up: wall time from spawning the tool to the moment it has attached.
Its stdin, stdout and stderr are a pseudo-terminal (pty.openpty), so that
it writes as at a terminal (line-buffered), and readiness is the first
complete line it writes there: tracekit's "Tracing... Hit Ctrl-C to end."
(stderr, only when it is a tty) or its header, and libbpf-tools' banner or
header, are all printed once the programs are attached. bpftrace prints
"Attaching N probes..." before it attaches them, so for bpftrace it is the
first line after that one that is not one of its diagnostics ("WARNING:",
"ERROR:", "create_probe_event:", "FILE:LINE:"): the BEGIN block's printf,
run once the probes are attached. tracekit runs without
TRACEKIT_READY_FD, like the others. This is checked on every run: at that
line, and again after the idle time, the tool's attachments are counted
(its /proc/PID/fd entries that are "anon_inode:bpf_link" or
"anon_inode:[perf_event]": BPF links, and the perf events bpftrace
attaches programs to through ioctl; perf buffers' events are counted
too); a run whose count still grows after its line is flagged in the
output. libbpf-tools' offcputime prints nothing until it ends: for
offcputime both projects are timed instead to the moment the count of
those fds reached the value it then keeps (/proc/PID/fd polled every
2 ms, unchanged for 200 ms). bpftrace going on without probes it could
not attach ("WARNING: could not attach probe ..., skipping") is marked.

Then the tool runs idle for IDLE seconds, gets SIGINT, and is reaped with
wait4: peak RSS (ru_maxrss) and CPU time (user + sys). A tool that exits
before it is ready or before the SIGINT did not attach: its row says so,
with the first line it printed. One that has not ended 3 s after the
SIGINT gets a second one, as at a terminal, and is reported; one still
there 15 s later is killed and reported.

ru_maxrss counts the mm the process had before its exec (the kernel
keeps its high-water mark at exec): spawned from Python, every tool would
show at least Python's RSS. So each tool is forked by a small static
helper (built here with cc) whose child execs it, and is reaped by this
script as its child subreaper; the floor is then the helper's few hundred
KiB, and it adds about a millisecond to every start-up time alike.

Binary size: each executable as shipped, and stripped (a copy, `strip`);
Debian's libbpf-tools are stripped already. Both link libbpf statically.
bpftrace's size is /usr/bin/bpftrace's plus that of the shared libraries
it loads (ldd) that no tracekit tool loads (libLLVM, libclang-cpp,
libbcc, ...), which it cannot run without.

  sudo /usr/bin/python3 bench/startup.py [--runs 7] [--bin build/bin]
      [--tools execsnoop,syscount] [--idle 1]

Environment: TRACEKIT_BIN (default for --bin; else build/bin),
LIBBPF_TOOLS (default /usr/sbin). Needs root, cc, libbpf-tools, bpftrace.
Prints a markdown section on stdout (for bench/results.py startup);
progress on stderr."""
import argparse
import ctypes
import errno
import os
import pty
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

from peers import attachments

ROOT = Path(__file__).resolve().parents[1]
BPFTRACE_DIR = Path("/usr/sbin")

# name: (tracekit args, libbpf-tools args, bpftrace script or None, how
# readiness is seen: "line", or "fds" for a tool that prints nothing until
# it ends). "{pid}" is a sleeping process, for the uprobe tool. Same
# semantics on each side: all processes, default options; funclatency
# times libc's getpid() in that process through a uprobe (both spell it
# c:getpid). Kernel-function tools need kprobes or fentry: tcpconnect and
# vfsstat may not attach.
TOOLS = {
    "execsnoop":   ([], [], "execsnoop.bt", "line"),
    "opensnoop":   ([], [], "opensnoop.bt", "line"),
    "syscount":    ([], [], "syscount.bt", "line"),
    "runqlat":     ([], [], "runqlat.bt", "line"),
    # libbpf-tools' offcputime prints nothing until it ends: both timed by fds.
    "offcputime":  ([], [], None, "fds"),
    "funclatency": (["-p", "{pid}", "c:getpid"], ["-p", "{pid}", "c:getpid"], None, "line"),
    "tcpconnect":  ([], [], "tcpconnect.bt", "line"),
    "vfsstat":     ([], [], "vfsstat.bt", "line"),
}
PROJECTS = ("tracekit", "libbpf-tools", "bpftrace")
READY_TIMEOUT = 30     # s from spawn to the readiness line
POLL = 0.002           # s between looks at the fds of a tool timed by them
SETTLED = 0.2          # s its attachments must stay unchanged
# bpftrace's diagnostics, which are not its BEGIN block's output.
BPFTRACE_NOISE = re.compile(r"^(WARNING|ERROR): |^create_probe_event: |^\S+:\d+(-\d+)?: ")
RESEND_AFTER = 3       # s from SIGINT to a second SIGINT, if it has not ended
EXIT_TIMEOUT = 15      # s from that to SIGKILL

# spawn FD ARGV...: forks; the child execs ARGV and the parent writes its
# pid on FD and exits, leaving the child to this script (its subreaper).
HELPER_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	char buf[32];
	int fd;
	pid_t pid;
	if (argc < 3)
		return 2;
	fd = atoi(argv[1]);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		close(fd);
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		_exit(127);
	}
	return write(fd, buf, snprintf(buf, sizeof(buf), "%d\n", (int)pid)) > 0 ? 0 : 1;
}
"""


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def die(msg):
    print(f"startup: {msg}", file=sys.stderr)
    sys.exit(1)


def build_helper(d):
    src, exe = d / "spawn.c", d / "spawn"
    src.write_text(HELPER_C)
    r = subprocess.run(["cc", "-O2", "-static", "-o", str(exe), str(src)],
                       capture_output=True, text=True)
    if r.returncode:   # no static libc: a dynamic one, a little bigger
        r = subprocess.run(["cc", "-O2", "-o", str(exe), str(src)],
                           capture_output=True, text=True)
    if r.returncode:
        die(f"cannot build the spawn helper: {r.stderr.strip()}")
    return exe


class Run:
    """One run of one tool: spawn on a pty, wait for the readiness line,
    idle, SIGINT, reap."""

    def __init__(self, argv, how, idle, helper):
        """how: "line", "bpftrace" (the first line after "Attaching N
        probes..." that is not a diagnostic) or "fds" (attachments)."""
        self.argv, self.how, self.idle, self.helper = argv, how, idle, helper
        self.buf = b""
        self.ready = self.rss = self.cpu = self.error = self.hwm = self.vmrss = None
        self.links_ready = self.links_idle = self.links_attaching = None
        self.attaching = None   # s from spawn to bpftrace's "Attaching N probes..."
        self.line = ""
        self.nlines = 0
        self.resent = None   # why a second SIGINT was sent: the state before it
        self.hung = None     # why it was killed: its state then
        self.skipped = []    # probes bpftrace could not attach and went on without

    def lines(self):
        return [l.rstrip("\r") for l in self.buf.decode(errors="replace").split("\n")]

    def drain(self, master, timeout):
        """Read what the tool wrote, for up to timeout s; False at EOF."""
        r, _, _ = select.select([master], [], [], max(0, timeout))
        if not r:
            return True
        try:
            data = os.read(master, 1 << 16)
        except OSError as e:
            if e.errno != errno.EIO:
                raise
            data = b""
        self.buf += data
        return bool(data)

    def first_error(self):
        """The first line of its error: warnings and notices left out
        (bpftrace's about RLIMIT_MEMLOCK, which it does not need on this
        kernel, its "WARNING:" lines and "Attaching N probes...")."""
        lines = [l.strip() for l in self.lines() if l.strip()]
        for l in lines:
            if not (re.match(r"ERROR: .*couldn't set RLIMIT_MEMLOCK", l) or "WARNING:" in l
                    or re.match(r"Attaching \d+ probes", l)):
                return l
        return lines[0] if lines else "(no output)"

    def go(self):
        master, slave = pty.openpty()
        rfd, wfd = os.pipe()
        env = {k: v for k, v in os.environ.items() if k != "TRACEKIT_READY_FD"}
        self.pid = None
        try:
            t0 = self.t0 = time.monotonic()
            try:
                h = subprocess.Popen([str(self.helper), str(wfd), *self.argv], stdin=slave,
                                     stdout=slave, stderr=slave, env=env, pass_fds=(wfd,),
                                     start_new_session=True)
            finally:
                os.close(slave)
                os.close(wfd)
            pid = b""
            while not pid.endswith(b"\n"):
                chunk = os.read(rfd, 32)
                if not chunk:
                    break
                pid += chunk
            h.wait()
            if not pid.endswith(b"\n"):
                self.error = f"could not spawn (helper rc={h.returncode})"
                return self
            self.pid = int(pid)
            return self._follow(master, t0)
        finally:
            os.close(rfd)
            os.close(master)
            if self.pid and self.rss is None:   # not reaped: an exception
                try:
                    os.kill(self.pid, signal.SIGKILL)
                    os.waitpid(self.pid, 0)
                except OSError:
                    pass

    def _reap(self, deadline):
        """(status, rusage) of the tool once it has exited, or None at deadline."""
        while True:
            p, status, ru = os.wait4(self.pid, os.WNOHANG)
            if p:
                return status, ru
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.01)

    def _ready_line(self):
        """The readiness line, once written."""
        done = self.lines()[:-1]   # the last is not complete
        if self.how == "line":
            return done[0].strip() if done else None
        at = [i for i, l in enumerate(done) if re.match(r"Attaching \d+ probes", l)]
        if not at:
            return None
        if self.links_attaching is None:
            self.attaching = time.monotonic() - self.t0
            self.links_attaching = attachments(self.pid)
        for l in done[at[0] + 1:]:
            if not BPFTRACE_NOISE.match(l):
                return l.strip()
        return None

    def _state(self):
        """What a process that does not end is doing, for the report."""
        d = f"/proc/{self.pid}"
        try:
            with open(f"{d}/stat") as f:
                st = f.read().rsplit(")", 1)[1].split()[0]
            with open(f"{d}/status") as f:
                masks = {l.split(":")[0]: int(l.split()[1], 16) for l in f
                         if re.match(r"(Sig(Pnd|Blk|Ign|Cgt)|ShdPnd):", l)}
            wchan = set()
            for t in os.listdir(f"{d}/task"):
                with open(f"{d}/task/{t}/wchan") as f:
                    wchan.add(f.read() or "-")
        except OSError:
            return "gone"
        bit = 1 << (signal.SIGINT - 1)
        sigint = ", ".join(w for k, w in (("SigCgt", "caught"), ("SigIgn", "ignored"),
                                          ("SigBlk", "blocked"), ("SigPnd", "pending"),
                                          ("ShdPnd", "pending")) if masks.get(k, 0) & bit)
        out = [l.strip() for l in self.lines() if l.strip()]
        return (f"state {st} in {', '.join(sorted(wchan))}, SIGINT {sigint or 'default'}; "
                f"{len(out)} lines printed, the last {out[-1][:60] if out else ''!r}")

    def _follow(self, master, t0):
        pid, eof = self.pid, False
        deadline = t0 + READY_TIMEOUT
        seen = (None, None)   # "fds": (count, when first seen)
        while not eof:
            if self.how == "fds":
                eof = not self.drain(master, POLL)
                n, now = attachments(pid), time.monotonic()
                if n != seen[0]:
                    seen = (n, now)
                elif n and sum(n) and now - seen[1] >= SETTLED:
                    self.ready, self.links_ready = seen[1] - t0, n
                    self.line = f"({n} links+perf events)"
                    break
            else:
                eof = not self.drain(master, deadline - time.monotonic())
                line = self._ready_line()
                if line is not None:
                    self.ready = time.monotonic() - t0
                    self.links_ready = attachments(pid)
                    self.line = line
                    break
            if time.monotonic() >= deadline:
                self.error = (f"no readiness line within {READY_TIMEOUT} s" if self.how != "fds"
                              else f"attachments not settled within {READY_TIMEOUT} s")
                break
        # Idle, still draining (a chatty tool must not block on the pty).
        t_int = time.monotonic() + self.idle
        while not eof and self.ready is not None and time.monotonic() < t_int:
            eof = not self.drain(master, t_int - time.monotonic())
        if self.ready is not None:
            self.links_idle = attachments(pid)
            self.hwm, self.vmrss = vm_status(pid, "VmHWM"), vm_status(pid, "VmRSS")
        # Still running? It attached; else it failed (at or after its line).
        got = self._reap(time.monotonic() + (1 if eof else 0))
        if got:
            while not eof:
                eof = not self.drain(master, 0.2)
            self.ready = None
            self.error = self.error or self.first_error()
        else:
            os.kill(pid, signal.SIGINT)
            stop = time.monotonic() + RESEND_AFTER
            while not eof and time.monotonic() < stop:
                eof = not self.drain(master, stop - time.monotonic())
            got = self._reap(time.monotonic() + (1 if eof else 0))
            if not got:
                # As one would press Ctrl-C again.
                self.resent = self._state()
                os.kill(pid, signal.SIGINT)
                stop = time.monotonic() + EXIT_TIMEOUT
                while not eof and time.monotonic() < stop:
                    eof = not self.drain(master, stop - time.monotonic())
                got = self._reap(stop)
            if not got:
                # Its start-up stands; its RSS and CPU lack the exit's.
                self.hung = self._state()
                os.kill(pid, signal.SIGKILL)
                _, status, ru = os.wait4(pid, 0)
                got = status, ru
            if self.error:
                self.ready = None
        self.status, ru = got
        self.skipped = re.findall(r"WARNING: could not attach probe (\S+), skipping",
                                  self.buf.decode(errors="replace"))
        self.nlines = sum(1 for l in self.lines() if l.strip())
        self.rss = ru.ru_maxrss
        self.cpu = ru.ru_utime + ru.ru_stime
        return self


def vm_status(pid, field):
    """A KiB figure of a live process's status: VmHWM (peak RSS so far),
    VmRSS."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def file_size(p):
    return os.stat(os.path.realpath(p)).st_size


def stripped_size(p, tmp):
    q = tmp / ("strip-" + Path(p).name)
    shutil.copy(p, q)
    subprocess.run(["strip", str(q)], check=True)
    n = q.stat().st_size
    q.unlink()
    return n


def ldd(p):
    """{soname: resolved path} of the shared libraries p loads."""
    out = subprocess.run(["ldd", str(p)], capture_output=True, text=True).stdout
    libs = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) => (\S+)", line)
        if m and m[2].startswith("/"):
            libs[m[1]] = os.path.realpath(m[2])
    return libs


def cell(s):
    return s.replace("|", "\\|")


def main():
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--bin", default=os.environ.get("TRACEKIT_BIN", str(ROOT / "build/bin")),
                    help="tracekit's binaries (default $TRACEKIT_BIN or build/bin)")
    ap.add_argument("--tools", default=",".join(TOOLS),
                    help="comma-separated subset of: " + ", ".join(TOOLS))
    ap.add_argument("--idle", type=float, default=1.0,
                    help="seconds each tool runs once attached, before SIGINT")
    args = ap.parse_args()
    if os.geteuid() != 0:
        die("run as root: it loads BPF programs")
    if args.runs < 1 or args.idle < 0:
        die("--runs must be at least 1 and --idle not negative")
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    bad = [t for t in tools if t not in TOOLS]
    if bad:
        die(f"unknown tool {', '.join(bad)} (known: {', '.join(TOOLS)})")
    tk_dir = Path(args.bin).resolve()
    lt_dir = Path(os.environ.get("LIBBPF_TOOLS", "/usr/sbin"))
    bpftrace = shutil.which("bpftrace")
    if not bpftrace:
        die("bpftrace is missing (apt-get install bpftrace)")
    for t in tools:
        for p in (tk_dir / t, lt_dir / t):
            if not os.access(p, os.X_OK):
                die(f"{p} is missing (make; apt-get install libbpf-tools)")
        bt = TOOLS[t][2]
        if bt and not (BPFTRACE_DIR / bt).exists():
            die(f"{BPFTRACE_DIR / bt} is missing (apt-get install bpftrace)")
    for cmd in ("cc", "strip", "ldd"):
        if not shutil.which(cmd):
            die(f"{cmd} is needed")
    bt_version = subprocess.run([bpftrace, "--version"], capture_output=True,
                                text=True).stdout.split()[-1]
    lt_version = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libbpf-tools"],
                                capture_output=True, text=True).stdout or "?"

    # This script reaps the tools its helper forks.
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(36, 1, 0, 0, 0) != 0:   # PR_SET_CHILD_SUBREAPER
        die("prctl(PR_SET_CHILD_SUBREAPER) failed")

    sleeper = subprocess.Popen(["sleep", "infinity"])
    runs = {(t, p): [] for t in tools for p in PROJECTS}
    with tempfile.TemporaryDirectory(prefix="startup-bench-") as tmp:
        tmp = Path(tmp)
        helper = build_helper(tmp)

        def argv(tool, project):
            tk, lt, bt, _ = TOOLS[tool]
            if project == "tracekit":
                a = [str(tk_dir / tool), *tk]
            elif project == "libbpf-tools":
                a = [str(lt_dir / tool), *lt]
            elif bt:
                a = [bpftrace, str(BPFTRACE_DIR / bt)]
            else:
                return None
            return [x.replace("{pid}", str(sleeper.pid)) for x in a]

        try:
            for rnd in range(args.runs):
                k = rnd % len(PROJECTS)
                for tool in tools:
                    for project in PROJECTS[k:] + PROJECTS[:k]:
                        a = argv(tool, project)
                        if a is None:
                            continue
                        how = "bpftrace" if project == "bpftrace" else TOOLS[tool][3]
                        r = Run(a, how, args.idle, helper).go()
                        runs[tool, project].append(r)
                        if r.error:
                            what = f"did not attach: {r.error}"
                        else:
                            what = (f"ready {r.ready:.3f} s on {r.line[:50]!r}, links+perf "
                                    f"events {r.links_ready} then, {r.links_idle} after idle"
                                    + (f" ({r.links_attaching} at 'Attaching')"
                                       if r.links_attaching is not None else "")
                                    + (f", skipped {', '.join(r.skipped)}" if r.skipped else ""))
                        log(f"round {rnd + 1}/{args.runs} {tool} {project}: {what}; "
                            f"RSS {r.rss / 1024:.1f} MiB"
                            + (f" ({r.hwm / 1024:.1f} before SIGINT)" if r.hwm else "")
                            + f", CPU {r.cpu:.3f} s"
                            + (f"; needed a second SIGINT ({r.resent})" if r.resent else "")
                            + (f"; KILLED, still there {RESEND_AFTER + EXIT_TIMEOUT:g} s after "
                               f"SIGINT ({r.hung})" if r.hung else ""))
        finally:
            sleeper.kill()
            sleeper.wait()

        # Sizes.
        tk_libs = {}
        size = {}
        for t in tools:
            tk_libs.update(ldd(tk_dir / t))
            size[t] = (file_size(tk_dir / t), stripped_size(tk_dir / t, tmp),
                       file_size(lt_dir / t), stripped_size(lt_dir / t, tmp))
        lt_libs = {}
        for t in tools:
            lt_libs.update(ldd(lt_dir / t))
        bt_libs = ldd(bpftrace)
        bt_extra = {k: v for k, v in bt_libs.items() if k not in tk_libs}
        bt_size = file_size(bpftrace)
        bt_extra_size = sum(file_size(v) for v in set(bt_extra.values()))
        tk_only = {k: v for k, v in tk_libs.items() if k not in lt_libs}

    # The report.
    MiB = 1024
    # ru_maxrss comes from the mm's RSS counters at exit, which are per-CPU
    # and read approximately there: it can fall below the VmHWM read while
    # the tool ran. The largest such gap is the error of the RSS figures.
    rss_err = max([(r.hwm - r.rss) / MiB for rs in runs.values() for r in rs
                   if r.error is None and not r.hung and r.hwm and r.hwm > r.rss] or [0])

    def ok(tool, project):
        return [r for r in runs[tool, project] if r.error is None]

    def failed(tool, project):
        """Why it does not attach here, if no run did."""
        rs = runs[tool, project]
        return f"does not attach here: {rs[0].error}" if rs and not ok(tool, project) else None

    AT_EXIT = ("rss", "cpu", "nlines")   # not of a run that was killed

    def vals(tool, project, key):
        return [getattr(r, key) for r in ok(tool, project)
                if getattr(r, key) is not None and not (r.hung and key in AT_EXIT)]

    def med(tool, project, key, scale=1):
        v = vals(tool, project, key)
        return statistics.median(v) / scale if v else None

    def skipped(tool, project):
        return sorted({p for r in ok(tool, project) for p in r.skipped})

    def fmt(tool, project, key, scale, digits):
        if not runs[tool, project]:
            return "—"
        why = failed(tool, project)
        if why:
            return cell(why if len(why) <= 160 else why[:157] + "...") if key == "ready" else "—"
        mark = ""
        if key == "ready":
            mark = ("†" if TOOLS[tool][3] == "fds" and project != "bpftrace" else "") + \
                ("‡" if skipped(tool, project) else "")
        v = med(tool, project, key, scale)
        return "killed" if v is None else f"{v:.{digits}f}{mark}"

    print("## Start-up time to attached, peak RSS, binary size: tracekit vs "
          "libbpf-tools and bpftrace\n")
    print(f"Each tool run {args.runs} times per project, the projects alternating in a "
          f"rotating order; medians. Peers: libbpf-tools {lt_version} (/usr/sbin), bpftrace "
          f"{bt_version} with its scripts /usr/sbin/NAME.bt. **Start-up**: wall time from "
          "spawn to the first complete line the tool writes on its terminal (stdin, stdout "
          "and stderr on a pty; tracekit without TRACEKIT_READY_FD), which each prints "
          "once attached; for bpftrace the first line after \"Attaching N probes...\" "
          "that is not a diagnostic: its BEGIN block's printf, run once its probes are "
          "attached. **Peak RSS**: ru_maxrss from wait4, after "
          f"{args.idle:g} s idle once attached and a SIGINT, so what the tool does at exit "
          "(reading its maps, symbolizing, printing) is included; each tool is forked by a "
          "small static helper so that the spawning Python's RSS is not counted in it. "
          "ru_maxrss is read from per-CPU counters at exit and can come out below the "
          f"VmHWM read while the tool ran: here by up to {rss_err:.2f} MB, its error. "
          "**Size**: the stripped executable (libbpf statically linked on both sides). "
          "funclatency: a uprobe on libc's getpid() in a sleeping process "
          "(`funclatency -p PID c:getpid` on both sides). MB = MiB, KB = KiB.\n")
    print("| tool | tracekit start-up (s) | libbpf-tools start-up (s) | bpftrace start-up (s) "
          "| tracekit peak RSS (MB) | libbpf-tools peak RSS (MB) | bpftrace peak RSS (MB) "
          "| tracekit size (KB, stripped) | libbpf-tools size (KB) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for t in tools:
        print(f"| {t} | " + " | ".join(fmt(t, p, "ready", 1, 3) for p in PROJECTS) + " | "
              + " | ".join(fmt(t, p, "rss", MiB, 1) for p in PROJECTS)
              + f" | {size[t][1] / 1024:.0f} | {size[t][3] / 1024:.0f} |")
    print()
    fds_tools = [t for t in tools if TOOLS[t][3] == "fds"]
    if fds_tools:
        print(f"† {', '.join(fds_tools)}: libbpf-tools' prints nothing until it ends, so "
              "both sides are timed to the moment their attachments (BPF link and perf "
              f"event fds) are all there: /proc/PID/fd polled every {POLL * 1000:g} ms, "
              f"the count unchanged for {SETTLED * 1000:g} ms.  ")
    for t in tools:
        for p in PROJECTS:
            if skipped(t, p):
                print(f"‡ {t} {p}: started, but went on without the probes it could not "
                      f"attach: {', '.join(skipped(t, p))}; its time is that of a run "
                      "that traces less than it should.  ")
    print()

    print("Per tool: tracekit / libbpf-tools (medians, and the range of the runs); RSS "
          "once attached and idle, and the peak until then (so the rest of the peak is "
          "the exit's); CPU time (user + sys) of the whole run; lines printed:\n")
    verdicts = []
    for t in tools:
        live = [p for p in PROJECTS if runs[t, p] and not failed(t, p)]
        extra = ("; RSS while tracing (VmRSS) / peak before SIGINT (VmHWM): " + ", ".join(
            f"{p} {med(t, p, 'vmrss', MiB):.1f} / {med(t, p, 'hwm', MiB):.1f} MB"
            for p in live if med(t, p, 'hwm') is not None)
            + "; CPU: " + ", ".join(f"{p} {med(t, p, 'cpu'):.3f} s" for p in live
                                    if vals(t, p, 'cpu'))
            + "; lines of output: " + ", ".join(f"{p} {med(t, p, 'nlines'):g}" for p in live
                                                if vals(t, p, 'nlines'))
            ) if live else ""
        f_tk, f_lt = failed(t, "tracekit"), failed(t, "libbpf-tools")
        if f_tk or f_lt:
            print(f"- {t}: no ratio: " + "; ".join(
                f"{p} {why}" for p, why in (("tracekit", f_tk), ("libbpf-tools", f_lt)) if why)
                + extra + ".")
            verdicts.append(f"{t}: not measured here ("
                            + ("neither attaches" if f_tk and f_lt else
                               "tracekit does not attach" if f_tk else
                               "libbpf-tools does not attach") + ")")
            continue
        s_tk, s_lt = med(t, "tracekit", "ready"), med(t, "libbpf-tools", "ready")
        m_tk, m_lt = med(t, "tracekit", "rss", MiB), med(t, "libbpf-tools", "rss", MiB)
        if m_tk is None or m_lt is None:   # every run of one side killed
            print(f"- {t}: start-up {s_tk / s_lt:.2f} ({s_tk:.3f} vs {s_lt:.3f} s); no peak "
                  f"RSS: every run of one side was killed{extra}.")
            verdicts.append(f"{t}: start-up {'met' if s_tk <= s_lt else 'MISSED'} "
                            f"({s_tk / s_lt:.2f}x), peak RSS not measured (killed)")
            continue
        def spread(key, scale, d):
            return "; runs " + ", ".join(
                "{:.{d}f}..{:.{d}f}".format(min(v) / scale, max(v) / scale, d=d) if v else "-"
                for v in (vals(t, p, key) for p in ("tracekit", "libbpf-tools")))
        print(f"- {t}: start-up {s_tk / s_lt:.2f} ({s_tk:.3f} vs {s_lt:.3f} s"
              f"{spread('ready', 1, 3)}), peak RSS {m_tk / m_lt:.2f} ({m_tk:.2f} vs "
              f"{m_lt:.2f} MB{spread('rss', MiB, 2)}){extra}.")
        parts = []
        r_tk, r_lt = ([r.ready for r in ok(t, p)] for p in ("tracekit", "libbpf-tools"))
        overlap = max(min(r_tk), min(r_lt)) <= min(max(r_tk), max(r_lt))
        for what, a, b, unit, scale, d, noise in (
                ("start-up", s_tk, s_lt, "ms", 1e-3, 1,
                 " (the runs' ranges overlap)" if overlap and len(r_tk) > 1 else ""),
                ("peak RSS", m_tk, m_lt, "MB", 1, 2,
                 f" (within the {rss_err:.2f} MB error of ru_maxrss)"
                 if abs(m_tk - m_lt) <= rss_err else "")):
            diff = (a - b) / scale
            if a <= b:
                parts.append(f"{what} met ({a / b:.2f}x, {diff:+.{d}f} {unit}){noise}")
            else:
                parts.append(f"{what} MISSED by {diff:.{d}f} {unit} ({a / b:.2f}x){noise}")
        verdicts.append(f"{t}: " + ", ".join(parts))
    some = [(t, p) for t in tools for p in PROJECTS
            if not failed(t, p) and len(ok(t, p)) < len(runs[t, p])]
    if some:
        print("\nRuns that failed, left out of the medians:")
        for t, p in some:
            for r in runs[t, p]:
                if r.error:
                    print(f"- {t} {p}: {r.error}")
    again = [(t, p) for t in tools for p in PROJECTS if any(r.resent for r in runs[t, p])]
    if again:
        print(f"\nDid not end within {RESEND_AFTER:g} s of the SIGINT, so got a second one "
              f"(its state then); those still there {EXIT_TIMEOUT:g} s later were killed, "
              "their start-up kept, their RSS, CPU and output left out:")
        for t, p in again:
            rs = [r for r in runs[t, p] if r.resent]
            dead = [r for r in rs if r.hung]
            print(f"- {t} {p}: {len(rs)} of {len(runs[t, p])} runs"
                  + (f", {len(dead)} killed" if dead else ", all ended on the second")
                  + f"; {rs[0].resent}")
    print()

    # What attaches is a link, or for bpftrace (no links) a perf event.
    counts, late, buffers = [], [], []
    for t in tools:
        for p in PROJECTS:
            rs = [r for r in ok(t, p) if r.links_idle is not None]
            if not rs:
                continue
            k = 1 if p == "bpftrace" else 0
            grew = [r for r in rs if r.links_idle[k] > r.links_ready[k]]
            if grew:
                late.append(f"{t} {p} ({len(grew)}/{len(rs)} runs; e.g. {grew[0].links_ready} "
                            f"at the line, {grew[0].links_idle} later)")
            more = [r for r in rs if k == 0 and r.links_idle[1] > r.links_ready[1]]
            if more:
                buffers.append(f"{t} {p} ({len(more)}/{len(rs)} runs; e.g. "
                               f"{more[0].links_ready} at the line, {more[0].links_idle} later)")
            at = [r.links_attaching for r in rs if r.links_attaching is not None]
            counts.append(f"{t} {p} {rs[0].links_ready}"
                          + (f" ({at[0]} at \"Attaching\")" if at else ""))
    print("Readiness check, BPF links + perf events open at the readiness line (first run): "
          + ", ".join(counts) + ". "
          + ("**What attaches grew after the line** (links; perf events for bpftrace, which "
             "has no links: the line came before the tool had attached) for: "
             + "; ".join(late) + "." if late else
             "In every run the links (perf events for bpftrace, which attaches through "
             "them) at the line are all there are after the idle time: the line comes "
             "once attached.")
          + (" Perf events alone opened after the line (a perf buffer, one per CPU, opened "
             "after the header: attached, but output for the first moments may be lost) "
             "for: " + "; ".join(buffers) + "." if buffers else ""))
    print()

    print("Binary size (KB), as built and stripped: " + "; ".join(
        f"{t} tracekit {size[t][0] / 1024:.0f} / {size[t][1] / 1024:.0f}, libbpf-tools "
        f"{size[t][2] / 1024:.0f} / {size[t][3] / 1024:.0f}" for t in tools) + ".  ")
    print("tracekit's tools also load, beyond libbpf-tools' libraries: "
          + (", ".join(f"{k} {file_size(v) / 1024:.0f} KB" for k, v in sorted(tk_only.items()))
             or "nothing") + ".  ")
    print(f"bpftrace: /usr/bin/bpftrace {bt_size / 1024:.0f} KB, plus "
          f"{bt_extra_size / 1024:.0f} KB of the {len(bt_extra)} shared libraries it loads "
          "that tracekit does not ("
          + ", ".join(f"{k} {file_size(v) / 1024:.0f}" for k, v in
                      sorted(bt_extra.items(), key=lambda kv: -file_size(kv[1]))[:6])
          + (", ..." if len(bt_extra) > 6 else "")
          + f"): {(bt_size + bt_extra_size) / 1024:.0f} KB in all.")
    print()
    ref = ""
    if "syscount" in tools and not failed("syscount", "libbpf-tools"):
        ref = (f" libbpf-tools' syscount measured here: "
               f"{med('syscount', 'libbpf-tools', 'ready'):.3f} s, "
               f"{med('syscount', 'libbpf-tools', 'rss', MiB):.1f} MB.")
    print("**Target: start-up and peak RSS no worse than libbpf-tools (about 0.09 s and "
          f"13.6 MB for syscount).**{ref} Per tool (met: tracekit's median at most "
          "libbpf-tools'): " + "; ".join(verdicts) + ".")
    missed = [v.split(":")[0] for v in verdicts if "peak RSS MISSED" in v]
    if missed:
        extra_kb = [(size[t][1] - size[t][3]) / 1024 for t in missed]
        print(f"\nWhy peak RSS is above libbpf-tools' ({', '.join(missed)}): both sides peak "
              "while libbpf parses the kernel's BTF (/sys/kernel/btf/vmlinux) to load, and "
              "that peak is the same code, libbpf's; funclatency, which needs no kernel "
              "BTF, shows the rest. tracekit's stripped executables are "
              f"{min(extra_kb):.0f}-{max(extra_kb):.0f} KB larger (libtrace: common "
              "options, JSON, syscall and errno names, the attach fallbacks, the "
              "symbolizer), it maps libcap-ng (to drop capabilities), and the stack tools "
              "keep their symbol tables in memory to print at exit.")

if __name__ == "__main__":
    main()
