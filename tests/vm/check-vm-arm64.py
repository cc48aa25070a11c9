#!/usr/bin/python3
"""make check-vm ARCH=arm64: the end-to-end suite under Debian's arm64
kernels in qemu-system-aarch64 (TCG), on the cross-built programs.

For each kernel series asked for (6.1 from bookworm, 6.12 from trixie)
this fetches Debian's newest linux-image-*-arm64 once into
CACHE/kernels/arm64-<series>/ and boots it on a Debian bookworm arm64
root: debootstrap's minbase with Python, pytest, gcc and the programs the
tests call (ARM64_PKGS), made here through qemu-user-static (binfmt_misc,
registered when missing) and cached in CACHE/arm64/rootfs/ (CACHE:
VM_CACHE, else BUILD/vm; the runs' files are in BUILD/vm/arm64/runs/). Each VM's
disk is an ext4 image of three layers: that root, the kernel's modules
with an initramfs that initramfs-tools made in the root (once per
kernel), and the run's files: the repository (less .git and build/) at
/tk/repo (not at its path here, which may be under /tmp, the guest's
tmpfs), with BUILD/arm64/bin and BUILD/arm64/static/bin, the cross-built
programs. The guest's init (tests/vm/arm64-init) runs pytest
there and powers off; its output is the VM's console log, and its JUnit
XML is read back out of the image. One line per kernel:

    check-vm-arm64: 6.1.0-41-arm64: 212 passed, 0 failed, 9 skipped (1500 s in 2 VMs)

It exits 1 when any kernel had a failed test, no results, or a kernel
that died. The suite, by VM_SCOPE: kernel (the default), tests/e2e's
tests marked kernel or portable (their result can differ between kernels
or architectures); arch (CI's), those marked arch or portable: the
kernel-marked tests of the files whose tools take a path of their own on
another architecture (conftest.ARCH_DEPENDENT: syscall tables,
registers, stacks, uprobes, kernel function names, perf events), and the
static programs'; all, every test. VM_PYTEST_ARGS replaces the
selection. Split by file across VM_SHARDS VMs per kernel.

Settings (environment, or make variables):
  VM_KERNELS      arm64 series to run (default "6.1 6.12")
  VM_SCOPE        kernel (default), arch or all: the selection above
  VM_CACHE        where kernels and the root are kept (default BUILD/vm)
  VM_PYTEST_ARGS  pytest arguments instead of the selection
  VM_JOBS, VM_SHARDS, VM_CPUS, VM_MEMORY, VM_TIMEOUT   as make check-vm's
Run as root, after make ARCH=arm64 and make ARCH=arm64 STATIC=1.
"""
import argparse
import fcntl
import glob
import os
import shlex
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import junit  # noqa: E402  (tests/junit.py)
from vmlib import (QemuVM, build_rootfs, cache_dir, die, fetch_kernel,  # noqa: E402
                   kernel_layer, kernel_trouble, make_image, remove,
                   run_checked, run_parallel, say)

ARCH = "arm64"
KERNELS = ["6.1", "6.12"]
SUITE = "bookworm"
# What the tests run in the guest (tests/e2e: cc, nm, readelf, bpftool,
# strace, ip, tc, modprobe, losetup, dmsetup, mkfs.*, valgrind, eu-stack).
ARM64_PKGS = ["python3", "python3-pytest", "gcc", "libc6-dev", "binutils", "bpftool", "strace",
              "iproute2", "procps", "kmod", "util-linux", "mount", "dmsetup", "e2fsprogs",
              "xfsprogs", "btrfs-progs", "valgrind", "elfutils", "initramfs-tools",
              # the shared libraries of the dynamic programs (debian/control's)
              "libelf1", "libdw1", "zlib1g", "libcap-ng0", "libmicrohttpd12", "libinih1",
              "libsystemd0", "libyaml-0-2", "libcrypt1", "libgnutls30",
              # promtool, which tracekitd's tests check /metrics with, and the
              # certificates and bcrypt hash of its web config's tests
              "prometheus", "openssl", "apache2-utils"]
