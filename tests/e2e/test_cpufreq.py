"""cpufreq end to end. Its sampling path needs a cpufreq driver (the
frequency it samples is the driver's, followed by power:cpu_frequency),
and no machine reachable here has one: neither this Firecracker VM nor
the kernel matrix's QEMU TCG VMs have /sys/devices/system/cpu/cpu0/cpufreq.
What is tested is the one line cpufreq fails with there, before it loads
anything or starts a COMMAND, and its options. Where a driver exists the
no-driver test is skipped and says so; the sampling path has no test."""
import pytest

from conftest import run
from perfhw import has_cpufreq

NO_FREQ = ("cpufreq: this kernel reports no CPU frequency: no cpufreq driver "
           "(/sys/devices/system/cpu/cpu0/cpufreq is absent), so power:cpu_frequency never "
           "fires; load the CPU's cpufreq driver (intel_pstate, amd-pstate, acpi-cpufreq, ...) "
           "or run where there is one (most VMs have none)\n")


def no_driver():
    if has_cpufreq():
        pytest.skip("this machine has a cpufreq driver: the no-driver line cannot be checked "
                    "(and the sampling path has no test)")


@pytest.mark.kernel
@pytest.mark.parametrize("args", [[], ["-j"], ["--dry-run"], ["-j", "--dry-run"],
                                  ["-P", "-f", "199", "1", "1"]])
def test_without_driver_one_line_and_exit_1(args):
    """Whether the kernel has a cpufreq driver differs per machine and
    kernel: marked so that the matrix says whether its VMs have one."""
    no_driver()
    r = run("cpufreq", *args)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", NO_FREQ)


def test_without_driver_command_is_not_run(tmp_path):
    no_driver()
    marker = tmp_path / "ran"
    r = run("cpufreq", "-j", "--", "touch", marker)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", NO_FREQ)
    assert not marker.exists()


@pytest.mark.parametrize("args, message", [
    (["-f", "0"], "invalid -f/--frequency value '0': expected an integer from 1 to"),
    (["-f", "x"], "invalid -f/--frequency value 'x': expected an integer from 1 to"),
    (["0"], "invalid interval value '0': expected an integer from 1 to 2147483647"),
    (["1", "2", "3"], "unexpected argument '3' after [interval [count]]"),
    (["-x"], "unknown option '-x'"),
    (["--print-cgroup"], "--print-cgroup is not offered by cpufreq: filter by cgroup with --cgroup PATH"),
    (["-P", "--"], "'--' must be followed by a COMMAND to run and trace"),
])
def test_usage_errors(args, message):
    r = run("cpufreq", *args)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.startswith(f"cpufreq: {message}") and \
        r.stderr.endswith("; see 'cpufreq --help'\n") and r.stderr.count("\n") == 1, r.stderr
