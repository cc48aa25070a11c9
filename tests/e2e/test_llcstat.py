"""llcstat end to end. Its counting path needs a CPU PMU with the cache
counters, and no machine reachable here has one (this Firecracker VM and
the kernel matrix's QEMU TCG VMs give the kernel none): what is tested is
the one line it fails with there, and its options. Where a PMU exists,
the no-PMU test is skipped and says so; the counting path has no test."""
import pytest

from conftest import run
from perfhw import has_cache_counters

NO_PMU = ("llcstat: no hardware cache counters (cache-references, cache-misses): "
          "perf_event_open of PERF_TYPE_HARDWARE fails with No such file or directory: "
          "this machine gives the kernel no CPU PMU (/sys/bus/event_source/devices/cpu is "
          "absent), as in a VM without a virtual PMU; run on bare metal or in a VM with one\n")


def no_pmu():
    if has_cache_counters():
        pytest.skip("this machine has the cache counters: the no-PMU line cannot be checked "
                    "(and the counting path has no test)")


@pytest.mark.kernel
@pytest.mark.parametrize("args", [[], ["-j"], ["--dry-run"], ["-j", "--dry-run"], ["-t", "-c", "5", "1"]])
def test_without_pmu_one_line_and_exit_1(args):
    """Whether the kernel exposes a PMU differs per machine and kernel:
    marked so that the matrix says whether its VMs have one (they did
    not, on 5.10, 6.1 and 6.12 under TCG)."""
    no_pmu()
    r = run("llcstat", *args)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", NO_PMU)


def test_without_pmu_command_is_not_run(tmp_path):
    no_pmu()
    marker = tmp_path / "ran"
    r = run("llcstat", "--", "touch", marker)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", NO_PMU)
    assert not marker.exists()


@pytest.mark.parametrize("args, message", [
    (["-c", "0"], "invalid -c/--sample_period value '0': expected an integer from 1 to 2147483647"),
    (["-c", "x"], "invalid -c/--sample_period value 'x': expected an integer from 1 to 2147483647"),
    (["0"], "invalid duration value '0'"),
    (["1", "2"], "unexpected argument '2' after [duration]"),
    (["-x"], "unknown option '-x'"),
    (["--print-cgroup"], "--print-cgroup is not offered by llcstat: filter by cgroup with --cgroup PATH"),
])
def test_usage_errors(args, message):
    r = run("llcstat", *args)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.startswith(f"llcstat: {message}") and \
        r.stderr.endswith("; see 'llcstat --help'\n") and r.stderr.count("\n") == 1, r.stderr


def test_per_thread_is_t_and_tid_stays_the_filter():
    """bcc's -t (by thread) is -t/--per-thread: --tid is every tool's
    thread filter and takes a TID."""
    r = run("llcstat", "--tid")
    assert r.returncode == 2 and "--tid" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    r = run("llcstat", "--help")
    assert r.returncode == 0 and "-t, --per-thread" in r.stdout
