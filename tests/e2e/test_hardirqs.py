"""hardirqs end to end, against the kernel's own count of interrupts
(/proc/interrupts' counters, per line: see procirq.py for the
bracketing of a run by its reads).

On this repository's Firecracker host (and an x86-64 VM generally) the
local timer is no irq_handler_entry event: LOC, RES, CAL and the other
named rows of /proc/interrupts are handled without an irqaction (on
arm64 the timer, arch_timer, and the IPIs are interrupt lines with
handlers, and counted). What a VM
shows are its devices' lines (virtio queues, the serial port, ACPI). The
test causes one of them: it writes and fsyncs a file FSYNCS times, and
each fsync waits for at least one request of the disk that holds the
file, whose completion is an interrupt of that disk's PCI device (found
from the file's st_dev in sysfs: its msi_irqs; here virtio1-req.0). Under
the kernel matrix /tmp is on no such disk: there only the bracketing by
/proc/interrupts is asserted, over whatever lines the VM has.

Both bounds of the bracket are exact because hardirqs counts every run
of a handler, also one that returned IRQ_NONE: the kernel counts a line's
interrupt as it calls its handlers. (It may call them once more for an
edge that came in while they ran on another CPU, without counting; the
MSI interrupts here go to one CPU each, so that does not happen.) Less,
on this host, the interrupts that came while a thread of PID 1 was
current, which no BPF program sees (procirq.py)."""
import os

import pytest

from conftest import Tool, json_lines, loss_record, run
import procirq
import tracefs

FSYNCS = 20


def fsyncs(path, n):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for i in range(n):
            os.pwrite(fd, b"%08d" % i * 512, 0)
            os.fsync(fd)
    finally:
        os.close(fd)


def disk_irqs(tmp_path):
    names = procirq.device_irqs(tmp_path)
    if not names:
        pytest.skip(f"{tmp_path} is on no PCI disk with MSI interrupts (tmpfs, 9p, virtiofs): "
                    "no interrupt line the test can cause")
    return names


def handler_name(event):
    """The handler's name in an irq_handler_entry event's text, cut to 31
    bytes as hardirqs keys it."""
    return event.split(" name=", 1)[1].encode()[:31].decode(errors="replace")


def counted(tmp_path, args=(), env=None, cpu=None, mode=("-C",)):
    """hardirqs -C -j around FSYNCS fsyncs, each count checked against
    /proc/interrupts (of CPU cpu, or all)."""
    def read():
        return procirq.interrupts(cpu)

    def work(inner0):
        fsyncs(tmp_path / "f", FSYNCS)
        # Until the kernel has counted an interrupt of any line in the
        # window, so that the bracket is not empty.
        total = lambda: {"*": sum(read().values())}
        procirq.wait_grown(total, {"*": sum(inner0.values())}, "*")

    agent = tracefs.AgentEvents("irq/irq_handler_entry", handler_name, cpu)
    counts, inner, outer, err = procirq.bracketed("hardirqs", args, read, work, "hardirq",
                                                  env=env, agent=agent, mode=mode)
    procirq.assert_bracketed(counts, inner, outer)
    assert sum(counts.values()) >= 1, counts
    return counts, err


@pytest.mark.parametrize("method", ["tp_btf", "raw_tp"])
@pytest.mark.kernel
def test_counts_are_the_kernels(method, tmp_path):
    _, err = counted(tmp_path, ["-v"], env={"TRACEKIT_ATTACH": method})
    probes = [l for l in err.splitlines() if l.startswith("hardirqs: probe ")]
    # -C counts at the handler's end and attaches nothing else.
    assert probes == [f"hardirqs: probe irq_handler_exit: {method} irq_handler_exit"]


def test_fsyncs_raise_the_disks_interrupts(tmp_path):
    disk = disk_irqs(tmp_path)
    counts, _ = counted(tmp_path)
    assert sum(counts.get(n, 0) for n in disk) >= FSYNCS, (disk, counts)


def test_cpu_counts_only_that_cpu(tmp_path):
    """-c CPU: each count within that CPU's column of /proc/interrupts."""
    for cpu in sorted(os.sched_getaffinity(0)):
        counted(tmp_path, ["-c", cpu], cpu=cpu)


