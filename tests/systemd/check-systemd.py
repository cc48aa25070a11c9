#!/usr/bin/python3
"""make check-systemd: tracekitd's Debian packages under a real systemd.

For each kernel series asked for (6.1 and 6.12 by default; Debian's
kernels, fetched as make check-vm fetches them) this boots, in QEMU with
TCG, a minimal Debian bookworm made with debootstrap (cached in
CACHE/systemd/rootfs/; CACHE is VM_CACHE, else BUILD/vm), with systemd as PID 1, and runs tests/systemd in
pytest on the host: each test acts in the guest through guest/tk-agent,
a shell on a virtio port. The guest holds the built .debs in /root/debs
and installs them itself. One line per kernel:

    check-systemd: 6.1.0-56-amd64: 14 passed, 0 failed, 0 skipped (160 s)

Exit 1 when any kernel had a failed test or did not boot.

What the guest holds, and how (tests/systemd/README.md): debootstrap's
minbase, the packages the tests use (systemd, dbus, curl, bpftool, ...)
and every package the .debs depend on, nothing else: so dpkg -i fails if
a dependency is missing from Depends. The root file system is an ext4
image made for each run from three layers: the cached root, the kernel's
modules (with an initramfs made once per kernel by initramfs-tools in the
root) and the run's own files (the .debs, the agent, the test programs).

Settings (environment, or make variables):
  SYSTEMD_KERNELS  series to boot (default "6.1 6.12")
  SYSTEMD_JOBS     VMs at once (default 2)
  VM_MIRROR        Debian mirror (default deb.debian.org)
  VM_CACHE         where kernels and the root are kept (default BUILD/vm)
Delete CACHE/systemd/rootfs to build the root again (it is rebuilt by
itself when the package list changes). Run as root.
"""
import argparse
import fcntl
import glob
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "vm"))
import junit  # noqa: E402  (tests/junit.py)
from vmlib import (SERIES, QemuVM, build_rootfs, cache_dir, die, fetch_kernel,  # noqa: E402
                   kernel_layer, kernel_trouble, kill, make_image, procs, remove,
                   run_checked, run_parallel, say)

SUITE = "bookworm"
# What the tests use in the guest, beside what the .debs depend on.
GUEST_PKGS = ["systemd", "systemd-sysv", "dbus", "kmod", "procps", "curl",
              "bpftool", "initramfs-tools", "e2fsprogs"]
# Bump when the root's recipe changes without its package list changing.
ROOTFS_RECIPE = 1
HOST_PKGS = ["qemu-system-x86", "debootstrap", "e2fsprogs"]
# Units that would run during the tests for no purpose of theirs (apt's
# timers reach for a network the guest does not have), and the console's
# login prompt.
MASKED = ["apt-daily.timer", "apt-daily-upgrade.timer", "dpkg-db-backup.timer",
          "e2scrub_all.timer", "fstrim.timer", "serial-getty@ttyS0.service"]


def debs_in(d):
    # Not the -dbgsym packages: a user installs without them.
    debs = sorted(deb for deb in glob.glob(os.path.join(d, "*.deb")) if "-dbgsym_" not in deb)
    if not debs:
        die(f"no .deb in {d}: run make package")
    return debs


def depends(debs):
    """The packages the .debs depend on (the first of alternatives), less
    the ones among themselves."""
    own, pkgs = set(), set()
    for deb in debs:
        fields = run_checked(["dpkg-deb", "-f", deb, "Package", "Depends"], capture=True)
        f = dict(line.split(": ", 1) for line in fields.splitlines() if ": " in line)
        own.add(f["Package"])
        for dep in f.get("Depends", "").split(","):
            name = dep.split("|")[0].strip().split()[0] if dep.strip() else ""
            if name:
                pkgs.add(name.split(":")[0])
    return sorted(pkgs - own)


# ---------------------------------------------------------------- the root

