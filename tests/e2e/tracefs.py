"""What the kernel traced, as ftrace records it in a tracefs instance of
the test's own: the oracle of tests that count events BPF programs see
in interrupt context, where the test cannot count what it caused.

On this repository's Firecracker host no BPF program runs while a
thread of PID 1 (the sandbox's agent, process_api; its tokio-rt-worker
threads) is current, for an interrupt or a softirq that comes then too,
and the kernel counts no miss for it: ftrace records the event, no
tracepoint, raw tracepoint or tp_btf program sees it. Found twice:
hardirqs short of /proc/interrupts by one, which tracefs had in a
tokio-rt-worker; a TCP timeout retransmit on the wire and in tracefs,
in softirq on tokio-rt-worker-75, that tcpretrans and trace's
tcp_retransmit_skb and net_dev_xmit programs all missed (about 1 in 100
lossy transfers under load; over 8 s, tracefs counted 11 softirqs on
that thread and BPF none, of 4291). So a test's expected count is what
tracefs saw, of which those in PID 1's threads (agent_threads) may be
missing. Where PID 1 is no such agent (the kernel matrix's VMs) they
are seen, and events in PID 1's threads are rare there anyway."""
import collections
import os
import re
import subprocess
import time

TRACEFS = "/sys/kernel/tracing"

# "  tokio-rt-worker-75      [001] ..s1.  123.456789: tcp_retransmit_skb: skbaddr=..."
# (the flags column differs between kernels; a task name may hold '-').
LINE = re.compile(r"^\s*(.*?)-(\d+)\s+\[(\d+)\]\s.*?\s[\d.]+:\s+(\w+):\s(.*)$")
Record = collections.namedtuple("Record", "comm tid cpu event text")


def agent_threads():
    """The thread ids of PID 1."""
    return {int(t) for t in os.listdir("/proc/1/task")}


class Instance:
    """A tracefs instance recording events ("tcp/tcp_retransmit_skb", ...)
    from start() to stop(), read through its trace_pipe as it goes (the
    trace file, read while recording, pauses it: options/pause-on-trace
    since 5.11, always before), removed at stop() or close(). tracefs is
    mounted if it is not (this host does not mount it; tools mount it
    themselves)."""

    def __init__(self, *events):
        if not os.path.isdir(f"{TRACEFS}/instances"):
            subprocess.run(["mount", "-t", "tracefs", "nodev", TRACEFS], check=True)
        self.dir = f"{TRACEFS}/instances/tk-{os.getpid()}-{time.monotonic_ns()}"
        self.events = events
        self.records = []
        self._pipe = None
        self._rest = b""

    def _write(self, name, text):
        with open(f"{self.dir}/{name}", "w") as f:
            f.write(text)

    def start(self):
        os.mkdir(self.dir)
        self._write("buffer_size_kb", "8192")
        self._pipe = os.open(f"{self.dir}/trace_pipe", os.O_RDONLY | os.O_NONBLOCK)
        for event in self.events:
            self._write(f"events/{event}/enable", "1")
        return self

    def poll(self):
        """Every record so far (read from the pipe: each line once)."""
        while True:
            try:
                chunk = os.read(self._pipe, 1 << 16)
            except BlockingIOError:
                break
            if not chunk:
                break
            lines = (self._rest + chunk).split(b"\n")
            self._rest = lines.pop()
            for line in lines:
                text = line.decode(errors="replace")
                assert "LOST" not in text, text
                m = LINE.match(text)
                assert m, text
                self.records.append(Record(m[1], int(m[2]), int(m[3]), m[4], m[5]))
        return self.records

    def stop(self):
        """Every record, and the instance removed."""
        for event in self.events:
            self._write(f"events/{event}/enable", "0")
        self.poll()
        self.close()
        return self.records

    def close(self):
        """Remove the instance (its events off), if it is still there."""
        if self._pipe is not None:
            os.close(self._pipe)
            self._pipe = None
        if os.path.isdir(self.dir):
            for event in self.events:
                self._write(f"events/{event}/enable", "0")
            os.rmdir(self.dir)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()


class AgentEvents:
    """Events of a tracepoint (event: "irq/irq_handler_entry") seen while
    a thread of PID 1 was current, per key (key_of: the key of an
    event's text, e.g. its name), on CPU cpu or all: counted in a tracefs
    instance of the test's own from start() to stop(), or in a with
    block (then in counts)."""

    def __init__(self, event, key_of, cpu=None):
        self.instance = Instance(event)
        self.key_of, self.cpu = key_of, cpu

    def close(self):
        self.instance.close()

    def start(self):
        self.instance.start()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        """counts: stop()'s."""
        try:
            self.counts = self.stop()
        finally:
            self.close()

    def stop(self):
        """{key: events in PID 1's threads}, and the instance removed."""
        records = self.instance.stop()
        agent = agent_threads()
        counts = {}
        for r in records:
            if r.tid in agent and (self.cpu is None or r.cpu == self.cpu):
                k = self.key_of(r.text)
                counts[k] = counts.get(k, 0) + 1
        return counts
