"""What make check-vm and make check-systemd share: Debian's archives
through an apt of their own, Debian's kernels fetched once into
DIR/kernels/<series>/ (check-vm's DIR is BUILD/vm; the arm64 matrix's
and check-systemd's is cache_dir's), the VMs' root file systems, and the
VM processes (their console logs, their killing)."""
import glob
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

# The program's name on its messages (check-vm, check-systemd).
NAME = os.path.basename(sys.argv[0]).removesuffix(".py")

MIRROR = os.environ.get("VM_MIRROR") or "http://deb.debian.org/debian"
SECURITY = os.environ.get("VM_SECURITY_MIRROR") or "http://deb.debian.org/debian-security"
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"

# Kernel series: the Debian release that ships it, and its suites. The
# newest linux-image-amd64 of these suites names the kernel package.
SERIES = {
    "5.10": [(MIRROR, "bullseye"), (SECURITY, "bullseye-security")],
    "6.1": [(MIRROR, "bookworm"), (SECURITY, "bookworm-security")],
    "6.12": [(MIRROR, "trixie"), (SECURITY, "trixie-security")],
}

print_lock = threading.Lock()


def say(msg, file=sys.stdout):
    with print_lock:
        print(f"{NAME}: {msg}", file=file, flush=True)


def die(msg):
    say(msg, file=sys.stderr)
    sys.exit(2)


# ---------------------------------------------------------------- apt

class TempApt:
    """apt with its own sources list and package lists, for suites this
    machine does not use. Nothing of the host's apt state is touched
    (no lists, no pkgcache); everything lives in a temporary directory."""

    def __init__(self, suites, parent=None, arch=None):
        # Under parent, a dot name that the next run's cleanup removes if
        # this one is killed. arch: the packages' architecture (Debian's
        # name: arm64), when not this machine's.
        self.dir = tempfile.mkdtemp(prefix=".apt-" if parent else "tracekit-apt-",
                                    dir=parent)
        os.makedirs(os.path.join(self.dir, "lists", "partial"))
        os.makedirs(os.path.join(self.dir, "parts"))
        with open(os.path.join(self.dir, "sources.list"), "w") as f:
            for uri, suite in suites:
                f.write(f"deb [signed-by={KEYRING}] {uri} {suite} main\n")
        d = self.dir
        self.opts = [
            "-o", f"Dir::Etc::SourceList={d}/sources.list",
            "-o", f"Dir::Etc::SourceParts={d}/parts",
            "-o", f"Dir::Etc::Preferences={d}/preferences",
            "-o", f"Dir::Etc::PreferencesParts={d}/parts",
            "-o", f"Dir::State::Lists={d}/lists",
            "-o", "Dir::Cache::pkgcache=",
            "-o", "Dir::Cache::srcpkgcache=",
            "-o", "Acquire::Languages=none",
            "-o", "APT::Sandbox::User=root",
        ]
        if arch:
            self.opts += ["-o", f"APT::Architecture={arch}", "-o", f"APT::Architectures={arch}"]

    def update(self):
        run_checked(["apt-get", "-qq", *self.opts, "update"])

    def cache(self, *args):
        return run_checked(["apt-cache", *self.opts, *args], capture=True)

    def candidate(self, pkg):
        for line in self.cache("policy", pkg).splitlines():
            line = line.strip()
            if line.startswith("Candidate:"):
                v = line.split(None, 1)[1]
                return None if v == "(none)" else v
        return None

    def download(self, pkg, dest):
        run_checked(["apt-get", "-qq", *self.opts, "download", pkg], cwd=dest)
        debs = glob.glob(os.path.join(dest, f"{pkg}_*.deb"))
        if len(debs) != 1:
            die(f"apt-get download {pkg}: expected one .deb, found {debs}")
        return debs[0]

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def run_checked(argv, capture=False, cwd=None, env=None):
    p = subprocess.run(argv, cwd=cwd, env=env, text=True,
                       stdout=subprocess.PIPE if capture else None,
                       stderr=subprocess.PIPE if capture else None)
    if p.returncode:
        if capture:
            sys.stderr.write(p.stderr or "")
        die(f"command failed (exit {p.returncode}): {shlex.join(argv)}")
    return p.stdout


