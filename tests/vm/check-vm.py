#!/usr/bin/python3
"""make check-vm: the end-to-end suite under Debian's kernels in QEMU.

For each kernel series asked for (5.10 from bullseye, 6.1 from bookworm,
6.12 from trixie) this fetches Debian's newest linux-image-*-amd64 once into
BUILD/vm/kernels/<series>/, boots it with virtme-ng under TCG on this
machine's own userland (the guest sees the host's filesystem read-only, so
the repository and BUILD are at the same paths), runs tests/e2e in it (the
tests marked kernel, unless VM_SCOPE=all), and prints one line per kernel:

    check-vm: 5.10.0-46-amd64: 275 passed, 0 failed, 5 skipped (206 s)

(after it, the ids of failed tests, indented). It exits 1 when any kernel
had a failed test or an error, did not boot, or panicked.

Each kernel's suite is split by test file across VM_SHARDS VMs (tests/vm/
README.md). Each VM's full output (boot, environment, pytest -v) goes to
BUILD/vm/<release>.<k>.log; the kernel's JUnit XML to
BUILD/vm/results/<release>/.

Settings (environment, or make variables on make's command line):
  VM_KERNELS      series to run, e.g. "6.1" or "5.10 6.12" (default: all)
  VM_SCOPE        "kernel" (default): only tests marked kernel, whose
                  result can differ between kernels (tests/e2e/conftest.py
                  says which); "all": the whole suite, as the host runs it
  VM_HOST_COVERS  the series whose VMs run only the tests marked kernel
                  that the host's last make check did not pass
                  (BUILD/e2e/junit.xml); default every series but the
                  oldest (5.10), each when the host's kernel is newer;
                  space-separated; "" for none. The oldest then runs all
                  but what the host passed of the files that
                  tests/e2e/kernel_paths.py says take no path of their
                  own there
  VM_PYTEST_ARGS  extra pytest arguments, e.g. "-k execsnoop -x"; naming
                  test files (tests/e2e/test_x.py) replaces tests/e2e
  VM_JOBS         VMs run at once (default 2)
  VM_SHARDS       VMs each kernel's suite is split across, by test file
                  (default 2; 1 where VM_PYTEST_ARGS names test files)
  VM_CPUS         vCPUs per VM (default 2; one host thread runs them all)
  VM_MEMORY       memory per VM (default 2G)
  VM_TIMEOUT      seconds a VM may take, boot and suite (default 2400)
  VM_MIRROR, VM_SECURITY_MIRROR   Debian mirrors (default deb.debian.org)

Kernels are fetched once: delete BUILD/vm/kernels/<series> to fetch the
newest again. Missing host packages (qemu-system-x86, udev, busybox-static,
and virtme-ng from trixie) are installed first; run as root.
"""
import argparse
import fcntl
import glob
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
import junit  # noqa: E402  (tests/junit.py)
from vmlib import (SERIES, MIRROR, TempApt, print_lock, procs, apt_install,  # noqa: E402
                   copy_out, die, fetch_kernel, installed, kernel_trouble, kill, say)

# Host packages from this machine's own suites (also in the Makefile's
# DEPS_PKGS). virtme-ng needs udev for its /dev/virtio-ports names and a
# static busybox for the initramfs that loads the kernel's virtio modules.
HOST_PKGS = ["qemu-system-x86", "udev", "busybox-static"]
# virtme-ng is not in bookworm: it comes from trixie (architecture "all";
# its dependencies are in bookworm).
VNG_SUITE = (MIRROR, "trixie")

def ensure_host_packages():
    """Install what is missing, and nothing when nothing is."""
    missing = [p for p in HOST_PKGS if not installed(p)]
    need_vng = not installed("virtme-ng")
    if not missing and not need_vng:
        return
    if os.geteuid() != 0:
        die(f"run as root to install {' '.join(missing + ['virtme-ng'] * need_vng)}")
    args = list(missing)
    apt = None
    try:
        if need_vng:
            say(f"fetching virtme-ng from {VNG_SUITE[1]}")
            apt = TempApt([VNG_SUITE])
            apt.update()
            args.append(apt.download("virtme-ng", apt.dir))
        say(f"installing {' '.join(missing + ['virtme-ng'] * need_vng)}")
        apt_install(args)
    finally:
        if apt:
            apt.close()


