"""A helper process that makes the socket calls a test asks for
(bindsnoop, solisten): named tksockops, it says "ready PID", then runs
each line it reads as Python (with socket imported; names kept from one
line to the next) and answers "done R": R the value the line left in r
(None when it set none), or the errno name of the OSError it raised."""
import errno
import sys

from netns import Peer

COMM = "tksockops"

SOCKOPS = r"""
import ctypes, errno, os, socket, sys
ctypes.CDLL(None).prctl(15, b"%s", 0, 0, 0)
print("ready", os.getpid(), flush=True)
names = {"socket": socket}
for line in sys.stdin:
    names["r"] = None
    try:
        exec(line, names)
        r = names["r"]
    except OSError as e:
        r = errno.errorcode[e.errno]
    print("done", r, flush=True)
""" % COMM


class SockOps(Peer):
    """argv_prefix: a command that ends by exec'ing its arguments (such
    as setpriv, to run it as another user)."""

    def __init__(self, argv_prefix=()):
        super().__init__([*argv_prefix, sys.executable, "-c", SOCKOPS])

    def do(self, line):
        """Run line; the value of r, as a string, or the error's name."""
        (r,) = self.ask(line)
        return r

    def port(self, sock):
        return int(self.do(f"r = {sock}.getsockname()[1]"))


__all__ = ["COMM", "SockOps", "errno"]
