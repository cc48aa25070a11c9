"""NFS for the file system tools' tests: the kernel's own server (nfsd,
from Debian's nfs-kernel-server) exporting a tmpfs the test makes, and
a client mount of it over loopback, both inside the test.

NfsServer (one per session, conftest.nfs_server: starting nfsd is slow
under TCG) mounts the nfsd file system, makes a tmpfs and exports it to
127.0.0.1 (fsid=0: NFSv4's root; no_root_squash: the tests run as root),
starts rpcbind and rpc.mountd (in the foreground, children of the
test's) and the nfsd threads (NFSv3 and NFSv4), then ends NFSv4's grace
period at once (v4_end_grace), so that the first OPEN is not refused for
90 s. close() stops and undoes each of them, whatever failed.

NfsMount (one per test) mounts a directory of its own of that export at
directory/mnt (self.path) with NFS version 4.2 or 3 (nolock: no statd);
close() unmounts it and removes the directory."""
import itertools
import os
import shutil
import subprocess

import pytest

from blockdev import has_fs, wait_for

NFSD_FS = "/proc/fs/nfsd"
# What the server and the client need from nfs-kernel-server and
# nfs-common (make deps installs both).
PROGRAMS = ["exportfs", "rpc.nfsd", "rpc.mountd", "rpcbind", "rpcinfo", "mount.nfs"]
# The kernel modules: the client's file systems (nfs; NFSv4's nfs4 comes
# with the nfsv4 module) and the server's (nfsd).
MODULES = {"nfs": "nfs", "nfs4": "nfsv4", "nfsd": "nfsd"}


def _run(*argv, check=True):
    r = subprocess.run(argv, capture_output=True, text=True)
    if check and r.returncode:
        raise AssertionError(f"{' '.join(argv)}: exit {r.returncode}: "
                             f"{(r.stderr or r.stdout).strip()}")
    return r


def need_nfs():
    """Skip, saying why, where the NFS programs or the kernel's NFS
    client or server are missing."""
    for prog in PROGRAMS:
        if not shutil.which(prog, path=os.environ.get("PATH", "") + ":/sbin:/usr/sbin"):
            pytest.skip(f"{prog} is not installed (make deps: nfs-kernel-server, nfs-common)")
    for fstype, module in MODULES.items():
        if has_fs(fstype):
            continue
        r = subprocess.run(["modprobe", module], capture_output=True, text=True)
        if not has_fs(fstype):
            why = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}"
            pytest.skip(f"this kernel has no {fstype} file system (modprobe {module}: {why})")


def _mounted(path):
    with open("/proc/mounts") as f:
        return any(line.split()[1] == str(path) for line in f)