# ---------------------------------------------------------------- VMs



def run_kernel(info, args, pytest_args, shard=None):
    """Boot one kernel, run the suite (or shard k of n of it: shard is
    (k, n, files)) in it; returns a result dict."""
    release = info["release"]
    res = os.path.join(args.vmdir, "results", release)
    log = os.path.join(args.vmdir, f"{release}.log")
    if shard:
        res = os.path.join(res, f"shard-{shard[0]}")
        log = os.path.join(args.vmdir, f"{release}.{shard[0]}.log")
        pytest_args = pytest_args + shard[2]
    shutil.rmtree(res, ignore_errors=True)
    os.makedirs(res)
    with open(os.path.join(res, "pytest-args"), "w") as f:
        for a in pytest_args:
            f.write(a + "\n")
    # vng hands its arguments to a shell unquoted: paths must be plain.
    guest = (f"{HERE}/guest.sh {res} {args.bin}")
    # --verbose: the kernel's console goes to the log too (boot failures,
    # warnings and oopses while the suite runs).
    argv = ["vng", "--run", info["vmlinuz"], "--disable-kvm",
            "--disable-microvm", "--user", "root", "--verbose",
            "--cpus", str(args.cpus), "--memory", args.memory,
            # TCG's vCPUs fail the kernel's TSC sync check, and the hpet
            # it falls back to makes every clock read an emulated MMIO.
            "--append", "tsc=reliable",
            # One host thread runs all vCPUs in turn. With a thread per
            # vCPU (MTTCG), a vCPU can run kernel text that another one is
            # live-patching with int3 (static keys, fentry, kprobes): 6.12
            # died of "Oops: int3" in __schedule. The guest still has two
            # CPUs (runqlat's tests want one to themselves), at no cost in
            # time.
            "--qemu-opts=-accel tcg,thread=single",
            "--rwdir", f"{res}={res}", "--cwd", ROOT, "--exec", guest]
    part = f", shard {shard[0]}/{shard[1]}" if shard else ""
    say(f"booting {release} ({info['package']} {info['version']}, "
        f"{args.cpus} vCPUs, TCG{part})")
    t0 = time.monotonic()
    timed_out = False
    with open(log, "wb") as out:
        out.write(f"# {info['package']} {info['version']} from {info['suites']}\n"
                  f"# {shlex.join(argv)}\n".encode())
        out.flush()
        # A pipe, not the log file itself: qemu reopens its stdout through
        # /proc/self/fd/1 for each of several outputs, each with O_TRUNC.
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             cwd=ROOT, start_new_session=True)
        procs.add(p)
        copier = threading.Thread(target=copy_out, args=(p.stdout, out),
                                  daemon=True)
        copier.start()
        try:
            rc = p.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            kill(p)
            rc = p.wait()
        finally:
            procs.discard(p)
        kill(p)   # whatever vng left behind holds the pipe open
        copier.join(10)
        secs = time.monotonic() - t0
        if timed_out:
            out.write(f"\n# check-vm: killed after {args.timeout} s\n".encode())
    r = {"release": release, "series": info["series"], "secs": secs,
         "vms": 1, "log": log, "rc": rc, "timed_out": timed_out,
         "failed_tests": []}
    r.update(read_junit(os.path.join(res, "junit.xml")))
    try:
        with open(os.path.join(res, "env-problems")) as f:
            r["env_problems"] = [l for l in f.read().split("\n") if l]
    except OSError:
        r["env_problems"] = []
    try:
        with open(os.path.join(res, "rc")) as f:
            r["pytest_rc"] = int(f.read().strip())
    except (OSError, ValueError):
        r["pytest_rc"] = None
    r["kernel_trouble"], r["kernel_fatal"] = kernel_trouble(log)
    return r


def read_junit(path):
    r = junit.read(path)
    if r is None:
        return {"ran": False}
    failed = [f"{outcome.upper()} {name}\n" + "\n".join("        " + l for l in msg)
              for name, outcome, msg in r["cases"] if outcome in ("failure", "error")]
    return {"ran": True, "passed": r["passed"], "failed": r["failed"],
            "errors": r["errors"], "skipped": r["skipped"], "failed_tests": failed}


