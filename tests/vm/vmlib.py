"""What make check-vm and make check-systemd share: Debian's archives
through an apt of their own, Debian's kernels fetched once into
BUILD/vm/kernels/<series>/, and the VM processes (their console logs,
their killing)."""
import glob
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

    def __init__(self, suites, parent=None):
        # Under parent, a dot name that the next run's cleanup removes if
        # this one is killed.
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

def kernel_dir(vmdir, series):
    return os.path.join(vmdir, "kernels", series)


def load_kernel(vmdir, series):
    try:
        with open(os.path.join(kernel_dir(vmdir, series), "kernel.json")) as f:
            info = json.load(f)
    except (OSError, ValueError):
        return None
    return info if os.path.exists(info.get("vmlinuz", "")) else None


def fetch_kernel(vmdir, series):
    """Fetch and unpack Debian's newest kernel of a series, once."""
    info = load_kernel(vmdir, series)
    if info:
        return info
    parent = os.path.join(vmdir, "kernels")
    os.makedirs(parent, exist_ok=True)
    final = kernel_dir(vmdir, series)
    shutil.rmtree(final, ignore_errors=True)   # incomplete: no kernel.json
    tmp = tempfile.mkdtemp(prefix=f".{series}-", dir=parent)
    apt = TempApt(SERIES[series], parent=parent)
    try:
        suites = " ".join(s for _, s in SERIES[series])
        say(f"{series}: looking up the newest kernel in {suites}")
        apt.update()
        deps = apt.cache("depends", "linux-image-amd64")
        pkgs = [l.split(":", 1)[1].strip() for l in deps.splitlines()
                if l.strip().startswith("Depends:")]
        pkgs = [p for p in pkgs if p.startswith(f"linux-image-{series}.")]
        if len(pkgs) != 1:
            die(f"{series}: linux-image-amd64 in {suites} does not name one "
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
            "series": series, "package": pkg, "version": version,
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


# ---------------------------------------------------------------- VMs

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