ROOTFS_RECIPE = 1
HOST_PKGS = {"qemu-system-aarch64": "qemu-system-arm", "qemu-aarch64-static": "qemu-user-static",
             "debootstrap": "debootstrap", "mkfs.ext4": "e2fsprogs", "debugfs": "e2fsprogs"}
BINFMT = "/proc/sys/fs/binfmt_misc"
SCOPES = {"kernel": ["-m", "kernel or portable"], "arch": ["-m", "arch or portable"], "all": []}


def ensure_binfmt():
    """arm64 programs run here through qemu-user-static: debootstrap's
    second stage and mkinitramfs in the root need it."""
    if not os.path.exists(os.path.join(BINFMT, "register")):
        run_checked(["mount", "-t", "binfmt_misc", "binfmt_misc", BINFMT])
    if not os.path.exists(os.path.join(BINFMT, "qemu-aarch64")):
        with open("/usr/lib/binfmt.d/qemu-aarch64.conf") as f:
            rule = f.read().strip()
        with open(os.path.join(BINFMT, "register"), "w") as f:
            f.write(rule)


def customize_root(tmp):
    with open(os.path.join(tmp, "etc/hostname"), "w") as f:
        f.write("tk-arm64\n")
    # debootstrap writes no /etc/hosts; gethostlatency's tests resolve
    # through it.
    with open(os.path.join(tmp, "etc/hosts"), "w") as f:
        f.write("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
    # The initramfs holds only the modules that mount the root (virtio_blk,
    # ext4: etc/initramfs-tools/modules): made under qemu-user, all of
    # them (MODULES=most) take 8 minutes, these a fraction of that.
    with open(os.path.join(tmp, "etc/initramfs-tools/conf.d/tk-modules"), "w") as f:
        f.write("MODULES=list\n")


# Where the guest has the repository: not at its path here, which may be
# under /tmp (a fresh clone in CI), where the guest mounts a tmpfs.
GUEST_ROOT = "/tk/repo"


def run_layer(rdir, build, shard_args):
    """The repository (no .git, no build/) at GUEST_ROOT, the cross-built
    programs, the guest's init and what pytest is to run."""
    layer = os.path.join(rdir, "layer")
    shutil.rmtree(layer, ignore_errors=True)
    repo = os.path.join(layer, GUEST_ROOT.lstrip("/"))
    shutil.copytree(ROOT, repo, symlinks=True,
                    ignore=lambda d, names: [n for n in names if d == ROOT and n in (".git", "build")]
                    + [n for n in names if n in ("__pycache__",)])
    for sub in ("bin", "static/bin"):
        src = os.path.join(build, ARCH, sub)
        if not os.path.isdir(src):
            die(f"{src} is missing: run make ARCH=arm64{' STATIC=1' if 'static' in sub else ''}")
        shutil.copytree(src, os.path.join(repo, "build", ARCH, sub), symlinks=True)
    os.makedirs(os.path.join(layer, "tk"), exist_ok=True)
    shutil.copy(os.path.join(HERE, "arm64-init"), os.path.join(layer, "tk/init"))
    os.chmod(os.path.join(layer, "tk/init"), 0o755)
    with open(os.path.join(layer, "tk/run-args"), "w") as f:
        f.write("".join(a + "\n" for a in [GUEST_ROOT, *shard_args]))
    return layer


def debugfs_cat(image, path):
    p = subprocess.run(["debugfs", "-R", f"cat {path}", image], capture_output=True)
    return p.stdout if p.returncode == 0 else b""


def run_vm(info, args, layers, initrd, shard):
    """Boot one VM on shard (k, n, pytest args); returns its result."""
    release = info["release"]
    k, n, pytest_args = shard
    rdir = os.path.join(args.adir, "runs", f"{release}.{k}")
    remove(rdir)
    os.makedirs(rdir)
    t0 = time.monotonic()
    image = os.path.join(rdir, "root.img")
    make_image(rdir, [run_layer(rdir, args.build, pytest_args)] + layers, image, "6G")
    console = os.path.join(rdir, "console.log")
    argv = ["qemu-system-aarch64", "-M", "virt", "-cpu", "cortex-a72",
            "-accel", "tcg,thread=single", "-m", args.memory, "-smp", str(args.cpus),
            "-display", "none", "-monitor", "none", "-serial", f"file:{console}",
            "-no-reboot", "-nic", "none", "-kernel", info["vmlinuz"], "-initrd", initrd,
            "-drive", f"file={image},if=none,id=root,format=raw,cache=unsafe",
            "-device", "virtio-blk-pci,drive=root",
            "-append", "root=/dev/vda rw console=ttyAMA0 panic=-1 init=/tk/init"]
    say(f"booting {release} ({info['package']} {info['version']}, {args.cpus} vCPUs, "
        f"TCG, shard {k}/{n})")
    timed_out = False
    vm = QemuVM(argv, os.path.join(rdir, "qemu.log"))
    try:
        vm.proc.wait(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    vm.stop()
    junit_xml = os.path.join(rdir, "junit.xml")
    with open(junit_xml, "wb") as f:
        f.write(debugfs_cat(image, "/tk/results/junit.xml"))
    rc = debugfs_cat(image, "/tk/results/rc").strip()
    os.unlink(image)
    r = junit.read(junit_xml)
    trouble, fatal = kernel_trouble(console)
    return {"secs": time.monotonic() - t0, "results": r, "timed_out": timed_out,
            "pytest_rc": int(rc) if rc.isdigit() else None, "trouble": trouble,
            "fatal": fatal, "log": console}


def shards(pytest_args, n):
    """n pytest argument lists, the selected test files dealt out by their
    number of tests (largest first, each to the lightest shard)."""
    out = subprocess.run(["/usr/bin/python3", "-m", "pytest", "--collect-only", "-q",
                          "-p", "no:cacheprovider", *pytest_args],
                         cwd=ROOT, capture_output=True, text=True,
                         env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    files = {}
    for line in out.stdout.splitlines():
        if "::" in line and line.startswith("tests/"):
            f = line.split("::", 1)[0]
            files[f] = files.get(f, 0) + 1
    if not files:
        die("no test selected:\n" + out.stdout[-2000:] + out.stderr[-2000:])
    opts = [a for a in pytest_args if not a.startswith("tests/")]
    parts = [[0, []] for _ in range(min(n, len(files)))]
    for f, count in sorted(files.items(), key=lambda x: -x[1]):
        part = min(parts, key=lambda p: p[0])
        part[0] += count
        part[1].append(f)
    return [opts + sorted(p[1]) for p in parts]


def summarize(info, results):
    release = info["release"]
    secs = max([r["secs"] for r in results] or [0])
    line = f"{release}:"
    ok = True
    if any(r["results"] is None for r in results):
        bad = [r for r in results if r["results"] is None]
        why = ", ".join("timed out" if r["timed_out"] else "the kernel died" if r["fatal"]
                        else f"pytest exit {r['pytest_rc']}" if r["pytest_rc"] is not None
                        else "did not boot or the suite did not run" for r in bad)
        return f"{line} FAILED: no results ({why}); logs: {' '.join(r['log'] for r in bad)}", False
    n = {k: sum(r["results"][k] for r in results) for k in ("passed", "failed", "errors", "skipped")}
    line += f" {n['passed']} passed, {n['failed'] + n['errors']} failed, {n['skipped']} skipped"
    line += f" ({secs:.0f} s in {len(results)} VMs)"
    ok = not (n["failed"] or n["errors"]) and all(
        r["pytest_rc"] == 0 and not r["fatal"] and not r["timed_out"] for r in results)
    rcs = sorted({r["pytest_rc"] for r in results if r["pytest_rc"] != 0}, key=str)
    if rcs and not (n["failed"] or n["errors"]):
        line += f", pytest exit {', '.join(map(str, rcs))}"
    troubles = sorted({r["trouble"] for r in results if r["trouble"]})
    if troubles:
        line += f"; kernel: {'; '.join(troubles)}"
    if not ok:
        line += "; logs: " + " ".join(r["log"] for r in results)
        for r in results:
            for name, outcome, msg in r["results"]["cases"]:
                if outcome in ("failure", "error"):
                    line += f"\n    {outcome.upper()} {name}\n" + "\n".join("        " + m for m in msg)
    return line, ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True, help="the build directory (build, not build/arm64)")
    ap.add_argument("--kernels", default=os.environ.get("VM_KERNELS") or " ".join(KERNELS))
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("VM_JOBS") or 2))
    ap.add_argument("--shards", type=int, default=int(os.environ.get("VM_SHARDS") or 2))
    ap.add_argument("--cpus", type=int, default=int(os.environ.get("VM_CPUS") or 2))
    ap.add_argument("--memory", default=os.environ.get("VM_MEMORY") or "2G")
    ap.add_argument("--timeout", type=int, default=int(os.environ.get("VM_TIMEOUT") or 3600))
    args = ap.parse_args()
    if os.geteuid() != 0:
        die("run as root: it registers binfmt_misc, mounts overlays and builds a root")
    missing = sorted({pkg for prog, pkg in HOST_PKGS.items() if not shutil.which(prog)})
    if missing:
        die(f"missing {' '.join(missing)}: run make deps ARCH=arm64")
    kernels = args.kernels.replace(",", " ").split()
    for k in kernels:
        if k not in KERNELS:
            die(f"VM_KERNELS: no arm64 kernel series {k!r} here (known: {' '.join(KERNELS)})")
    pytest_args = shlex.split(os.environ.get("VM_PYTEST_ARGS") or "")
    if not any(a.startswith("tests/") for a in pytest_args):
        pytest_args.append("tests/e2e")
    scope = os.environ.get("VM_SCOPE") or "kernel"
    if scope not in SCOPES:
        die(f"VM_SCOPE: {scope!r} is not one of {', '.join(SCOPES)}")
    if not os.environ.get("VM_PYTEST_ARGS"):
        pytest_args = SCOPES[scope] + pytest_args
    args.build = os.path.abspath(args.build)
    args.adir = os.path.join(args.build, "vm", ARCH)   # this run's VMs
    os.makedirs(args.adir, exist_ok=True)
    cache = cache_dir(args.build)
    croot = os.path.join(cache, ARCH)                   # the root and its kernels
    os.makedirs(croot, exist_ok=True)
    ensure_binfmt()
    with open(os.path.join(cache, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        infos = [fetch_kernel(cache, k, ARCH) for k in kernels]
    # The root is read by every VM's image: held until they are done.
    with open(os.path.join(croot, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for stale in glob.glob(os.path.join(croot, ".*-*")):
            remove(stale)
        rootfs, key = build_rootfs(croot, SUITE, sorted(ARM64_PKGS), ROOTFS_RECIPE,
                                   customize_root, arch=ARCH)
        kernel_layers = [kernel_layer(croot, i, rootfs, key) for i in infos]
        parts = shards(pytest_args, args.shards)
        t0 = time.monotonic()
        work = [(i, s) for i in range(len(infos)) for s in range(len(parts))]
        done = run_parallel(args.jobs, work, lambda w: run_vm(
            infos[w[0]], args, [kernel_layers[w[0]][0], rootfs], kernel_layers[w[0]][1],
            (w[1] + 1, len(parts), parts[w[1]])))
        results = {}
        for (i, _), r in zip(work, done):
            results.setdefault(i, []).append(r)
    ok = True
    for i, info in enumerate(infos):
        line, good = summarize(info, results.get(i, []))
        ok &= good
        say(line)
    say(f"{len(infos)} arm64 kernels in {time.monotonic() - t0:.0f} s" + ("" if ok else "; FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