def summary(r):
    """The one line of a kernel, and whether it is a success."""
    head = f"{r['release']}:"
    tail = (f"({r['secs']:.0f} s)" if r["vms"] == 1
            else f"({r['secs']:.0f} s in {r['vms']} VMs)")
    kernel = f"; kernel: {r['kernel_trouble']}" if r["kernel_trouble"] else ""
    if not r["ran"]:
        why = (f"timed out after {r['secs']:.0f} s, no results" if r["timed_out"]
               else "the kernel died, no results" if r["kernel_fatal"]
               else f"pytest ended without results (exit {r['pytest_rc']})"
               if r["pytest_rc"] is not None
               else f"did not boot or the suite did not run (vng exit {r['rc']})")
        return f"{head} FAILED: {why} {tail}{kernel}; log: {r['log']}", False
    line = f"{head} {r['passed']} passed, {r['failed']} failed, {r['skipped']} skipped"
    if r["errors"]:
        line += f", {r['errors']} errors"
    ok = not (r["failed"] or r["errors"] or r["env_problems"]
              or r["kernel_fatal"])
    if r["timed_out"]:
        line += ", timed out"
        ok = False
    elif r["pytest_rc"] != 0 and ok:
        # No test failed, yet pytest did (bad VM_PYTEST_ARGS, no tests
        # collected, an internal error), or it never said how it ended.
        line += f", pytest exit {r['pytest_rc']}"
        ok = False
    line += f" {tail}"
    if r["env_problems"]:
        line += f"; guest environment: {'; '.join(r['env_problems'])}"
    line += kernel
    if not ok:
        line += f"; log: {r['log']}"
    return line, ok


# ---------------------------------------------------------------- shards