class NfsServer:
    """nfsd exporting a tmpfs at directory/export (self.root) to
    127.0.0.1; stopped and undone by close()."""

    def __init__(self, directory):
        need_nfs()
        self.root = directory / "export"
        self.undo = []   # what close() runs, last first
        self.mountd = self.rpcbind = None
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    def _start(self):
        if _mounted(NFSD_FS) and int(open(f"{NFSD_FS}/threads").read() or 0):
            pytest.skip("an nfsd runs already (not this test's): it would serve these "
                        "exports too, and rpc.nfsd 0 at the end would stop it")
        if not _mounted(NFSD_FS):
            _run("mount", "-t", "nfsd", "nfsd", NFSD_FS)
            self.undo.append(lambda: _run("umount", NFSD_FS, check=False))
        # Where exportfs and mountd keep their state (the VM's /var is a
        # tmpfs over the host's, which has them from the package).
        os.makedirs("/var/lib/nfs/v4recovery", exist_ok=True)
        self.root.mkdir()
        _run("mount", "-t", "tmpfs", "-o", "size=64m,mode=0755", "tk-nfs-export", str(self.root))
        self.undo.append(self._umount_root)
        self.spec = f"127.0.0.1:{self.root}"
        # fsid=0: the root of NFSv4's name space is this tmpfs. Its
        # path's directories above (the VM's 9p root, its overlay /tmp)
        # cannot be exported, so NFSv4 could not walk down to it from
        # a pseudo root of mountd's. It also names the tmpfs, which has no
        # UUID for nfsd to go by.
        _run("exportfs", "-i", "-o", "rw,sync,no_root_squash,no_subtree_check,insecure,"
             "fsid=0", self.spec)
        self.undo.append(lambda: _run("exportfs", "-u", self.spec, check=False))
        # rpcbind: NFSv3's clients find mountd's port there, and nfsd
        # registers NFSv3 (and lockd) with it. One that runs already
        # (the machine's own) serves as well.
        if _run("rpcinfo", "-p", "127.0.0.1", check=False).returncode:
            os.makedirs("/run/rpcbind", exist_ok=True)
            self.rpcbind = subprocess.Popen(["rpcbind", "-f"], stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL)
            self.undo.append(lambda: self._stop(self.rpcbind))
            wait_for(lambda: self.rpcbind.poll() is not None or
                     _run("rpcinfo", "-p", "127.0.0.1", check=False).returncode == 0,
                     lambda: "rpcbind did not answer rpcinfo -p", timeout=60, step=0.1)
            assert self.rpcbind.poll() is None, f"rpcbind -f: exit {self.rpcbind.returncode}"
        # mountd answers NFSv3's MOUNT calls and the kernel's export cache
        # upcalls (which client may see which export), NFSv4's too.
        self.mountd_log = self.root.parent / "mountd.log"
        with open(self.mountd_log, "w") as log:
            self.mountd = subprocess.Popen(["rpc.mountd", "-F"], stdout=log,
                                           stderr=subprocess.STDOUT)
        self.undo.append(lambda: self._stop(self.mountd))
        wait_for(lambda: self.mountd.poll() is not None or
                 _run("rpcinfo", "-T", "tcp", "127.0.0.1", "mountd", "3",
                      check=False).returncode == 0,
                 lambda: f"rpc.mountd did not register: {self.mountd_log.read_text()!r}",
                 timeout=60, step=0.1)
        assert self.mountd.poll() is None, \
            f"rpc.mountd -F: exit {self.mountd.returncode}: {self.mountd_log.read_text()!r}"
        self.undo.append(lambda: _run("rpc.nfsd", "0", check=False))
        _run("rpc.nfsd", "-H", "127.0.0.1", "4")
        # NFSv4 starts in a grace period (90 s) in which the server
        # refuses new OPENs, for clients of a previous life to reclaim
        # theirs; there are none.
        grace = f"{NFSD_FS}/v4_end_grace"
        if os.path.exists(grace):
            with open(grace, "w") as f:
                f.write("Y")

    @staticmethod
    def _stop(proc):
        if proc.poll() is None:
            proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)

    def _umount_root(self):
        # nfsd keeps files it served open a while (its file cache) even
        # after its threads stop: retry until it has let them go.
        wait_for(lambda: _run("umount", str(self.root), check=False).returncode == 0
                 or not _mounted(self.root),
                 lambda: f"cannot unmount {self.root}", timeout=60, step=0.2)

    def close(self):
        errors = []
        while self.undo:
            try:
                self.undo.pop()()
            except Exception as e:  # go on undoing the rest
                errors.append(e)
        if errors:
            raise errors[0]


_dirs = itertools.count()


class NfsMount:
    """A directory of server's export, mounted over NFS at directory/mnt
    (self.path); unmounted, and the directory removed, by close()."""

    type = "nfs"

    def __init__(self, directory, server, vers):
        self.server = server
        self.vers = vers
        self.share = server.root / f"t{os.getpid()}-{next(_dirs)}"
        self.share.mkdir()
        self.path = directory / "mnt"
        self.path.mkdir()
        self.mounted = False
        try:
            if vers.startswith("4"):
                # its path under the server's NFSv4 root (fsid=0)
                spec, opts = f"127.0.0.1:/{self.share.name}", f"vers={vers}"
            else:
                # NFSv3 names the export by its path; no locks (no statd)
                spec, opts = f"127.0.0.1:{self.share}", f"vers={vers},nolock"
            r = _run("mount", "-t", "nfs", "-o", opts, spec, str(self.path), check=False)
            assert r.returncode == 0, (f"mount -t nfs -o {opts} {spec}: {r.stderr.strip()}; "
                                       f"rpc.mountd said: {server.mountd_log.read_text()!r}")
            self.mounted = True
            # the two types the tool's nfs goes by
            with open("/proc/mounts") as f:
                mtype = [l.split()[2] for l in f if l.split()[1] == str(self.path)][-1]
            assert mtype == ("nfs4" if vers.startswith("4") else "nfs"), mtype
        except BaseException:
            self.close()
            raise

    def close(self):
        if self.mounted:
            r = _run("umount", str(self.path), check=False)
            if r.returncode:
                # a server that went away: do not hang the next test
                _run("umount", "-f", "-l", str(self.path), check=False)
            self.mounted = False
        shutil.rmtree(self.share, ignore_errors=True)
