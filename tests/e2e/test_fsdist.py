"""fsdist (and its names ext4dist, xfsdist, ...): latency histograms of
the exact operations a child makes on a marked file of an ext4, xfs and
btrfs file system on a loop device the test makes and mounts (fsop.py),
and of an NFS mount over loopback from an nfsd the test starts
(nfsmount.py): one count per operation, exactly the child's."""
import pytest

from blockdev import mounted_fs  # noqa: F401
from conftest import Tool, json_lines, kernel_has, loss_record, run
from fsop import LOSS_NONE, METHODS, alias_run, fs_target, traced  # noqa: F401


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.kernel
def test_fsdist_counts_exactly_the_operations(mounted_fs, fs_target, method):
    fstype = mounted_fs.type
    _, _, out, err = traced("fsdist", mounted_fs, fs_target, method, "-t", fstype, "-j")
    records = json_lines(out)
    assert loss_record(records) == LOSS_NONE
    totals = {r["operation"]: r["total"] for r in records[:-1]}
    assert all(r["fs"] == fstype and r["unit"] == "usecs" for r in records[:-1]), out
    assert totals == {"read": 2, "write": 3, "open": 1, "fsync": 1, "getattr": 1}, out


@pytest.mark.parametrize("mounted_fs", ["xfs", "nfs4"], indirect=True)
@pytest.mark.kernel
def test_named_dist_text_histograms(mounted_fs, fs_target):
    """Run as xfsdist, nfsdist: a histogram per operation, bcc's layout."""
    fstype = mounted_fs.type
    _, _, out, err = alias_run(f"{fstype}dist", mounted_fs, fs_target, "-m")
    lines = out.splitlines()
    assert lines[0] == f"Tracing {fstype} operation latency... Hit Ctrl-C to end."
    heads = [l for l in lines if l.startswith("operation = ")]
    assert heads == [f"operation = {op}" for op in ("read", "write", "open", "fsync", "getattr")]
    assert lines.count("     msecs               : count    distribution") == 5, out


@pytest.mark.kernel
def test_tracepoint_way_says_what_it_cannot_see(tmp_path):
    """Where the kernel traces no kernel function (this repository's
    host), -v says the tracepoints are used and what they miss."""
    if kernel_has("fentry") or kernel_has("kprobe"):
        pytest.skip("this kernel traces kernel functions: the tracepoint way is not the default")
    with Tool("fsdist", "-t", "ext4", "-v") as t:
        out, err, rc = t.stop()
    assert rc == 0, err
    assert ("tracing syscall tracepoints instead; they cannot see mmap'd I/O, io_uring, "
            "aio, the kernel's own I/O, or stat by path (only fstat); and it times the "
            "whole system call, not the file system alone") in err, err


@pytest.mark.parametrize("tool, args, needle", [
    ("fsdist", ["-t", "zfs"], "invalid -t/--type value 'zfs'"),
    ("fsdist", [], "no file system: give -t TYPE"),
    ("fsdist", ["-t", "ext4", "x"], "interval"),
])
def test_usage_errors_exit_2_one_line(tool, args, needle):
    r = run(tool, *args)
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith(f"{tool}: ") and needle in r.stderr and "--help" in r.stderr, \
        r.stderr
