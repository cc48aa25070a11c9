"""A network namespace joined to the test's own by a veth pair, with
IPv4 and IPv6 addresses on both ends (IPv6 without duplicate address
detection, so the addresses work at once), made and removed by the test;
and the TCP peers the network tools' tests connect with: a server in the
namespace and a client in the test's namespace, each a helper process
of known pid and comm that does exactly what the test tells it."""
import ipaddress
import itertools
import os
import subprocess
import sys
import time

_serial = itertools.count()

SERVER_COMM = "tkserver"
CLIENT_COMM = "tkclient"


def _ip(*args):
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


class NetNs:
    """ip netns NAME; veth: HOST_IF here (addr4/addr6 .1 / ::1) and
    PEER_IF in the namespace (peer4 / peer6: .2 / ::2)."""

    def __init__(self, ipv6=True):
        """ipv6=False: IPv6 off on the veth before it is up (no addr6 /
        peer6), so that nothing but what the test sends crosses it (no
        router solicitation, MLD or duplicate address detection)."""
        n = next(_serial)
        tag = f"{os.getpid() % 100000}-{n}"
        self.name = f"tk-net-{tag}"
        self.host_if = f"tkv{os.getpid() % 100000}h{n}"[:15]
        self.peer_if = f"tkv{os.getpid() % 100000}p{n}"[:15]
        # A subnet of the test's own: 10.(pid)/(serial), fd00:746b:pid:serial.
        b, c = 200 + os.getpid() % 50, n % 250 + 1
        # Another test process (pid equal mod 50) may hold that subnet
        # here: the next free one, so that routes never clash.
        for _ in range(250):
            if not subprocess.run(["ip", "-o", "-4", "addr", "show", "to", f"10.{b}.{c}.0/24"],
                                  capture_output=True, text=True).stdout:
                break
            c = c % 250 + 1
        self.addr4, self.peer4 = f"10.{b}.{c}.1", f"10.{b}.{c}.2"
        net6 = f"fd00:746b:{os.getpid() % 65536:x}:{n:x}"
        self.addr6 = str(ipaddress.IPv6Address(f"{net6}::1"))   # as inet_ntop writes it
        self.peer6 = str(ipaddress.IPv6Address(f"{net6}::2"))
        _ip("netns", "add", self.name)
        try:
            _ip("link", "add", self.host_if, "type", "veth", "peer", "name", self.peer_if)
            _ip("link", "set", self.peer_if, "netns", self.name)
            if not ipv6:
                subprocess.run(["sysctl", "-qw", f"net.ipv6.conf.{self.host_if}.disable_ipv6=1"],
                               check=True)
                self.run("sysctl", "-qw", f"net.ipv6.conf.{self.peer_if}.disable_ipv6=1")
            _ip("addr", "add", f"{self.addr4}/24", "dev", self.host_if)
            if ipv6:
                _ip("-6", "addr", "add", f"{self.addr6}/64", "dev", self.host_if, "nodad")
            _ip("link", "set", self.host_if, "up")
            self.run("ip", "addr", "add", f"{self.peer4}/24", "dev", self.peer_if)
            if ipv6:
                self.run("ip", "-6", "addr", "add", f"{self.peer6}/64", "dev", self.peer_if,
                         "nodad")
            self.run("ip", "link", "set", self.peer_if, "up")
            self.run("ip", "link", "set", "lo", "up")
        except BaseException:
            self.close()
            raise

    def argv(self, *cmd):
        """cmd run in the namespace (ip netns exec ends by exec'ing it)."""
        return ["ip", "netns", "exec", self.name, *cmd]

    def run(self, *cmd):
        return subprocess.run(self.argv(*cmd), check=True, capture_output=True,
                              text=True).stdout

    def close(self):
        # Deleting the namespace deletes the veth pair with it.
        subprocess.run(["ip", "link", "del", self.host_if], capture_output=True)
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True)


# take(s, k): read exactly k bytes, no recv asking for more than is
# already queued. tcp_recvmsg then never runs out of queued data mid-call,
# so it never processes its backlog there. Before 5.17 ("tcp: do not call
# tcp_cleanup_rbuf() if we have a backlog") it called tcp_cleanup_rbuf
# first with the bytes copied so far, and libbpf-tools' tcptop (a kprobe
# on it) counted them twice: its server RX was 424 KiB of 300 in a 5.10
# guest under load (test_net_peers).
TAKE = r"""
import fcntl, select, struct, termios
def take(s, k):
    got = 0
    while got < k:
        select.select([s], [], [])
        queued = struct.unpack("i", fcntl.ioctl(s, termios.FIONREAD, b"\0" * 4))[0]
        data = s.recv(min(queued, k - got) or k - got)
        if not data:
            raise SystemExit(f"the peer closed after {got} of {k} bytes")
        got += len(data)
"""