def installed(pkg):
    p = subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg],
                       capture_output=True, text=True)
    return p.returncode == 0 and p.stdout.strip() == "install ok installed"


def apt_install(args):
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    run_checked(["apt-get", "update", "-qq"], env=env)
    run_checked(["apt-get", "install", "-y", "-qq", "--no-install-recommends",
                 *args], env=env)


# ---------------------------------------------------------------- kernels

def cache_dir(build):
    """Where check-vm ARCH=arm64 and check-systemd keep the kernels they
    fetch and the root file systems they build: VM_CACHE when set (.ci/run
    sets it, so that CI's fresh clones on one machine fetch and
    debootstrap once, not on every run), else BUILD/vm. Their VMs boot
    disk images made from it. A run's own files (logs, results, images)
    stay in BUILD. (check-vm's own kernels stay in BUILD/vm: its
    virtme-ng guests read their modules from this machine's files.)"""
    d = os.path.abspath(os.environ.get("VM_CACHE") or os.path.join(build, "vm"))
    os.makedirs(d, exist_ok=True)
    return d


def kernel_dir(vmdir, series, arch="amd64"):
    return os.path.join(vmdir, "kernels", series if arch == "amd64" else f"{arch}-{series}")


def load_kernel(vmdir, series, arch="amd64"):
    try:
        with open(os.path.join(kernel_dir(vmdir, series, arch), "kernel.json")) as f:
            info = json.load(f)
    except (OSError, ValueError):
        return None
    # From where it is now, not where it was fetched: a cache may move.
    info["vmlinuz"] = os.path.join(kernel_dir(vmdir, series, arch), "root", "boot",
                                   f"vmlinuz-{info.get('release')}")
    return info if os.path.exists(info["vmlinuz"]) else None


