"""The kernel's own interrupt counters, the oracle of the hardirqs and
softirqs tests: /proc/softirqs (per vector and CPU, counted where
irq:softirq_entry fires) and the interrupt lines' counters that
/proc/interrupts shows (per line and CPU, counted as the line's handlers
are called; read from /sys/kernel/irq), and a tool run bracketed by
reads of them.

A run of `TOOL -C -j` counts what happened between its attach and its
final read of the map. The counters read after it is ready and before it
is stopped (the inner window) happened inside that; those read before it
starts and after it exits (the outer window) hold it. So each of its
counts lies between the inner and the outer delta of the same counter,
once each CPU has left the handler it may have been in at a read
(settle): the kernel counts an interrupt just before it runs the handler
that the tool sees, and a VM's CPU can be stopped by its host in
between, for longer than the test takes to stop the tool (seen once on
this host: a virtio-net interrupt counted before the inner window ended,
whose handler ended after the tool's last read).

And on this repository's Firecracker host no BPF program runs for an
interrupt that comes while a thread of PID 1 is current (tracefs.py;
found here first: every time hardirqs was short of /proc/interrupts, by
one, tracefs had one event more, in a tokio-rt-worker). So the lower
bound is the inner delta less the events that tracefs (an instance of
the test's own) saw in PID 1's threads over a window holding the inner
one (tracefs.AgentEvents); 0 where PID 1 is no such agent (the kernel
matrix's VMs)."""
import os
import re
import time

from conftest import Tool, json_lines, loss_record


def softirqs(cpu=None):
    """{vector: count} from /proc/softirqs, in bcc's lower-case names
    (NET_RX -> net_rx), summed over CPUs or of CPU cpu."""
    counts = {}
    with open("/proc/softirqs") as f:
        next(f)
        for line in f:
            name, *per_cpu = line.split()
            per_cpu = list(map(int, per_cpu))
            counts[name.rstrip(":").lower()] = per_cpu[cpu] if cpu is not None else sum(per_cpu)
    return counts


def _actions(irq):
    """The names of an interrupt line's handlers (irqaction.name), cut to
    31 bytes as hardirqs keys them."""
    try:
        with open(f"/sys/kernel/irq/{irq}/actions") as f:
            text = f.read().strip()
    except FileNotFoundError:
        return []
    return [a.encode()[:31].decode(errors="replace") for a in text.split(",") if a]


def interrupts(cpu=None):
    """{action name: count} of every interrupt line (summed over CPUs, or
    of CPU cpu), each line's count given to each of its handlers: all of
    a line's handlers run for each of its interrupts. Read from sysfs
    (/sys/kernel/irq/N: per_cpu_count, per possible CPU, is the counter
    /proc/interrupts shows), which also has the lines /proc/interrupts
    hides or shows under another name: arm64's IPIs (its IPI0..IPI6
    rows) and its per-CPU arch_timer, each an irq_handler_entry event."""
    counts = {}
    for irq in os.listdir("/sys/kernel/irq"):
        names = _actions(irq)
        if not names:
            continue
        with open(f"/sys/kernel/irq/{irq}/per_cpu_count") as f:
            per_cpu = [int(c) for c in f.read().strip().split(",")]
        n = per_cpu[cpu] if cpu is not None else sum(per_cpu)
        for name in names:
            counts[name] = counts.get(name, 0) + n
    return counts


def device_irqs(path):
    """The interrupt lines of the PCI device holding the file system of
    path (a disk: its msi_irqs), as their handlers' names; [] when path
    is on no such device (tmpfs, 9p, virtiofs, an unpartitioned loop)."""
    st = os.stat(path)
    dev = f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    if not os.path.exists(dev):
        return []
    d = os.path.realpath(dev)
    while d != "/sys/devices" and d != "/":
        if os.path.isdir(f"{d}/msi_irqs"):
            return [a for irq in os.listdir(f"{d}/msi_irqs") for a in _actions(irq)]
        d = os.path.dirname(d)
    return []


def settle():
    """Return once every CPU this task may run on has left the interrupt
    handler (hard or soft) it was in when called: the task has run on
    each in turn, and a CPU runs a task only outside interrupt context
    (sched_setaffinity returns on the new CPU)."""
    saved = os.sched_getaffinity(0)
    try:
        for cpu in sorted(saved):
            os.sched_setaffinity(0, {cpu})
    finally:
        os.sched_setaffinity(0, saved)


def delta(before, after):
    return {k: after.get(k, 0) - before.get(k, 0) for k in set(before) | set(after)}


last_loss = None   # of the last bracketed run, with its runs_missed
last_records = None   # its other records


def bracketed(tool, args, read, work, key, env=None, agent=None, mode=("-C",)):
    """Run `tool -C -j *args` (mode: -C, or () for time) around
    work(inner0); returns (counts,
    inner, outer, stderr): the tool's count per key (its JSON member
    key) and the deltas of read() in the inner and the outer window,
    the inner one less what agent (tracefs.AgentEvents) saw in PID 1's threads."""
    outer0 = read()
    settle()
    with Tool(tool, *mode, "-j", *args, env=env) as t:
        try:
            if agent:
                agent.start()
            inner0 = read()
            work(inner0)
            inner1 = read()
            settle()
            unseen = agent.stop() if agent else {}
        finally:
            if agent:
                agent.close()
        out, err, rc = t.stop()
    outer1 = read()
    assert rc == 0, err
    records = json_lines(out)
    assert loss_record(records) == {"type": "loss", "events_lost": 0,
                                    "map_inserts_failed": 0}
    global last_loss, last_records
    last_loss, last_records = records[-1], records[:-1]
    counts = {}
    for r in records[:-1]:
        assert r["type"] == tool[:-1] and r["interval"] == 1, r
        assert r[key] not in counts, r
        counts[r[key]] = r["count"]
    inner = delta(inner0, inner1)
    for k, n in unseen.items():
        inner[k] = inner.get(k, 0) - n
    return counts, inner, delta(outer0, outer1), err


def assert_bracketed(counts, inner, outer):
    """Each count between the kernel's inner and outer delta (a name the
    kernel does not count is a failure too)."""
    for name in set(counts) | set(inner):
        assert name in outer, (name, counts)
        assert inner.get(name, 0) <= counts.get(name, 0) <= outer[name], \
            (name, inner.get(name, 0), counts.get(name, 0), outer[name], last_loss)


def wait_grown(read, before, key, timeout=60):
    """Until read()[key] has passed before[key]: the kernel has counted
    at least one such interrupt since (the test waits for it rather than
    sleeping)."""
    deadline = time.monotonic() + timeout
    while read().get(key, 0) <= before.get(key, 0):
        assert time.monotonic() < deadline, f"no {key} in {timeout} s"
        time.sleep(0.01)


def pin(cpu):
    os.sched_setaffinity(0, {cpu})


def assert_intervals(tool, column):
    """`tool -C -T 1 2`: 2 intervals of 1 s, each an empty line, its
    time (HH:MM:SS) and the table's header (column first)."""
    with Tool(tool, "-C", "-T", "1", "2") as t:
        out, err, rc = t.wait()
    assert rc == 0, err
    lines = out.splitlines()
    heads = [i for i, l in enumerate(lines) if l.startswith(column + " ")]
    assert len(heads) == 2, out
    for i in heads:
        assert lines[i - 2] == "" and re.fullmatch(r"\d\d:\d\d:\d\d", lines[i - 1]), out