# The server: named tkserver, it listens on ADDR port 0 (the kernel picks)
# and says "ready PID PORT"; then for each line "N M" it accepts one
# connection, reads N bytes, sends M, reads until the client closes,
# closes, and says "done".
SERVER = TAKE + r"""
import ctypes, os, socket, sys
ctypes.CDLL(None).prctl(15, b"%s", 0, 0, 0)
addr = sys.argv[1]
ls = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET)
ls.bind((addr, 0))
ls.listen(8)
print("ready", os.getpid(), ls.getsockname()[1], flush=True)
for line in sys.stdin:
    n, m = map(int, line.split())
    s, _ = ls.accept()
    take(s, n)
    s.sendall(b"s" * m)
    while s.recv(65536):
        pass
    s.close()
    print("done", flush=True)
ls.close()
""" % SERVER_COMM

# The client: named tkclient, says "ready PID"; for each line "ADDR PORT
# N M" it connects, sends N bytes, reads M, closes first (shutdown: its
# FIN), reads until the server's FIN has come (its socket has then made
# its last change, to CLOSE), closes and says "done SPORT".
CLIENT = TAKE + r"""
import ctypes, os, socket, sys
ctypes.CDLL(None).prctl(15, b"%s", 0, 0, 0)
print("ready", os.getpid(), flush=True)
for line in sys.stdin:
    addr, port, n, m = line.split()
    s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET)
    s.connect((addr, int(port)))
    sport = s.getsockname()[1]
    s.sendall(b"c" * int(n))
    take(s, int(m))
    s.shutdown(socket.SHUT_WR)
    while s.recv(65536):
        pass
    s.close()
    print("done", sport, flush=True)
""" % CLIENT_COMM


class Peer:
    def __init__(self, argv):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, bufsize=1)
        words = self.proc.stdout.readline().split()
        assert words[:1] == ["ready"], words
        self.pid = int(words[1])
        self.rest = words[2:]

    def ask(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        words = self.proc.stdout.readline().split()
        assert words[:1] == ["done"], (line, words)
        return words[1:]

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Server(Peer):
    """The server in namespace ns on its address of family ip."""

    def __init__(self, ns, ip):
        self.addr = ns.peer4 if ip == 4 else ns.peer6
        super().__init__(ns.argv(sys.executable, "-c", SERVER, self.addr))
        self.port = int(self.rest[0])


class Client(Peer):
    def __init__(self, argv_prefix=()):
        super().__init__([*argv_prefix, sys.executable, "-c", CLIENT])


def _tcp_sockets(ns=None):
    """{(local port, remote port): state} of the namespace's (or this
    one's) TCP sockets, from ss."""
    argv = ["ss", "-Htan"]
    out = subprocess.run(ns.argv(*argv) if ns else argv, check=True, capture_output=True,
                         text=True).stdout
    socks = {}
    for line in out.splitlines():
        state, _, _, local, peer = line.split()[:5]
        if peer.endswith(":*"):
            continue   # a listener
        socks[(int(local.rsplit(":", 1)[1]), int(peer.rsplit(":", 1)[1]))] = state
    return socks


def wait_closed(ns, server_port, client_port, timeout=30):
    """Until the connection is over on both ends: the server's socket gone
    from the namespace, the client's gone or in TIME-WAIT (which is no
    full socket any more: its last change, to CLOSE, has been made)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        server = _tcp_sockets(ns).get((server_port, client_port))
        client = _tcp_sockets().get((client_port, server_port))
        if server is None and client in (None, "TIME-WAIT"):
            return
        time.sleep(0.01)
    raise AssertionError(f"connection {client_port} -> {server_port} did not close: "
                         f"server {server}, client {client}")


def transfer(ns, server, client, n, m):
    """One connection from client to server: n bytes up, m down, the
    client closing first; returns the client's local port once the
    connection is over on both ends."""
    server.proc.stdin.write(f"{n} {m}\n")
    server.proc.stdin.flush()
    (sport,) = client.ask(f"{server.addr} {server.port} {n} {m}")
    assert server.proc.stdout.readline() == "done\n"
    wait_closed(ns, server.port, int(sport))
    return int(sport)


# One connection and nothing else, for -- COMMAND: named tkclient, it
# connects to ADDR PORT, sends N bytes, reads M and closes as the client
# does, ending only once its socket has made its last change (so that a
# tool ending with it has seen them all).
ONE_CLIENT = TAKE + r"""
import ctypes, socket, sys
ctypes.CDLL(None).prctl(15, b"%s", 0, 0, 0)
addr, port, n, m = sys.argv[1:]
s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET)
s.connect((addr, int(port)))
s.sendall(b"c" * int(n))
take(s, int(m))
s.shutdown(socket.SHUT_WR)
while s.recv(65536):
    pass
s.close()
""" % CLIENT_COMM


def one_client_argv(server, n, m):
    return [sys.executable, "-c", ONE_CLIENT, server.addr, str(server.port), str(n), str(m)]