def customize_root(tmp):
    """The guest's network is loopback only; modules come from the
    kernel's layer, loaded by the initramfs and by modprobe."""
    for unit in MASKED:
        os.symlink("/dev/null", os.path.join(tmp, "etc/systemd/system", unit))
    with open(os.path.join(tmp, "etc/hostname"), "w") as f:
        f.write("tk-systemd\n")


def run_layer(rdir, debs, helper):
    """The run's own files: the .debs, the agent, the test programs."""
    layer = os.path.join(rdir, "layer")
    shutil.rmtree(layer, ignore_errors=True)
    for d in ("root/debs", "usr/local/sbin", "usr/local/bin", "etc/systemd/system",
              "etc/systemd/system/multi-user.target.wants"):
        os.makedirs(os.path.join(layer, d))
    for deb in debs:
        shutil.copy(deb, os.path.join(layer, "root/debs"))
    shutil.copy(os.path.join(HERE, "guest/tk-agent"), os.path.join(layer, "usr/local/sbin"))
    shutil.copy(os.path.join(HERE, "guest/tk-agent.service"),
                os.path.join(layer, "etc/systemd/system"))
    os.symlink("/etc/systemd/system/tk-agent.service",
               os.path.join(layer, "etc/systemd/system/multi-user.target.wants/tk-agent.service"))
    shutil.copy(helper, os.path.join(layer, "usr/local/bin/tk-syscalls"))
    return layer


def build_helper(sdir):
    out = os.path.join(sdir, "tk-syscalls")
    src = os.path.join(HERE, "syscalls.c")
    if not os.path.exists(out) or os.path.getmtime(out) < os.path.getmtime(src):
        run_checked(["cc", "-O2", "-Wall", "-Werror", "-static", "-o", out, src])
    return out


# ---------------------------------------------------------------- a run

