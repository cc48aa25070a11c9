"""Block devices for the block I/O and file system tools' tests: a loop
device over a file in a temporary directory, a file system made on one
and mounted, and a workload that makes O_DIRECT reads and writes of it
(progs/bio_target.c)."""
import contextlib
import itertools
import os
import shutil
import subprocess
import time

import pytest

from conftest import ROOT, Workload

TARGET_SRC = ROOT / "tests/e2e/progs/bio_target.c"
# The workload's comm (its file name, cut at 15 bytes).
TARGET_COMM = "bio-target"
SECTOR = 512


def assert_reported(got, want, records):
    """got (the test's own requests as the tool reported them, in want's
    order) is want, less at most as many as the tool's loss record counts
    in runs_missed: this host's kernel runs no BPF program for a block
    completion that lands on the Firecracker sandbox's agent (its
    tokio-rt-worker threads; README, biosnoop: about 1 in 300,000
    completions, none at all in the VM matrix), and the block tools count
    such a request as a probe run missed when it is issued again. A
    request missing beyond that count, out of order or not asked for
    fails. Returns the indices in want of those reported."""
    missed = [r for r in records if r.get("type") == "loss"][-1]["runs_missed"]
    found, j = [], 0
    for i, w in enumerate(want):
        if j < len(got) and got[j] == w:
            found.append(i)
            j += 1
    assert j == len(got) and len(want) - len(found) <= missed, (got, want, missed)
    return found


def settle():
    """Let udev finish probing a device (blkid reads it): a new one, so
    that only the test's own I/O reaches the disk afterwards; one the test
    wrote and closed, so that no udev worker holds it open at removal."""
    if shutil.which("udevadm"):
        subprocess.run(["udevadm", "settle", "--timeout=30"], check=False)


class LoopDev:
    """/dev/loopN over a sparse file of size bytes in directory, or over
    an existing file or block device (backing=); detached by close().
    direct_io: the loop driver reads and writes its backing with O_DIRECT
    (not through the backing's page cache)."""

    def __init__(self, directory=None, size=64 << 20, backing=None, direct_io=False):
        if not shutil.which("losetup"):
            pytest.skip("losetup (util-linux) is not installed")
        if not os.path.exists("/dev/loop-control"):
            # a kernel with loop as a module (Debian's, in the VM matrix)
            subprocess.run(["modprobe", "loop"], capture_output=True)
        # A backing file of its own is removed at close(): pytest keeps
        # every tmp_path of a session, and in the VM matrix /tmp is a
        # tmpfs of the guest's memory, which the blocks mkfs and the
        # workloads wrote into these sparse files filled (ENOSPC in every
        # test after them).
        self.own_backing = backing is None
        if backing is None:
            backing = directory / "loop.img"
            with open(backing, "wb") as f:
                f.truncate(size)
        self.backing = backing
        opts = ["--direct-io=on"] if direct_io else []
        r = subprocess.run(["losetup", "--find", "--show", *opts, str(self.backing)],
                           capture_output=True, text=True)
        if r.returncode:
            pytest.skip(f"cannot make a loop device: {r.stderr.strip()}")
        self.path = r.stdout.strip()
        self.name = os.path.basename(self.path)
        settle()

    def close(self):
        settle()  # udev's probe of a device just written holds it open
        r = subprocess.run(["losetup", "--detach", self.path], capture_output=True, text=True)
        # A detach of a device still open (udev's probe, the loop driver's
        # own release work) only marks it to clear on its last close, so
        # the backing (a dm-delay device under it) stays busy after
        # losetup returns: wait until the kernel has let it go.
        wait_for(lambda: not os.path.exists(f"/sys/block/{self.name}/loop"),
                 lambda: f"{self.path} still bound to {self.backing} after losetup --detach "
                 f"(rc {r.returncode}, {r.stderr.strip()!r}; holders "
                 f"{os.listdir(f'/sys/block/{self.name}/holders')}; {_openers(self.path)})")
        if self.own_backing:
            os.unlink(self.backing)


def wait_for(done, what, timeout=30.0, step=0.02):
    """Poll done() every step s until it is true; fail with what() after
    timeout s."""
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(what())
        time.sleep(step)


_dm_names = itertools.count()


