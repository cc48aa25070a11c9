"""Processes for the signal tools' tests (killsnoop, sigsnoop): a target
that takes signals without dying, and a sender named for the test that
makes the kill()-family calls it is told to, each once, in order."""
import subprocess
import uuid

PYTHON = "/usr/bin/python3"

# Catches SIGUSR1, SIGALRM and SIGHUP, holds SIGUSR2 blocked (a second
# one finds the first pending), ignores SIGPIPE; says its pid, then waits
# for a line on stdin and exits 0.
TARGET = r"""
import signal, sys
for s in (signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM, signal.SIGHUP):
    signal.signal(s, lambda *a: None)
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR2])
signal.signal(signal.SIGPIPE, signal.SIG_IGN)
print(__import__("os").getpid(), flush=True)
sys.stdin.readline()
"""

# argv: NAME, then calls "SYSCALL:ARG,ARG,..." (kill, tkill, tgkill, or
# sigqueue: glibc's, which is rt_sigqueueinfo);
# names itself NAME, makes each call, prints "SYSCALL RESULT" for each
# (-errno on failure), then its pid.
SENDER = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(15, sys.argv[1].encode(), 0, 0, 0)
NR = {"x86_64": {"kill": 62, "tkill": 200, "tgkill": 234},
      "aarch64": {"kill": 129, "tkill": 130, "tgkill": 131}}[os.uname().machine]
for call in sys.argv[2:]:
    name, args = call.split(":")
    args = [int(a) for a in args.split(",")]
    ctypes.set_errno(0)
    if name == "sigqueue":
        r = libc.sigqueue(args[0], args[1], ctypes.c_void_p(0))
    else:
        r = libc.syscall(NR[name], *[ctypes.c_long(a) for a in args])
    print(name, r if r >= 0 else -ctypes.get_errno())
print(os.getpid(), flush=True)
"""


def name(prefix):
    return prefix + "-" + uuid.uuid4().hex[:8]


class Target:
    def __enter__(self):
        self.proc = subprocess.Popen([PYTHON, "-c", TARGET], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        self.pid = int(self.proc.stdout.readline())
        return self

    def end(self):
        """Let it exit; its exit status."""
        if self.proc.poll() is None:
            self.proc.stdin.write("\n")
            self.proc.stdin.flush()
        return self.proc.wait(timeout=60)

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def send(comm, *calls):
    """Run the sender; ([(syscall, result)], its pid)."""
    out = subprocess.run([PYTHON, "-c", SENDER, comm, *calls], capture_output=True,
                         text=True, check=True).stdout.split("\n")
    *results, pid = [l for l in out if l]
    return [(n, int(r)) for n, r in (l.split() for l in results)], int(pid)