def run_kernel(info, args, layers, initrd):
    release = info["release"]
    rdir = os.path.join(args.sdir, "runs", release)
    remove(rdir)
    os.makedirs(rdir)
    t0 = time.monotonic()
    mine = run_layer(rdir, args.debs, args.helper)
    image = os.path.join(rdir, "root.img")
    make_image(rdir, [mine] + layers, image)
    sock = os.path.join(rdir, "agent.sock")
    console = os.path.join(rdir, "console.log")
    log = os.path.join(rdir, "pytest.log")
    junit_xml = os.path.join(rdir, "junit.xml")
    argv = ["qemu-system-x86_64", "-accel", "tcg,thread=single", "-m", args.memory,
            "-smp", str(args.cpus), "-display", "none", "-monitor", "none",
            "-serial", f"file:{console}", "-no-reboot", "-nic", "none",
            "-kernel", info["vmlinuz"], "-initrd", initrd,
            "-drive", f"file={image},if=virtio,format=raw,cache=unsafe",
            "-device", "virtio-serial-pci",
            "-chardev", f"socket,id=agent,path={sock},server=on,wait=off",
            "-device", "virtserialport,chardev=agent,name=tk.agent",
            # tsc=reliable: TCG's vCPUs fail the TSC sync check (check-vm).
            "-append", "root=/dev/vda rw console=ttyS0 tsc=reliable quiet panic=-1"]
    say(f"booting {release} with systemd ({info['package']} {info['version']})")
    vm = QemuVM(argv, os.path.join(rdir, "qemu.log"))
    env = dict(os.environ, TK_GUEST_SOCKET=sock, TK_GUEST_CONSOLE=console,
               TK_GUEST_RELEASE=release, PYTHONDONTWRITEBYTECODE="1")
    with open(log, "wb") as out:
        t = subprocess.Popen(["/usr/bin/python3", "-m", "pytest", "-v", "-p", "no:cacheprovider",
                              f"--junitxml={junit_xml}", "tests/systemd", *args.pytest_args],
                             cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                             start_new_session=True)
        procs.add(t)
        try:
            rc = t.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            kill(t)
            rc = None
        procs.discard(t)
    if args.keep:
        say(f"{release}: the VM is kept; its agent: TK_GUEST_SOCKET={sock} "
            f"(python3 tests/systemd/guest.py {sock} 'COMMAND'); Ctrl-C ends it")
        try:
            vm.proc.wait()
        except KeyboardInterrupt:
            pass
    vm.stop()
    os.unlink(image)   # 4 GB sparse, a few hundred MB written
    r = junit.read(junit_xml)
    trouble, fatal = kernel_trouble(console)
    secs = time.monotonic() - t0
    if r is None:
        why = f"timed out after {args.timeout} s" if rc is None else f"pytest exit {rc}"
        return f"{release}: FAILED: no results ({why}); log: {log}", False
    line = (f"{release}: {r['passed']} passed, {r['failed'] + r['errors']} failed, "
            f"{r['skipped']} skipped ({secs:.0f} s)")
    ok = not (r["failed"] or r["errors"] or fatal) and rc == 0
    if trouble:
        line += f"; kernel: {trouble}"
    if not ok:
        line += f"; log: {log}"
        for name, outcome, msg in r["cases"]:
            if outcome in ("failure", "error"):
                line += f"\n    {outcome.upper()} {name}\n" + "\n".join("        " + m for m in msg)
    return line, ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True, help="the build directory")
    ap.add_argument("--debs", required=True, help="the directory of the built .debs")
    ap.add_argument("--kernels", default=os.environ.get("SYSTEMD_KERNELS") or "6.1 6.12")
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("SYSTEMD_JOBS") or 2))
    ap.add_argument("--cpus", type=int, default=2)
    ap.add_argument("--memory", default="2G")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds for a kernel's tests")
    ap.add_argument("--keep", action="store_true",
                    help="keep each VM running after its tests, to look around in")
    ap.add_argument("pytest_args", nargs="*", help="more pytest arguments")
    args = ap.parse_args()
    if os.geteuid() != 0:
        die("run as root: it mounts overlays, chroots and builds a root file system")
    if os.uname().machine != "x86_64":
        die("the guests run Debian's amd64 kernels: x86_64 hosts only")
    missing = [p for p in HOST_PKGS if not shutil.which(
        {"qemu-system-x86": "qemu-system-x86_64", "e2fsprogs": "mkfs.ext4"}.get(p, p))]
    if missing:
        die(f"missing {' '.join(missing)}: run make deps")
    kernels = args.kernels.replace(",", " ").split()
    for k in kernels:
        if k not in SERIES:
            die(f"SYSTEMD_KERNELS: unknown kernel series {k!r} (known: {' '.join(SERIES)})")
    args.build = os.path.abspath(args.build)
    args.debs = debs_in(os.path.abspath(args.debs))
    args.sdir = os.path.join(args.build, "systemd")      # this run's VMs
    os.makedirs(args.sdir, exist_ok=True)
    cache = cache_dir(args.build)
    croot = os.path.join(cache, "systemd")               # the root and its kernels
    os.makedirs(croot, exist_ok=True)
    with open(os.path.join(cache, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        infos = [fetch_kernel(cache, k) for k in kernels]
    # The root is read by every VM's image: held until they are done.
    with open(os.path.join(croot, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for stale in glob.glob(os.path.join(croot, ".*-*")):
            remove(stale)
        rootfs, key = build_rootfs(croot, SUITE, sorted(set(GUEST_PKGS) | set(depends(args.debs))),
                                   ROOTFS_RECIPE, customize_root)
        kernels = [kernel_layer(croot, i, rootfs, key) for i in infos]
        args.helper = build_helper(args.sdir)
        t0 = time.monotonic()
        results = run_parallel(args.jobs, list(range(len(infos))), lambda i: run_kernel(
            infos[i], args, [kernels[i][0], rootfs], kernels[i][1]))
    ok = True
    for line, good in results:
        ok &= good
        say(line)
    say(f"{len(results)} kernels in {time.monotonic() - t0:.0f} s" + ("" if ok else "; FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
