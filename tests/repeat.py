#!/usr/bin/python3
"""make check-repeat: run the test suite N times and print a table of every
test that failed at least once, so a flaky test is found by a command.

Host mode (default): each run is the unit tests and the end-to-end suite,
as `make check` runs them (the build is made once, before the first run).
VM mode (--vm): each run is tests/vm/check-vm.py, the end-to-end suite
under every kernel of the matrix; a row names the kernel.

--load runs a busy machine beside the suite, as issue 12 asks: one CPU hog
per core (a shell busy loop at normal priority) and a disk writer (dd of
256 MiB with fsync, over and over, in BUILD/repeat/). They are killed at
the end, whatever happens.

Every run's JUnit XML is kept in BUILD/repeat/ (host-K.xml,
vm-K-RELEASE.xml), with a run's whole output in the .log beside it. The
table: one row per test that failed in any run, with the count of runs it
failed in and the head of its first failure's message. Exit 1 when any run
failed.
"""
import argparse
import glob
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import junit  # noqa: E402

PYTHON = "/usr/bin/python3"


class Load:
    """A CPU hog per core and a disk writer, in a process group of their
    own so one signal ends them all."""

    def __init__(self, workdir):
        self.workdir = workdir
        self.procs = []

    def __enter__(self):
        for _ in range(os.cpu_count() or 1):
            self.procs.append(subprocess.Popen(
                ["sh", "-c", "while :; do :; done"], start_new_session=True))
        data = os.path.join(self.workdir, "load.dat")
        self.procs.append(subprocess.Popen(
            ["sh", "-c", f"while :; do dd if=/dev/zero of={data} bs=1M count=256 "
             "conv=fsync status=none; done"], start_new_session=True))
        say(f"load: {len(self.procs) - 1} CPU hogs and a disk writer")
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
        try:
            os.unlink(os.path.join(self.workdir, "load.dat"))
        except FileNotFoundError:
            pass


def say(msg):
    print(f"check-repeat: {msg}", flush=True)


def run_logged(argv, log, env=None):
    with open(log, "w") as f:
        return subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT,
                              env=env).returncode


def host_run(k, args):
    """One `make check`'s worth of tests; returns [(label, result)]."""
    out = []
    if args.pytest_args:  # a chosen part of the e2e suite: no unit tests
        return out + e2e_run(k, args)
    log = os.path.join(args.dir, f"host-{k}-unit.log")
    with open(log, "w") as f:
        failed = []
        units = sorted(glob.glob(os.path.join(args.build, "obj", "tests", "test_*")))
        units = [u for u in units if os.access(u, os.X_OK) and not u.endswith(".d")]
        if not units:
            sys.exit(f"check-repeat: no unit tests in {args.build}/obj/tests; "
                     "run it as make check-repeat")
        for u in units:
            f.write(f"== {u}\n")
            f.flush()
            if subprocess.run([u], stdout=f, stderr=subprocess.STDOUT).returncode:
                failed.append(os.path.basename(u))
    # A unit binary is one row: cmocka's own output (in the log) names the case.
    cases = [(f"tests/unit/{os.path.basename(u)}", "failure" if os.path.basename(u) in failed
              else "passed", [f"see {log}"] if os.path.basename(u) in failed else [])
             for u in units]
    out.append(("unit", {"passed": len(units) - len(failed), "failed": len(failed),
                         "errors": 0, "skipped": 0, "cases": cases}))
    return out + e2e_run(k, args)


def e2e_run(k, args):
    xml = os.path.join(args.dir, f"host-{k}.xml")
    env = dict(os.environ, TRACEKIT_BIN=os.path.abspath(args.bin))
    rc = run_logged([PYTHON, "-m", "pytest", "-v", "-p", "no:cacheprovider",
                     f"--junitxml={xml}", *(args.pytest_args or ["tests/e2e"])],
                    xml[:-4] + ".log", env=env)
    res = junit.read(xml)
    if res is None:
        res = {"passed": 0, "failed": 0, "errors": 1, "skipped": 0,
               "cases": [("tests/e2e (whole run)", "error",
                          [f"pytest exit {rc} without results; see {xml[:-4]}.log"])]}
    return [("e2e", res)]