def _openers(path):
    """Diagnostics: the processes that have path open."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                if os.readlink(f"/proc/{pid}/fd/{fd}") == path:
                    found.append(f"{pid} {open(f'/proc/{pid}/comm').read().strip()}")
        except OSError:
            pass
    return f"open by {found or 'no process'}"


def need_dm_delay():
    """Skip, saying why, where there is no dm-delay (before a test makes
    the devices it would put under one)."""
    if not shutil.which("dmsetup"):
        pytest.skip("dmsetup is not installed (make deps)")
    r = subprocess.run(["modprobe", "dm-delay"], capture_output=True, text=True)
    if r.returncode:
        pytest.skip(f"this kernel has no dm-delay: {r.stderr.strip()}")


class DelayDev:
    """A device-mapper delay target (dm-delay) over the block device
    under: every read and write waits delay_ms before it goes on to
    under. Its disk is dm-N (name); removed by close()."""

    def __init__(self, under, delay_ms):
        need_dm_delay()
        # A name of this process's own: a device another run left behind
        # cannot make this one's creation fail.
        self.dm_name = dm_name = f"tk-delay-{os.getpid()}-{next(_dm_names)}"
        self.under = under
        self.sectors = int(open(f"/sys/class/block/{under.name}/size").read())
        # --noudevsync: no wait for udev to confirm the node (a machine
        # may run no udev); the test opens /dev/dm-N, which devtmpfs makes.
        r = subprocess.run(["dmsetup", "create", "--noudevsync", dm_name, "--table",
                            self._table(delay_ms)], capture_output=True, text=True)
        # The target type is there (modprobe above): a failure is the test's.
        assert r.returncode == 0, f"dmsetup create (delay target): {r.stderr.strip()}"
        try:
            r = subprocess.run(["dmsetup", "info", "-c", "--noheadings", "-o",
                                "blkdevname", dm_name],
                               capture_output=True, text=True, check=True)
            self.name = r.stdout.strip()
            self.path = f"/dev/{self.name}"
            assert self.name.startswith("dm-") and os.path.exists(self.path), self.name
            settle()
        except BaseException:
            self.close()
            raise

    def _table(self, delay_ms):
        return f"0 {self.sectors} delay {self.under.path} 0 {delay_ms}"

    def set_delay(self, delay_ms):
        """Load a table with another delay and swap it in: resume
        suspends dm-N first (freezing a file system on it, whose dirty
        data goes out under the old delay), so the new delay holds from
        the first bio after. A delay of 0 sends bios straight on."""
        subprocess.run(["dmsetup", "reload", self.dm_name, "--table", self._table(delay_ms)],
                       check=True, capture_output=True)
        subprocess.run(["dmsetup", "resume", "--noudevsync", self.dm_name], check=True,
                       capture_output=True)

    def close(self):
        # udev probes a device its writer closed or a file system on it was
        # unmounted from (blkid, btrfs's scan; each read through the
        # delay): its worker holds dm-N open for seconds, and
        # a remove meanwhile fails with EBUSY. Let it finish, then remove;
        # a holder that stays past the timeout is the test's failure.
        settle()
        tries = []

        def removed():
            tries.append(subprocess.run(["dmsetup", "remove", "--noudevsync", self.dm_name],
                                        capture_output=True, text=True))
            return tries[-1].returncode == 0

        wait_for(removed, lambda: f"dmsetup remove {self.dm_name}: "
                 f"{tries[-1].stderr.strip()}; {_openers(self.path)}", timeout=60, step=0.2)


@contextlib.contextmanager
def delayed_stack(directory, delay_ms):
    """file -> loopA -> dm-delay -> loopB (direct I/O): yields
    (under, dm, top), loopA, the delay target and loopB.
    dm-delay is a bio-based device: its disk (dm-N) makes no requests,
    so the request tools see nothing of it; the delay shows in the
    requests of a request-based disk above it, top, whose loop driver
    reads and writes dm-N with O_DIRECT (each request waits for the
    delay, none is served by a page cache)."""
    need_dm_delay()
    under = LoopDev(directory)
    try:
        dm = DelayDev(under, delay_ms)
        try:
            top = LoopDev(backing=dm.path, direct_io=True)
            try:
                # losetup falls back to buffered I/O where it cannot set
                # direct I/O; the page cache would then answer for dm-N.
                assert open(f"/sys/block/{top.name}/loop/dio").read().strip() == "1"
                yield under, dm, top
            finally:
                top.close()
        finally:
            dm.close()
    finally:
        under.close()


# mkfs of each file system the tests make: quiet, over any old one, no
# discard (5.10 warns at a loop device's discard).
MKFS = {"ext4": ["mkfs.ext4", "-q", "-F", "-E", "nodiscard"], "xfs": ["mkfs.xfs", "-q", "-f", "-K"],
        "btrfs": ["mkfs.btrfs", "-q", "-f", "-K"]}
# Sparse, so its size costs nothing: mkfs.xfs wants 300 MiB at least,
# mkfs.btrfs 114 MiB.
FS_SIZE = 512 << 20


def has_fs(fstype):
    with open("/proc/filesystems") as f:
        return any(line.split()[-1] == fstype for line in f if line.strip())


def need_fs(fstype):
    """Skip, saying why, where fstype's mkfs or the kernel's fstype is missing."""
    if not shutil.which(MKFS[fstype][0]):
        pytest.skip(f"{MKFS[fstype][0]} is not installed (make deps)")
    if not has_fs(fstype):
        # a kernel with it as a module (Debian's, in the VM matrix)
        subprocess.run(["modprobe", fstype], capture_output=True)
        if not has_fs(fstype):
            pytest.skip(f"this kernel has no {fstype} file system (modprobe {fstype} failed)")


class MountedFs:
    """A file system of type fstype on a new loop device, or on dev (a
    device of the caller's, which stays theirs: it must be FS_SIZE at
    least), mounted at directory/mnt (self.path) with mount options
    (-o); unmounted, and its own loop device detached, by close()."""

    def __init__(self, directory, fstype, dev=None, options=None):
        need_fs(fstype)
        self.type = fstype
        self.own_dev = dev is None
        self.dev = LoopDev(directory, FS_SIZE) if dev is None else dev
        self.path = directory / "mnt"
        self.mounted = False
        try:
            subprocess.run([*MKFS[fstype], self.dev.path], check=True, capture_output=True)
            self.path.mkdir()
            opts = ["-o", options] if options else []
            subprocess.run(["mount", "-t", fstype, *opts, self.dev.path, str(self.path)],
                           check=True)
            self.mounted = True
        except BaseException:
            self.close()
            raise

    def close(self):
        if self.mounted:
            subprocess.run(["umount", str(self.path)], check=False)
        if self.own_dev:
            self.dev.close()


@pytest.fixture(params=["ext4", "xfs", "btrfs", "nfs4", "nfs3"])
def mounted_fs(request, tmp_path):
    """Each of ext4, xfs, btrfs and nfs in turn (request.param), mounted;
    nfs (type "nfs") over loopback from an nfsd of the session's
    (nfsmount.py), as NFSv4.2 (nfs4) and as NFSv3 (nfs3)."""
    if request.param.startswith("nfs"):
        from nfsmount import NfsMount, need_nfs  # it imports this module
        need_nfs()
        fs = NfsMount(tmp_path, request.getfixturevalue("nfs_server"),
                      "4.2" if request.param == "nfs4" else "3")
    else:
        fs = MountedFs(tmp_path, request.param)
    try:
        yield fs
    finally:
        fs.close()


@pytest.fixture
def loopdev(tmp_path):
    dev = LoopDev(tmp_path)
    try:
        yield dev
    finally:
        dev.close()


@pytest.fixture
def loopdev_b(tmp_path):
    """A second loop device: I/O on another disk that a filter must leave out."""
    (tmp_path / "b").mkdir()
    dev = LoopDev(tmp_path / "b")
    try:
        yield dev
    finally:
        dev.close()


@pytest.fixture(scope="session")
def bio_target(tmp_path_factory):
    path = tmp_path_factory.mktemp("bio") / TARGET_COMM
    subprocess.run(["cc", "-O1", "-o", str(path), str(TARGET_SRC)], check=True)
    return path


class BioTarget(Workload):
    """bio_target on a device: read(size, offsets) and write(...) return
    once those O_DIRECT calls have completed, with each call's time in ns
    (CLOCK_MONOTONIC, as the tools' latencies)."""

    def read(self, size, offsets):
        return [int(w) for w in self.send(f"r {size} " + " ".join(map(str, offsets)))]

    def write(self, size, offsets):
        return [int(w) for w in self.send(f"w {size} " + " ".join(map(str, offsets)))]