def fetch_kernel(vmdir, series, arch="amd64"):
    """Fetch and unpack Debian's newest kernel of a series, once; arch is
    Debian's name of its architecture (amd64, arm64)."""
    info = load_kernel(vmdir, series, arch)
    if info:
        return info
    parent = os.path.join(vmdir, "kernels")
    os.makedirs(parent, exist_ok=True)
    final = kernel_dir(vmdir, series, arch)
    shutil.rmtree(final, ignore_errors=True)   # incomplete: no kernel.json
    tmp = tempfile.mkdtemp(prefix=f".{series}-", dir=parent)
    apt = TempApt(SERIES[series], parent=parent, arch=None if arch == "amd64" else arch)
    meta = f"linux-image-{arch}"
    try:
        suites = " ".join(s for _, s in SERIES[series])
        say(f"{series}: looking up the newest {arch} kernel in {suites}")
        apt.update()
        deps = apt.cache("depends", meta)
        pkgs = [l.split(":", 1)[1].strip() for l in deps.splitlines()
                if l.strip().startswith("Depends:")]
        pkgs = [p for p in pkgs if p.startswith(f"linux-image-{series}.")]
        if len(pkgs) != 1:
            die(f"{series}: {meta} in {suites} does not name one "
                f"linux-image-{series}.* package: {deps.strip()}")
        pkg = pkgs[0]
        version = apt.candidate(pkg)
        say(f"{series}: fetching {pkg} {version}")
        deb = apt.download(pkg, tmp)
        root = os.path.join(tmp, "root")
        run_checked(["dpkg-deb", "-x", deb, root])
        os.unlink(deb)
        images = glob.glob(os.path.join(root, "boot", "vmlinuz-*"))
        if len(images) != 1:
            die(f"{series}: {pkg} holds no single boot/vmlinuz-*: {images}")
        release = os.path.basename(images[0])[len("vmlinuz-"):]
        # trixie's packages put modules in usr/lib/modules: give the tree
        # a merged-/usr /lib, which is where virtme-ng looks for them.
        if (not os.path.exists(os.path.join(root, "lib"))
                and os.path.isdir(os.path.join(root, "usr", "lib", "modules"))):
            os.symlink("usr/lib", os.path.join(root, "lib"))
        moddir = os.path.join(root, "lib", "modules", release)
        if not os.path.isdir(moddir):
            die(f"{series}: {pkg} has no modules for {release}")
        # Debian's packages leave modules.dep to the postinst.
        run_checked(["depmod", "-a", "-b", root, release])
        info = {
            "series": series, "arch": arch, "package": pkg, "version": version,
            "release": release, "suites": suites,
            "vmlinuz": os.path.join(final, "root", "boot", f"vmlinuz-{release}"),
            "fetched": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        with open(os.path.join(tmp, "kernel.json"), "w") as f:
            json.dump(info, f, indent=1)
            f.write("\n")
        os.rename(tmp, final)
        tmp = None
        say(f"{series}: cached {release} ({pkg} {version}) in {final}")
        return info
    finally:
        apt.close()
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------- root file systems

def build_rootfs(sdir, suite, pkgs, recipe, customize, arch=None):
    """debootstrap's minbase of suite with pkgs into sdir/rootfs, once
    per package list and recipe (a number to bump when customize, which
    finishes the root, changes). arch: Debian's name of the root's
    architecture when not this machine's (arm64); debootstrap runs its
    programs through qemu-user-static then (binfmt_misc). Returns (the
    root, its key)."""
    key = hashlib.sha256(json.dumps([suite, MIRROR, recipe, pkgs, arch]).encode()).hexdigest()[:16]
    root = os.path.join(sdir, "rootfs")
    try:
        with open(os.path.join(root, ".tk-key")) as f:
            if f.read().strip() == key:
                return root, key
    except OSError:
        pass
    shutil.rmtree(root, ignore_errors=True)
    tmp = tempfile.mkdtemp(prefix=".rootfs-", dir=sdir)
    say(f"debootstrap {suite}{' ' + arch if arch else ''} with {' '.join(pkgs)}")
    t0 = time.monotonic()
    try:
        run_checked(["debootstrap", "--variant=minbase", f"--include={','.join(pkgs)}",
                     *([f"--arch={arch}"] if arch else []), suite, tmp, MIRROR], capture=True)
        customize(tmp)
        with open(os.path.join(tmp, "etc/fstab"), "w") as f:
            f.write("/dev/vda / ext4 rw 0 1\n")
        with open(os.path.join(tmp, "etc/initramfs-tools/modules"), "a") as f:
            f.write("virtio_pci\nvirtio_blk\next4\n")
        shutil.rmtree(os.path.join(tmp, "var/cache/apt/archives"), ignore_errors=True)
        os.makedirs(os.path.join(tmp, "var/cache/apt/archives/partial"))
        with open(os.path.join(tmp, ".tk-key"), "w") as f:
            f.write(key + "\n")
        os.rename(tmp, root)
        tmp = None
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    say(f"root file system cached in {root} ({time.monotonic() - t0:.0f} s)")
    return root, key


class Overlay:
    """lowers (top first) merged at a temporary mount point; writable
    into upper when given."""

    def __init__(self, parent, lowers, upper=None):
        self.dir = tempfile.mkdtemp(prefix=".overlay-", dir=parent)
        self.merged = os.path.join(self.dir, "merged")
        os.mkdir(self.merged)
        opts = "lowerdir=" + ":".join(lowers)
        if upper:
            work = os.path.join(self.dir, "work")
            os.mkdir(work)
            opts += f",upperdir={upper},workdir={work}"
        run_checked(["mount", "-t", "overlay", "overlay", "-o", opts, self.merged])

    def close(self):
        subprocess.run(["umount", self.merged])
        shutil.rmtree(self.dir, ignore_errors=True)


def remove(d):
    """rm -r d, after unmounting what a killed run left mounted in it."""
    for merged in glob.glob(os.path.join(d, "**", "merged"), recursive=True):
        subprocess.run(["umount", "-q", merged])
    shutil.rmtree(d, ignore_errors=True)


def kernel_layer(sdir, info, rootfs, key):
    """The kernel's modules and config as the root's /usr/lib/modules and
    /boot, and an initramfs that initramfs-tools in the root made for it:
    once per kernel and root."""
    release = info["release"]
    kdir = os.path.join(sdir, "kernels", info["series"])
    stamp = os.path.join(kdir, ".tk-key")
    want = f"{key} {release}"
    try:
        with open(stamp) as f:
            if f.read().strip() == want:
                return os.path.join(kdir, "layer"), os.path.join(kdir, "initrd.img")
    except OSError:
        pass
    shutil.rmtree(kdir, ignore_errors=True)
    layer = os.path.join(kdir, "layer")
    os.makedirs(os.path.join(layer, "usr/lib/modules"))
    os.makedirs(os.path.join(layer, "boot"))
    kroot = os.path.dirname(os.path.dirname(info["vmlinuz"]))   # its root/
    run_checked(["cp", "-al", os.path.join(kroot, "lib/modules", release),
                 os.path.join(layer, "usr/lib/modules/")])
    shutil.copy(os.path.join(kroot, "boot", f"config-{release}"), os.path.join(layer, "boot"))
    say(f"{info['series']}: making the initramfs of {release}")
    upper = tempfile.mkdtemp(prefix=".upper-", dir=sdir)
    ov = Overlay(sdir, [layer, rootfs], upper)
    try:
        run_checked(["chroot", ov.merged, "mkinitramfs", "-o", "/tmp/initrd.img", release],
                    capture=True)
        shutil.copy(os.path.join(ov.merged, "tmp/initrd.img"), os.path.join(kdir, "initrd.img"))
    finally:
        ov.close()
        shutil.rmtree(upper, ignore_errors=True)
    with open(stamp, "w") as f:
        f.write(want + "\n")
    return layer, os.path.join(kdir, "initrd.img")


def make_image(rdir, layers, path, size="4G"):
    """An ext4 image (sparse) of layers merged, top first."""
    ov = Overlay(rdir, layers)
    try:
        if os.path.exists(path):
            os.unlink(path)
        run_checked(["mkfs.ext4", "-q", "-F", "-L", "tk-root", "-d", ov.merged, path, size],
                    capture=True)
    finally:
        ov.close()



# ---------------------------------------------------------------- VMs

class QemuVM:
    """A VM process started at once; its output (after its command line)
    goes to log_path. stop() kills it and waits for it and its log."""

    def __init__(self, argv, log_path):
        self.log = open(log_path, "wb")
        self.log.write(f"# {shlex.join(argv)}\n".encode())
        self.log.flush()
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        procs.add(self.proc)
        self.copier = threading.Thread(target=copy_out, args=(self.proc.stdout, self.log),
                                       daemon=True)
        self.copier.start()

    def stop(self):
        kill(self.proc)
        self.proc.wait()
        procs.discard(self.proc)
        self.copier.join(10)
        self.log.close()


def run_parallel(jobs, items, fn):
    """[fn(item) for item in items], jobs of them at a time in threads
    (each starts a VM and waits for it); Ctrl-C kills every VM."""
    results = [None] * len(items)
    queue = list(range(len(items)))

    def worker():
        while True:
            with print_lock:
                if not queue:
                    return
                i = queue.pop(0)
            results[i] = fn(items[i])

    threads = [threading.Thread(target=worker, daemon=True)
               for _ in range(max(1, min(jobs, len(items))))]
    for t in threads:
        t.start()
    try:
        for t in threads:
            while t.is_alive():
                t.join(0.5)
    except KeyboardInterrupt:
        for p in list(procs):
            kill(p)
        raise
    return results


procs = set()


# Kernel console lines that say the kernel itself went wrong.
_FATAL = re.compile(rb"\] (Kernel panic - not syncing.*|Oops: .*|BUG: .*)")
_WARN = re.compile(rb"\] (WARNING: .*)")


def kernel_trouble(log):
    """The first panic, oops, BUG or WARNING on the kernel's console, and
    whether it is fatal (a WARNING is not)."""
    warn = None
    try:
        with open(log, "rb") as f:
            for line in f:
                m = _FATAL.search(line)
                if m:
                    return m.group(1).decode(errors="replace").strip(), True
                m = warn is None and _WARN.search(line)
                if m:
                    warn = m.group(1).decode(errors="replace").strip()
    except OSError:
        pass
    return warn, False


def copy_out(src, dst):
    for chunk in iter(lambda: src.read1(65536), b""):
        dst.write(chunk)
        dst.flush()


def kill(p):
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