def vm_run(k, args):
    """One make check-vm; returns [(kernel release, result)]."""
    results = os.path.join(args.build, "vm", "results")
    shutil.rmtree(results, ignore_errors=True)
    log = os.path.join(args.dir, f"vm-{k}.log")
    rc = run_logged([PYTHON, os.path.join(HERE, "vm", "check-vm.py"),
                     "--build", args.build, "--bin", args.bin], log)
    out = []
    for d in sorted(glob.glob(os.path.join(results, "*"))):
        release = os.path.basename(d)
        xml = os.path.join(args.dir, f"vm-{k}-{release}.xml")
        res = None
        if os.path.exists(os.path.join(d, "junit.xml")):
            shutil.copy(os.path.join(d, "junit.xml"), xml)
            res = junit.read(xml)
        if res is None:
            res = {"passed": 0, "failed": 0, "errors": 1, "skipped": 0,
                   "cases": [("(boot or whole run)", "error",
                              [f"no results; see {log}"])]}
        out.append((release, res))
    if not out:
        out.append(("check-vm", {"passed": 0, "failed": 0, "errors": 1, "skipped": 0,
                                 "cases": [("(no kernel ran)", "error",
                                            [f"check-vm exit {rc}; see {log}"])]}))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--bin", default=None)
    ap.add_argument("--vm", action="store_true", help="repeat make check-vm instead")
    ap.add_argument("--load", action="store_true",
                    help="a CPU hog per core and a disk writer beside the suite")
    ap.add_argument("pytest_args", nargs="*", default=None,
                    help="host mode: pytest arguments instead of the unit tests "
                    "and tests/e2e")
    args = ap.parse_args()
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    args.build = os.path.abspath(args.build)
    args.bin = os.path.abspath(args.bin or os.path.join(args.build, "bin"))
    args.dir = os.path.join(args.build, "repeat")
    shutil.rmtree(args.dir, ignore_errors=True)
    os.makedirs(args.dir)

    # test id -> [runs it failed in, first message]
    failures = {}
    runs_failed = 0
    load = Load(args.dir) if args.load else None
    if load:
        load.__enter__()
    try:
        for k in range(1, args.runs + 1):
            t0 = time.monotonic()
            parts = (vm_run if args.vm else host_run)(k, args)
            secs = time.monotonic() - t0
            bad = False
            line = []
            for label, r in parts:
                line.append(f"{label}: {r['passed']} passed, {r['failed']} failed, "
                            f"{r['skipped']} skipped" + (f", {r['errors']} errors"
                                                         if r["errors"] else ""))
                for name, outcome, msg in r["cases"]:
                    if outcome in ("failure", "error"):
                        bad = True
                        key = f"{label}: {name}" if args.vm else name
                        row = failures.setdefault(key, [[], msg])
                        row[0].append(k)
            runs_failed += bad
            say(f"run {k}/{args.runs} ({secs:.0f} s): " + "; ".join(line))
    finally:
        if load:
            load.__exit__(None, None, None)

    print()
    if not failures:
        say(f"no test failed in {args.runs} runs"
            + (" (under load)" if args.load else ""))
        return 0
    say(f"{len(failures)} tests failed at least once; {runs_failed} of "
        f"{args.runs} runs failed" + (" (under load)" if args.load else ""))
    print(f"{'failed':>8}  {'runs':<12} test")
    for name, (runs, msg) in sorted(failures.items(), key=lambda kv: (-len(kv[1][0]), kv[0])):
        print(f"{len(runs):>3}/{args.runs:<4}  {','.join(map(str, runs)):<12} {name}")
        for l in msg[:3]:
            print(f"{'':16}{l}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