@pytest.mark.kernel
def test_time_per_interrupt(tmp_path):
    """The default (time): runs timed and their total, per interrupt. A
    run the kernel counted in the inner window started after the tool
    was attached and ended before its last read (settle), so it is timed:
    the bracket holds as for -C."""
    counted(tmp_path, mode=())
    assert procirq.last_records
    for r in procirq.last_records:
        assert set(r) == {"type", "time", "interval", "hardirq", "count", "total_ns"}, r
        assert r["type"] == "hardirq" and r["count"] >= 1 and r["total_ns"] > 0, r


def test_histograms(tmp_path):
    disk = disk_irqs(tmp_path)
    with Tool("hardirqs", "-d", "-j") as tool:
        fsyncs(tmp_path / "f", FSYNCS)
        out, err, rc = tool.stop()
    assert rc == 0, err
    records = json_lines(out)
    loss_record(records)
    hists = {r["hardirq"]: r for r in records[:-1]}
    for h in hists.values():
        assert h["type"] == "histogram" and h["unit"] == "usecs", h
        assert h["total"] == h["count"] == sum(b["count"] for b in h["buckets"]), h
    assert sum(hists[n]["count"] for n in disk if n in hists) >= FSYNCS, hists


@pytest.mark.parametrize("args,unit", [(["-C"], "count"), ([], "usecs"), (["-N"], "nsecs")])
def test_text_is_bccs(args, unit, tmp_path):
    with Tool("hardirqs", *args) as tool:
        fsyncs(tmp_path / "f", FSYNCS)
        out, err, rc = tool.stop()
    assert rc == 0, err
    header = f"{'HARDIRQ':<26} {'TOTAL_' + unit:>11}"
    lines = out.splitlines()
    assert lines[0] == ("Tracing hard irq events... Hit Ctrl-C to end." if unit == "count"
                        else "Tracing hard irq event time... Hit Ctrl-C to end.")
    assert lines[1:3] == ["", header], out
    values = []
    for line in lines[3:]:
        name, value = line.rsplit(None, 1)
        assert line == f"{name:<26} {value:>11}", line   # bcc's "%-26s %11d"
        values.append(int(value))
    assert values and values == sorted(values, reverse=True), out


def test_text_histogram_sections(tmp_path):
    with Tool("hardirqs", "-d") as tool:
        fsyncs(tmp_path / "f", FSYNCS)
        out, err, rc = tool.stop()
    assert rc == 0, err
    sections = [l[len("hardirq = "):] for l in out.splitlines() if l.startswith("hardirq = ")]
    assert sections and sections == sorted(sections), out
    assert "     usecs               : count    distribution" in out.splitlines()


def test_intervals_and_time_lines():
    procirq.assert_intervals("hardirqs", "HARDIRQ")


@pytest.mark.parametrize("args,message", [
    (["-C", "-d"], "-C/--count counts runs: it does not go with the time options -d/--dist and -N/--nanoseconds"),
    (["-C", "-N"], "-C/--count counts runs: it does not go with the time options -d/--dist and -N/--nanoseconds"),
    (["-c", "-1"], "invalid --cpu value '-1': expected an integer from 0 to "),
    (["-u", "root"], "interrupts are not a task's: the task filters"),
    (["--name", "x"], "interrupts are not a task's: the task filters"),
    (["--", "true"], "interrupts are not a task's: the task filters"),
    (["--print-cgroup"], "interrupts are not a task's: the task filters"),
    (["--timestamp"], "bcc's option '--timestamp' is not in tracekit: use -T or --time"),
    (["x"], "invalid interval"),
])
def test_usage_errors(args, message):
    r = run("hardirqs", *args)
    assert (r.returncode, r.stdout) == (2, ""), r
    assert r.stderr.count("\n") == 1 and r.stderr.startswith(f"hardirqs: {message}"), r.stderr


def test_help_says_no_task_filters():
    r = run("hardirqs", "--help")
    assert r.returncode == 0
    assert "there are no task filters" in r.stdout
    for opt in ("-C, --count", "-d, --dist", "-N, --nanoseconds", "-c, --cpu=CPU"):
        assert opt in r.stdout, opt
