"""Starting and stopping the tools under test, alike for every project.

A tool runs with stdout and stderr on files (as `tool > file` would:
full buffering for both projects), under GNU time, which reports its CPU
time and peak RSS: a child's ru_maxrss counts the memory of the process
that exec'd it, and a child of Python would be charged Python's RSS.
Attached means:
  - tracekit: it wrote "ready" on TRACEKIT_READY_FD (right after attach);
  - others: every BPF link it made has its perf event, and every CPU has
    its perf buffer event: /proc/PID/fd holds as many perf_event fds as
    bpf_link fds plus one per CPU (libbpf-tools attach, then open their
    perf buffer, then print their banner), or, for tools with no event
    buffer (no_buffer=True), its links have stopped changing."""
import os
import select
import signal
import subprocess
import tempfile
import time

TIME = "/usr/bin/time"  # GNU time (package time)


class Fds(tuple):
    """(BPF links, perf events) among the fds of a process. A program is
    attached through a link, or (bpftrace, through ioctl) to a perf event;
    perf buffers are perf events too, one per CPU."""

    def __str__(self):
        return f"{self[0]}+{self[1]}"


def attachments(pid):
    """The process's Fds, or None when it is gone."""
    links = perfs = 0
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return None
    for fd in fds:
        try:
            t = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        links += t == "anon_inode:bpf_link"
        perfs += t == "anon_inode:[perf_event]"
    return Fds((links, perfs))


class ToolRun:
    def __init__(self, name, argv, tracekit, env=None, no_buffer=False):
        self.name, self.argv, self.tracekit = name, argv, tracekit
        self.env = dict(os.environ, **(env or {}))
        self.no_buffer = no_buffer
        self.proc = self.out = self.err = None
        self.cpu = self.maxrss_kb = self.status = None

    def start(self, timeout=60):
        self.out, self.err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        self.usage = tempfile.NamedTemporaryFile(prefix="peers-time-")
        pass_fds = ()
        if self.tracekit:
            rfd, wfd = os.pipe()
            self.env["TRACEKIT_READY_FD"] = str(wfd)
            pass_fds = (wfd,)
        self.proc = subprocess.Popen(
            [TIME, "-f", "%U %S %M", "-o", self.usage.name, *self.argv],
            stdout=self.out, stderr=self.err, env=self.env, pass_fds=pass_fds)
        self.pid = self._tool_pid(timeout)
        if self.tracekit:
            os.close(wfd)
            r, _, _ = select.select([rfd], [], [], timeout)
            ok = r and os.read(rfd, 16) == b"ready\n"
            os.close(rfd)
        else:
            ok = self.pid and self._wait_links(timeout)
        if not ok:
            self.stop()
            raise RuntimeError(f"{self.name} did not attach: {self.stderr()[-500:]}")

    def _tool_pid(self, timeout):
        """The tool's pid: GNU time's child."""
        deadline = time.monotonic() + timeout
        path = f"/proc/{self.proc.pid}/task/{self.proc.pid}/children"
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                with open(path) as f:
                    kids = f.read().split()
            except OSError:
                kids = []
            if kids:
                return int(kids[0])
            time.sleep(0.005)
        return None

    def _fd_kinds(self):
        return attachments(self.pid) or (0, 0)

    def _ended(self):
        """Has it exited? Without reaping it: stop() wants its rusage."""
        try:
            with open(f"/proc/{self.pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
        except OSError:
            return True

    def _wait_links(self, timeout):
        deadline, last, stable = time.monotonic() + timeout, None, 0
        ncpu = os.cpu_count()
        while time.monotonic() < deadline and not self._ended():
            links, perf = self._fd_kinds()
            if self.no_buffer:
                stable = stable + 1 if links and (links, perf) == last else 0
                if stable >= 20:  # 0.2 s unchanged
                    return True
            elif links and perf >= links + ncpu:
                time.sleep(0.05)  # from opening its buffer to polling it
                return True
            last = (links, perf)
            time.sleep(0.01)
        return False

    def wait_quiet(self, seconds=0.5, timeout=120):
        """Until its output has not grown for seconds (it has drained)."""
        deadline, size, since = time.monotonic() + timeout, -1, time.monotonic()
        while time.monotonic() < deadline:
            now = os.fstat(self.out.fileno()).st_size
            if now != size:
                size, since = now, time.monotonic()
            elif time.monotonic() - since >= seconds:
                return
            time.sleep(0.05)

    def stop(self, timeout=60):
        """SIGINT to the tool; its CPU seconds and peak RSS (KiB) from
        GNU time (which ignores SIGINT while it waits)."""
        if self.pid and self.proc.poll() is None:
            try:
                os.kill(self.pid, signal.SIGINT)
            except ProcessLookupError:
                pass
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.kill(self.pid, signal.SIGKILL)
            self.proc.wait()
        self.status = self.proc.returncode
        fields = open(self.usage.name).read().split()[-3:]
        if len(fields) == 3:
            user, system, self.maxrss_kb = float(fields[0]), float(fields[1]), int(fields[2])
            self.cpu = user + system

    def stdout(self):
        self.out.seek(0)
        return self.out.read().decode(errors="replace")

    def stderr(self):
        self.err.seek(0)
        return self.err.read().decode(errors="replace")
