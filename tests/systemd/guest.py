"""The host's end of guest/tk-agent: shell commands run in the VM through
its virtio port (a Unix socket on the host, which QEMU listens on)."""
import base64
import socket
import time
from dataclasses import dataclass


class GuestError(Exception):
    pass


@dataclass
class Result:
    cmd: str
    rc: int
    out: str
    err: str

    def __str__(self):
        return (f"guest command exited {self.rc}: {self.cmd}\n"
                f"--- stdout\n{self.out}--- stderr\n{self.err}")


class Guest:
    def __init__(self, path, console=None):
        self.path = path
        self.console = console   # the VM's serial console log, for failures
        self.sock = None
        self.buf = b""

    def connect(self, timeout=60):
        """QEMU listens on the socket from its start: wait for it to."""
        deadline = time.monotonic() + timeout
        while True:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(self.path)
                self.sock = s
                return
            except OSError:
                s.close()
                if time.monotonic() > deadline:
                    raise GuestError(f"no VM listens on {self.path} after {timeout} s")
                time.sleep(0.2)

    def _line(self, deadline):
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise socket.timeout
            self.sock.settimeout(left)
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise GuestError("the VM closed the agent's port" + self.console_tail())
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def wait_up(self, timeout):
        """Until the agent answers: the guest has booted to it. Asks every
        2 s; answers to earlier asks (queued while the agent was not yet
        reading) are skipped."""
        deadline = time.monotonic() + timeout
        token = 0
        while time.monotonic() < deadline:
            token += 1
            self.sock.sendall(f"P {token}\n".encode())
            try:
                ask_deadline = min(deadline, time.monotonic() + 2)
                while True:
                    if self._line(ask_deadline) == f"O {token}":
                        return
            except socket.timeout:
                continue
        raise GuestError(f"the guest's agent did not answer within {timeout} s"
                         + self.console_tail())

    def run(self, cmd, timeout=120):
        """Result of `sh -c cmd` in the guest; killed after timeout s."""
        self.sock.sendall(f"C {int(timeout)} ".encode()
                          + base64.b64encode(cmd.encode()) + b"\n")
        try:
            line = self._line(time.monotonic() + timeout + 30)
        except socket.timeout:
            raise GuestError(f"no answer from the guest within {timeout + 30} s: {cmd}"
                             + self.console_tail()) from None
        kind, rc, out, err = (line.split(" ") + ["", ""])[:4]
        if kind != "R":
            raise GuestError(f"the agent answered {line[:200]!r} to: {cmd}")
        return Result(cmd, int(rc), base64.b64decode(out).decode(errors="replace"),
                      base64.b64decode(err).decode(errors="replace"))

    def sh(self, cmd, timeout=120):
        """stdout of cmd, which must succeed."""
        r = self.run(cmd, timeout)
        if r.rc != 0:
            raise GuestError(str(r))
        return r.out

    def console_tail(self, lines=40):
        if not self.console:
            return ""
        try:
            with open(self.console, errors="replace") as f:
                tail = f.read().splitlines()[-lines:]
        except OSError:
            return ""
        return f"\n--- the VM's console ({self.console}), last lines:\n" + "\n".join(tail)

    def close(self):
        if self.sock:
            self.sock.close()
            self.sock = None


if __name__ == "__main__":
    # python3 tests/systemd/guest.py SOCKET 'COMMAND': run one command in a
    # VM that check-systemd --keep left running.
    import sys
    g = Guest(sys.argv[1])
    g.connect(5)
    r = g.run(sys.argv[2], timeout=600)
    sys.stdout.write(r.out)
    sys.stderr.write(r.err)
    sys.exit(r.rc)