def collect(pytest_args):
    """The test ids the guests would run, collected on the host (the files
    and marks are the same there), in the suite's order."""
    out = subprocess.run(
        ["/usr/bin/python3", "-m", "pytest", "--collect-only", "-q",
         "-p", "no:cacheprovider", "tests/e2e", *pytest_args],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    if out.returncode != 0:
        die("collecting the suite on the host failed:\n" + out.stdout[-3000:])
    return [line for line in out.stdout.splitlines()
            if "::" in line and line.startswith("tests/")]


def per_file(ids):
    """{file: number of tests} of test ids."""
    files = {}
    for i in ids:
        f = i.split("::", 1)[0]
        files[f] = files.get(f, 0) + 1
    return files


def version(release):
    """(major, minor) of a kernel release or series: "6.18.1-x" -> (6, 18)."""
    m = re.match(r"(\d+)\.(\d+)", release)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def host_passed(junit_path, bin_dir):
    """The test ids the host's last `make check` passed, or (None, why
    not) when its results are missing or older than the tools or the
    tests (they would not speak for what is built now)."""
    try:
        when = os.path.getmtime(junit_path)
    except OSError:
        return None, f"no host results at {junit_path}"
    newer = [p for d in (bin_dir, os.path.join(ROOT, "tests", "e2e"))
             for p in glob.glob(os.path.join(d, "**", "*"), recursive=True)
             if os.path.isfile(p) and "__pycache__" not in p
             and os.path.getmtime(p) > when]
    if newer:
        return None, f"{junit_path} is older than {os.path.relpath(newer[0], ROOT)}"
    r = junit.read(junit_path)
    if r is None:
        return None, f"{junit_path} is cut short"
    return {i for i, outcome, _ in r["cases"] if outcome == "passed"}, None


def last_seconds(vmdir, release):
    """Each test file's seconds in this kernel's last run, where there was
    one: {file: seconds}."""
    secs = {}
    try:
        root = ET.parse(os.path.join(vmdir, "results", release, "junit.xml")).getroot()
    except (OSError, ET.ParseError):
        return secs
    for case in root.iter("testcase"):
        f = junit.nodeid(case.get("classname", ""), case.get("name", "")).split("::")[0]
        secs[f] = secs.get(f, 0.0) + float(case.get("time") or 0)
    return secs


def split(files, weight, n):
    """files in n shards of about equal weight, heaviest file first into
    the lightest shard; each shard's files in the suite's order."""
    shards = [[0.0, []] for _ in range(min(n, len(files)))]
    for f in sorted(files, key=lambda f: (-weight(f), f)):
        lightest = min(shards, key=lambda s: s[0])
        lightest[0] += weight(f)
        lightest[1].append(f)
    return [sorted(s[1]) for s in shards]


def merge(release, vmdir, parts):
    """The shards' results as one kernel's: the counts added, every failed
    test, and the JUnit XML of all of them in results/<release>/, where
    tests/repeat.py reads it."""
    r = dict(parts[0])
    r["secs"] = sum(p["secs"] for p in parts)
    r["vms"] = len(parts)
    r["log"] = " ".join(p["log"] for p in parts)
    r["ran"] = all(p["ran"] for p in parts)
    r["timed_out"] = any(p["timed_out"] for p in parts)
    for k in ("passed", "failed", "errors", "skipped"):
        r[k] = sum(p.get(k, 0) for p in parts)
    r["failed_tests"] = [t for p in parts for t in p["failed_tests"]]
    r["env_problems"] = sorted({e for p in parts for e in p["env_problems"]})
    rcs = [p["pytest_rc"] for p in parts]
    r["pytest_rc"] = None if None in rcs else max(rcs)
    trouble = [p for p in parts if p["kernel_trouble"]]
    fatal = [p for p in trouble if p["kernel_fatal"]]
    r["kernel_trouble"], r["kernel_fatal"] = (
        ((fatal or trouble)[0]["kernel_trouble"], bool(fatal)) if trouble
        else (None, False))
    res = os.path.join(vmdir, "results", release)
    suites = ET.Element("testsuites")
    for k in range(1, len(parts) + 1):
        try:
            root = ET.parse(os.path.join(res, f"shard-{k}", "junit.xml")).getroot()
        except (OSError, ET.ParseError):
            continue
        suites.extend([root] if root.tag == "testsuite" else list(root))
    if r["ran"]:
        ET.ElementTree(suites).write(os.path.join(res, "junit.xml"),
                                     encoding="utf-8", xml_declaration=True)
    if r["pytest_rc"] is not None:
        with open(os.path.join(res, "rc"), "w") as f:
            f.write(f"{r['pytest_rc']}\n")
    return r


# ------------------------------------------------ what the host ran

def host_covers(kernels, scope, named):
    """The series whose tests the host's own run stands for: a set.

    Every series of the run but the oldest, each when the host runs a
    newer kernel. Such a series runs only the tests marked kernel that the
    host did not pass (kernel functions, which this host cannot trace, and
    what the host skipped or failed): a code path it takes where the host
    takes another is one for an older kernel, which the oldest series runs
    (all of it but what tests/e2e/kernel_paths.py says is the same there:
    oldest_selection), or one for a feature this host lacks, whose tests
    the host did not pass. VM_HOST_COVERS names the series instead (space-separated;
    "" for none)."""
    setting = os.environ.get("VM_HOST_COVERS")
    if scope != "kernel" or named:
        return set()
    if setting is not None:
        chosen = setting.replace(",", " ").split()
        for k in chosen:
            if k not in SERIES:
                die(f"VM_HOST_COVERS: unknown kernel series {k!r} "
                    f"(known: {' '.join(SERIES)})")
        return set(chosen) & set(kernels)
    oldest = min(kernels, key=version)   # of this run: it runs in full
    host = version(os.uname().release)
    return {k for k in kernels if k != oldest and host > version(k)}


def oldest_selection(ids, info, args):
    """Of ids, for the oldest series: every test but those of the files
    whose tools take no path of their own there (kernel_paths.py) that
    the host's last run passed."""
    sys.path.insert(0, os.path.join(ROOT, "tests/e2e"))
    from kernel_paths import SAME_ON_OLDEST
    passed, why = host_passed(args.host_results, args.bin)
    if passed is None:
        say(f"{info['release']}: every test marked kernel ({why})")
        return ids
    same = {f"tests/e2e/{stem}.py" for stem in SAME_ON_OLDEST}
    mine = [i for i in ids if i.split("::", 1)[0] not in same or i not in passed]
    say(f"{info['release']}: {len(mine)} tests marked kernel: all but the {len(ids) - len(mine)} "
        f"the host passed in the files whose tools take no path of their own there "
        f"(tests/e2e/kernel_paths.py)")
    return mine


def beyond_host(ids, info, args):
    """Of ids, those the host's last run did not pass; all of them, said
    why, where that run cannot speak for what is built now."""
    passed, why = host_passed(args.host_results, args.bin)
    if passed is None:
        say(f"{info['release']}: every test marked kernel ({why})")
        return ids
    mine = [i for i in ids if i not in passed]
    say(f"{info['release']}: the {len(mine)} tests marked kernel that the host "
        f"({os.uname().release}) did not pass; it passed the other {len(ids) - len(mine)} "
        f"({os.path.relpath(args.host_results, ROOT)})")
    return mine


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True, help="the build directory")
    ap.add_argument("--bin", required=True, help="the built tools")
    ap.add_argument("--kernels", default=os.environ.get("VM_KERNELS") or " ".join(SERIES))
    # Measured on 2 host cores (tests/vm/README.md): the suite mostly
    # waits, so VMs at once overlap well; with three, their threads
    # outnumber the cores and runqlat's scheduling tests turn flaky.
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("VM_JOBS") or 2))
    ap.add_argument("--shards", type=int, default=int(os.environ.get("VM_SHARDS") or 2))
    ap.add_argument("--cpus", type=int, default=int(os.environ.get("VM_CPUS") or 2))
    ap.add_argument("--memory", default=os.environ.get("VM_MEMORY") or "2G")
    ap.add_argument("--timeout", type=int,
                    default=int(os.environ.get("VM_TIMEOUT") or 2400))
    ap.add_argument("--host-results", help="the host's JUnit XML of tests/e2e "
                    "(default BUILD/e2e/junit.xml, written by make check)")
    ap.add_argument("--fetch-only", action="store_true",
                    help="install and fetch what is missing, boot nothing")
    args = ap.parse_args()
    scope = os.environ.get("VM_SCOPE") or "kernel"
    if scope not in ("kernel", "all"):
        die(f"VM_SCOPE is 'kernel' or 'all', not {scope!r}")
    # First, so that a -m of VM_PYTEST_ARGS wins (pytest keeps the last).
    pytest_args = (["-m", "kernel"] if scope == "kernel" else []) + \
        shlex.split(os.environ.get("VM_PYTEST_ARGS", ""))

    if os.uname().machine != "x86_64":
        die("the kernel matrix runs Debian's amd64 kernels: x86_64 hosts only")
    if os.geteuid() != 0:
        die("run as root: the suite loads BPF programs and the VM shares this root")
    args.build = os.path.abspath(args.build)
    args.bin = os.path.abspath(args.bin)
    args.vmdir = os.path.join(args.build, "vm")
    args.host_results = os.path.abspath(
        args.host_results or os.path.join(args.build, "e2e", "junit.xml"))
    for path in (ROOT, args.build, args.bin):
        if any(c.isspace() or c in "'\"\\$`;&|<>()*?[]" for c in path):
            die(f"{path}: virtme-ng passes paths through a shell; use a plain path")
    kernels = args.kernels.replace(",", " ").split()
    for k in kernels:
        if k not in SERIES:
            die(f"VM_KERNELS: unknown kernel series {k!r} (known: {' '.join(SERIES)})")
    if not kernels:
        die("VM_KERNELS is empty")
    if not args.fetch_only:
        for t in ("execsnoop",):
            if not os.access(os.path.join(args.bin, t), os.X_OK):
                die(f"{args.bin}/{t} is not built; run make")

    ensure_host_packages()
    os.makedirs(args.vmdir, exist_ok=True)
    # One fetcher at a time per build directory. Kernels are kept in
    # BUILD/vm, never in VM_CACHE: virtme-ng's guest sees this machine's
    # files but covers /var with a tmpfs of its own, and CI's cache is in
    # /var/cache; a guest booted from there found no kernel modules
    # (veth, sch_netem: 104 errors on 5.10).
    with open(os.path.join(args.vmdir, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for stale in glob.glob(os.path.join(args.vmdir, "kernels", ".*-*")):
            shutil.rmtree(stale, ignore_errors=True)
        infos = [fetch_kernel(args.vmdir, k) for k in kernels]
    if args.fetch_only:
        for i in infos:
            say(f"{i['series']}: {i['release']} ({i['package']} {i['version']})")
        return 0

    # Each kernel's suite in shards, each shard a VM of its own, the
    # heaviest first: two VMs at a time then finish together, where whole
    # kernels left the last one running alone for most of its time.
    # Naming test files (VM_PYTEST_ARGS) runs them in one VM per kernel.
    named = any(a.startswith("tests/") and os.path.exists(os.path.join(ROOT, a.split("::")[0]))
                for a in shlex.split(os.environ.get("VM_PYTEST_ARGS", "")))
    covers = host_covers(kernels, scope, named)
    # The oldest series runs what takes a path of its own there
    # (oldest_selection), where the host's results count.
    oldest = min(kernels, key=version) if scope == "kernel" and not named and \
        os.environ.get("VM_HOST_COVERS") is None else None
    ids = collect(pytest_args) if (args.shards > 1 or covers or oldest) and not named else None
    if ids == []:
        die("no test is selected: " + shlex.join(["-m", "kernel"] + pytest_args))
    jobs = []   # (kernel index, shard or None, weight)
    skipped = {}   # kernel index: why it boots no VM
    for i, info in enumerate(infos):
        res = os.path.join(args.vmdir, "results", info["release"])
        shutil.rmtree(res, ignore_errors=True)
        if not ids:
            jobs.append((i, None, 0))
            continue
        mine = ids
        if info["series"] in covers:
            mine = beyond_host(ids, info, args)
            if not mine:
                skipped[i] = "the host passed every test marked kernel"
                continue
        elif info["series"] == oldest and version(os.uname().release) > version(oldest):
            mine = oldest_selection(ids, info, args)
        files = per_file(mine)
        # The last run's seconds where there was one, else the count of
        # tests (about a second and a half each under TCG).
        prev = {} if mine is not ids else last_seconds(args.vmdir, info["release"])
        weight = lambda f, prev=prev, files=files: prev.get(f) or 1.5 * files[f]  # noqa: E731
        parts = split(files, weight, args.shards)
        for k, fs in enumerate(parts, 1):
            # Where only some of a file's tests run, they are named one by one.
            run = fs if mine is ids else [t for t in mine if t.split("::", 1)[0] in fs]
            jobs.append((i, (k, len(parts), run), sum(weight(f) for f in fs)))
    jobs.sort(key=lambda j: -j[2])
    done = [[] for _ in infos]
    t0 = time.monotonic()

    def worker(queue):
        while True:
            with print_lock:
                if not queue:
                    return
                i, shard, _ = queue.pop(0)
            r = run_kernel(infos[i], args, pytest_args, shard)
            with print_lock:
                done[i].append((shard[0] if shard else 0, r))

    def on_signal(sig, frame):
        # The VMs run in sessions of their own: end them with us.
        for p in list(procs):
            kill(p)
        say(f"{signal.Signals(sig).name}: VMs killed", file=sys.stderr)
        os._exit(128 + sig)

    # Installed even where the caller ignored SIGINT (a background job).
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    queue = list(jobs)
    threads = [threading.Thread(target=worker, args=(queue,), daemon=True)
               for _ in range(max(1, min(args.jobs, len(jobs))))]
    for t in threads:
        t.start()
    for t in threads:
        while t.is_alive():
            t.join(0.5)

    total = time.monotonic() - t0
    results = []
    for i, info in enumerate(infos):
        if i in skipped:
            say(f"{info['release']}: no VM: {skipped[i]}")
            continue
        parts = [r for _, r in sorted(done[i], key=lambda d: d[0])]
        results.append(parts[0] if len(parts) == 1 and not ids
                       else merge(info["release"], args.vmdir, parts))
    all_ok = True
    for r in results:
        line, ok = summary(r)
        all_ok &= ok
        say(line)
        for name in r["failed_tests"]:
            print(f"    {name}", flush=True)
    say(f"{len(results)} kernels in {total:.0f} s"
        + ("" if all_ok else "; FAILED"))
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
