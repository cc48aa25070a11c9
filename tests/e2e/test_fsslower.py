"""fsslower (and its names ext4slower, ...): the exact operations a child
makes on a marked file of an ext4, xfs and btrfs file system on a loop
device the test makes and mounts (fsop.py), and of an NFS mount over
loopback from an nfsd the test starts (nfsmount.py). With -p on the
child and threshold 0, fsslower must print exactly those 8 operations,
with their sizes, offsets and the file's name."""
import os
import subprocess

import pytest

from blockdev import has_fs, mounted_fs  # noqa: F401
from conftest import json_lines, loss_record, require, run
from fsop import COMM, EXPECTED, LOSS_NONE, METHODS, alias_run, fs_target, traced  # noqa: F401


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.kernel
def test_fsslower_shows_exactly_the_operations(mounted_fs, fs_target, method):
    fstype = mounted_fs.type
    pid, name, out, err = traced("fsslower", mounted_fs, fs_target, method, "-t", fstype,
                                 "-j", "0")
    records = json_lines(out)
    assert loss_record(records) == LOSS_NONE
    ops = records[:-1]
    assert [(r["op"], r["bytes"], r["offset"]) for r in ops] == EXPECTED, out
    for r in ops:
        assert (r["type"], r["fs"], r["pid"], r["tid"], r["comm"], r["file"],
                r["file_truncated"]) == ("fsslower", fstype, pid, pid, COMM, name, False), r
        assert r["lat_ns"] > 0, r


@pytest.mark.parametrize("mounted_fs", ["ext4", "nfs4"], indirect=True)
@pytest.mark.kernel
def test_named_slower_text_columns(mounted_fs, fs_target):
    """Run as ext4slower, nfsslower: that file system without -t; bcc's
    columns."""
    fstype = mounted_fs.type
    pid, name, out, err = alias_run(f"{fstype}slower", mounted_fs, fs_target, "0")
    lines = out.splitlines()
    assert lines[:2] == [f"Tracing {fstype} operations... Hit Ctrl-C to end.",
                         "TIME     COMM           PID    T BYTES   OFF_KB   LAT(ms) FILENAME"]
    rows = [l.split() for l in lines[2:]]
    assert [(r[1], r[2], r[3], r[4], r[5], r[7]) for r in rows] == [
        (COMM, str(pid), op[0].upper() if op != "fsync" else "S", str(size), str(off // 1024),
         name) for op, size, off in EXPECTED], out
    assert err == "", err


@pytest.mark.kernel
def test_fentry_targets_in_a_module_come_from_its_btf():
    """Where ext4 is a module with BTF of its own (Debian's kernels since
    5.11), tracekit finds its functions in that BTF itself
    (libtrace/modbtf.c: libbpf 1.1 scans every kernel type again for each
    module before it), and -v names the module for each fentry and fexit
    program."""
    require("fentry")
    subprocess.run(["modprobe", "ext4"], capture_output=True)
    if not os.path.exists("/sys/kernel/btf/ext4"):
        pytest.skip("ext4 has no BTF of its own here (built into the kernel, or no module BTF)")
    r = run("fsslower", "-t", "ext4", "-v", "--dry-run", env={"TRACEKIT_ATTACH": "fentry"})
    assert r.returncode == 0, r.stderr
    probes = [l.split() for l in r.stdout.splitlines() if l.startswith("probe ")]
    kf = [(p[1], p[2], p[3]) for p in probes if p[2] in ("fentry", "fexit")]
    assert len(kf) >= 8 and {f for _, _, f in kf} >= {"ext4_file_read_iter",
                                                       "ext4_file_write_iter"}, r.stdout
    for probe, method, func in kf:
        assert f"probe {probe}: {method} {func}: in module ext4's BTF\n" in r.stderr, \
            (probe, r.stderr)


def test_absent_file_system_exits_1_one_line():
    absent = [t for t in ("nfs", "xfs", "btrfs") if not has_fs(t)]
    if not absent:
        pytest.skip("every file system fsslower knows is in this kernel's /proc/filesystems")
    r = run("fsslower", "-t", absent[0])
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == (f"fsslower: the kernel has no {absent[0]} file system (not in "
                        f"/proc/filesystems: load its module, modprobe {absent[0]})\n")


@pytest.mark.parametrize("tool, args, needle", [
    ("fsslower", ["-t", "zfs"], "invalid -t/--type value 'zfs': expected ext4, xfs, btrfs or nfs"),
    ("fsslower", ["-t", "ext4", "abc"], "invalid threshold (ms) value 'abc'"),
    ("fsslower", ["-t", "ext4", "1.5"], "invalid threshold (ms) value '1.5'"),
    ("fsslower", ["-t", "ext4", "1", "2"], "unexpected argument '2'"),
    ("fsslower", ["-t", "ext4", "-m", "x"], "invalid --min value 'x'"),
    ("fsslower", ["-t", "ext4", "-m", "1", "2"], "unexpected argument '2'"),
    ("fsslower", [], "no file system: give -t TYPE"),
])
def test_usage_errors_exit_2_one_line(tool, args, needle):
    r = run(tool, *args)
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith(f"{tool}: ") and needle in r.stderr and "--help" in r.stderr, \
        r.stderr
