"""The kernel's account of a workload's thread while it blocked on
purpose, for tests that check an off-CPU time from below.

A thread told to block for D ms (a clock_nanosleep, or a read that
another thread answers D ms after it saw this one asleep) is off CPU for
at least D ms less the time between that point and its switch out; in
that time the thread is on CPU or waiting for one (a preemption, or a
vCPU the host stalled, which the guest counts as running). The
workloads (tests/e2e/progs/offcpu_target.c, wake_target.c) report both
from /proc/PID/schedstat (sum_exec_runtime and run_delay) around each
command, so no guess at scheduling latency is needed: under TCG the
stretch alone was seen to be 3.5 ms (5.10 guest, a CPU hog on the host),
where on an idle host it is a few us."""


class Took(int):
    """The microseconds a command took, with the kernel's account of the
    blocking thread meanwhile: oncpu_us it ran, waited_us it waited on
    a run queue (both rounded up by the workload)."""

    def __new__(cls, us, oncpu_us, waited_us):
        took = super().__new__(cls, int(us))
        took.oncpu_us, took.waited_us = int(oncpu_us), int(waited_us)
        return took


def min_blocked(took, blocks, ms):
    """The least time blocks of ms each, made in a command that took took
    (a Took), keep the thread off CPU (module doc), less 1 us per block
    lost to a tool's division to us."""
    return max(0, blocks * ms * 1000 - took.oncpu_us - took.waited_us - blocks)
