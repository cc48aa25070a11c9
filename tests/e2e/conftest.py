"""Shared helpers for the end-to-end tests: run the built tools as root
against workloads the tests make themselves."""
import contextlib
import functools
import glob
import inspect
import json
import os
import re
import select
import shlex
import signal
import subprocess
import time
from pathlib import Path

import pytest

from kernel_paths import SAME_ON_OLDEST

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("TRACEKIT_BIN", ROOT / "build" / "bin"))
# Every tool with BPF programs of its own (bpf/TOOL.bpf.c): the every-tool
# tests (test_command.py, test_loader.py) take a new tool without a list
# to keep up to date.
ALL_TOOLS = sorted(p.name[:-len(".bpf.c")] for p in (ROOT / "bpf").glob("*.bpf.c"))
# Frame pointers in every function of a test's workload, leaves too: GCC
# for arm64 omits a leaf function's frame record even with
# -fno-omit-frame-pointer (its -momit-leaf-frame-pointer default), and a
# stack taken in one (at a syscall it makes) then lacks its caller.
FRAME_POINTERS = ["-fno-omit-frame-pointer", "-mno-omit-leaf-frame-pointer"]


def _emulated_cpu():
    """QEMU: its x86 CPU names itself; its arm64 "virt" machine (make
    check-vm ARCH=arm64) says so in the device tree."""
    try:
        with open("/proc/cpuinfo") as f:
            if "QEMU Virtual CPU" in f.read():
                return True
    except OSError:
        pass
    try:
        with open("/proc/device-tree/compatible", "rb") as f:
            return b"linux,dummy-virt" in f.read()
    except OSError:
        return False


# Under QEMU's TCG (make check-vm) every instruction is emulated: timers
# fire late and kernel paths take hundreds of times longer, so tests of
# rates and times allow for that where they must (and say so).
EMULATED_CPU = _emulated_cpu()
# Seconds a tool may take to attach. Loading BPF is slow under TCG, and
# attaching kprobes slower still on arm64: klockstat's 25 kprobes and
# kretprobes on the lock functions take 26 s on arm64 6.1 (no fentry
# there) on an idle VM, over a minute beside its test's writers, each
# lock call then trapping into the emulated kernel twice.
READY_TIMEOUT = 300 if EMULATED_CPU else 60


# The kernel matrix (make check-vm) runs only tests marked kernel: what
# it checks can differ between kernels. That is every test that needs a
# kernel feature (an attach method, fentry or kprobes, BPF cookies: the
# host skips some of them), and each tool's exact-content tests of what
# BPF reads (CO-RE fields, tracepoint arguments, helpers a kernel may lack,
# BPF-side filters, stack and cgroup ids, transports). Usage errors, help,
# output formatting, intervals and userspace aggregation are the same on
# every kernel and run on the host only. VM_SCOPE=all runs everything.
KERNEL_FEATURE_CALL = re.compile(
    r"\b(require|kernel_has|has_cookies|has_ksym|assert_no_kernel_function_tracing)\(")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "kernel: runs in the kernel matrix too (make check-vm): "
        "the result can differ between kernels")
    config.addinivalue_line(
        "markers", "portable: runs in the arm64 matrix too (make check-vm ARCH=arm64): "
        "the result can differ between architectures, not kernels")
    config.addinivalue_line(
        "markers", "arch: a kernel-marked test whose tool takes an architecture's own "
        "path (ARCH_DEPENDENT); CI's arm64 run selects these (VM_SCOPE=arch)")


# The test files whose kernel-marked tests take a path of their own on
# another architecture, and why: CI's arm64 run (VM_SCOPE=arch) runs
# their tests marked kernel, and test_static's (marked portable). The
# rest of the kernel-marked tests check what BPF reads from tracepoints
# and kernel structures through CO-RE, the same code on every
# architecture, which the x86 matrix runs on each kernel;
# `make check-vm ARCH=arm64` (VM_SCOPE=kernel) runs them on arm64 too.
# Every fault the first arm64 runs found was in a file listed here.
ARCH_DEPENDENT = {
    "test_syscount": "the syscall table (arm64: newfstatat, no open or stat)",
    "test_opensnoop": "the open calls the architecture has (arm64: openat only)",
    "test_statsnoop": "the stat calls the architecture has",
    "test_syncsnoop": "syscall numbers",
    "test_mountsnoop": "syscall numbers",
    "test_killsnoop": "syscall numbers",
    "test_trace": "registers, syscall arguments, __arm64_sys_ names, uprobes, USDT",
    "test_argdist": "registers, syscall arguments, uprobes",
    "test_funclatency": "kernel and user functions' entry and return registers",
    "test_funccount": "kernel function names (__arm64_sys_), fentry and kprobes",
    "test_tplist": "USDT notes and their argument specs",
    "test_gethostlatency": "uprobes and their registers",
    "test_threadsnoop": "a uprobe's arguments",
    "test_bashreadline": "a uretprobe's return register",
    "test_memleak": "uprobes on the allocator, user and kernel stacks",
    "test_stackcount": "kernel and user stacks, the syscall entry's frames",
    "test_profile": "perf events, user and kernel stacks",
    "test_offcputime": "stacks",
    "test_offwaketime": "stacks",
    "test_wakeuptime": "stacks",
    "test_biostacks": "kernel stacks",
    "test_unwind": "user stack unwinding (frame records, the link register, CFI)",
    "test_klockstat": "kprobes at a function's entry (the caller in the link register)",
    "test_capable": "kprobe arguments and stacks",
    "test_vfsstat": "kernel functions by fentry and kprobes",
    "test_cachestat": "kernel functions, which each architecture's build inlines its own way",
    "test_filetop": "kernel functions",
    "test_filelife": "kernel functions",
    "test_slabratetop": "kernel functions' arguments",
    "test_hardirqs": "interrupt names and counts (arm64: IPIs, arch_timer)",
    "test_softirqs": "interrupt counts",
    "test_llcstat": "the PMU",
    "test_runqlen": "perf event sampling",
    "test_cpufreq": "perf event sampling, frequency reporting",
    "test_doctor": "which attach methods the kernel offers (arm64 6.1: no fentry)",
    "test_loader": "the attach method chains (fentry, kprobes)",
}


def pytest_collection_modifyitems(config, items):
    """A test that asks what the kernel can do must be marked kernel, or
    a test the host skips would run nowhere. Kernel-marked tests of
    ARCH_DEPENDENT's files are marked arch."""
    for item in items:
        if (item.get_closest_marker("kernel")
                and item.path.stem in ARCH_DEPENDENT):
            item.add_marker(pytest.mark.arch)
    stale = sorted(set(SAME_ON_OLDEST) - {p.stem for p in Path(__file__).parent.glob("test_*.py")})
    if stale:
        raise pytest.UsageError(f"kernel_paths.SAME_ON_OLDEST names no test file: {', '.join(stale)}")
    unmarked = sorted({item.function.__name__ for item in items
                       if KERNEL_FEATURE_CALL.search(inspect.getsource(item.function))
                       and not item.get_closest_marker("kernel")})
    if unmarked:
        raise pytest.UsageError(
            "these tests depend on the kernel's features but are not marked "
            f"@pytest.mark.kernel (make check-vm would skip them): {', '.join(unmarked)}")


def tool_path(name):
    path = BIN / name
    if not path.exists():
        pytest.fail(f"{path} is not built; run make")
    return str(path)


def hung_task_state(pid):
    """Each thread of pid: its state, kernel wait channel and kernel stack."""
    lines = []
    try:
        tids = sorted(os.listdir(f"/proc/{pid}/task"), key=int)
    except OSError as e:
        return f"pid {pid}: {e.strerror}"
    for tid in tids:
        base = f"/proc/{pid}/task/{tid}"
        def read(name):
            try:
                with open(f"{base}/{name}") as f:
                    return f.read().strip()
            except OSError as e:
                return f"({e.strerror})"
        state = re.search(r"^State:\s*(.*)$", read("status"), re.M)
        lines.append(f"thread {tid} {state.group(1) if state else '?'} "
                     f"wchan={read('wchan')} syscall={read('syscall').split(' ')[0]}")
        lines.extend("    " + l for l in read("stack").splitlines())
    return "\n".join(lines)


def makefile_version():
    """The one version of every program: the Makefile's VERSION."""
    m = re.search(r"^VERSION := (\S+)$", (ROOT / "Makefile").read_text(), re.M)
    assert m, "no VERSION := in the Makefile"
    return m.group(1)


class Tool:
    """A tool running in the background. start() returns once it has
    attached (it writes "ready" on TRACEKIT_READY_FD); stop() sends SIGINT
    and returns what it printed."""

    def __init__(self, name, *args, env=None, wrapper=()):
        """wrapper: a command that ends by exec'ing its arguments (so
        the tool keeps its pid), such as a mount namespace set-up."""
        self.argv = [*wrapper, tool_path(name), *map(str, args)]
        self.env = dict(os.environ, **(env or {}))
        self.proc = None

    def start(self):
        rfd, wfd = os.pipe()
        self.env["TRACEKIT_READY_FD"] = str(wfd)
        self.proc = subprocess.Popen(
            self.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=self.env, pass_fds=(wfd,))
        os.close(wfd)
        ready, _, _ = select.select([rfd], [], [], READY_TIMEOUT)
        data = os.read(rfd, 16) if ready else b""
        os.close(rfd)
        if data != b"ready\n":
            # Ended (it says why), or still attaching after READY_TIMEOUT:
            # where it waits, then killed.
            where = "" if data or self.proc.poll() is not None else \
                f"still attaching after {READY_TIMEOUT} s: {hung_task_state(self.proc.pid)}\n"
            if where:
                self.proc.kill()
            out, err = self.proc.communicate(timeout=10)
            pytest.fail(f"{self.argv} did not attach (rc={self.proc.returncode}):\n{where}"
                        f"{err.decode(errors='replace')}")
        return self

    def stop(self, sig=signal.SIGINT, timeout=30):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self._communicate(timeout, f"did not end {timeout} s after {signal.Signals(sig).name}")

    def wait(self, timeout=60):
        """For tools that end by themselves (-d, interval count)."""
        return self._communicate(timeout, f"did not end within {timeout} s")

    def _communicate(self, timeout, why):
        """(stdout, stderr, status); a tool that hangs fails the test
        with where it waits in the kernel and what it printed."""
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            where = hung_task_state(self.proc.pid)
            self.proc.kill()
            out, err = self.proc.communicate()
            pytest.fail(f"{self.argv} {why}\n{where}\n"
                        f"stdout:\n{out.decode(errors='replace')[-2000:]}\n"
                        f"stderr:\n{err.decode(errors='replace')[-2000:]}")
        return out.decode(errors="replace"), err.decode(errors="replace"), self.proc.returncode

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def on_cpu_ns(pid):
    """The nanoseconds task pid has run on a CPU (/proc/PID/schedstat):
    a test waits for a share of a workload's own running, which a busy
    machine or an emulated CPU delays but does not cut short, rather than
    for a time."""
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0])


def wait_on_cpu(pids, ns, timeout=300):
    """Until each task of pids (a pid or a list) has run ns more
    nanoseconds on a CPU; False if one did not within timeout seconds."""
    pids = [pids] if isinstance(pids, int) else list(pids)
    goals = [on_cpu_ns(p) + ns for p in pids]
    end = time.monotonic() + timeout
    while any(on_cpu_ns(p) < g for p, g in zip(pids, goals)):
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


class Workload:
    """A test program that says "ready", then answers "done" to each
    command line once it has made that command's calls (tests/e2e/progs/
    *_target.c); killed at the end."""

    def __init__(self, path, *args):
        self.proc = subprocess.Popen([str(path), *map(str, args)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        self.pid = self.proc.pid
        assert self.proc.stdout.readline() == "ready\n"

    def send(self, cmd):
        """The words after "done" (a program may report what it did)."""
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()
        words = self.proc.stdout.readline().split()
        assert words[:1] == ["done"], (cmd, words)
        return words[1:]

    def finish(self):
        """End its input; it must exit 0."""
        self.proc.stdin.close()
        assert self.proc.wait(timeout=30) == 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def agent_switches():
    """The context switches so far of PID 1's threads. On this
    repository's Firecracker host PID 1 is the sandbox's agent, and no
    switch away from its threads reaches a tracer (tracefs or BPF): a
    task switched in from one of them is switched in unseen. So the
    switches the scheduler tools cannot see in a window are at most this
    count's growth over it. A thread that exits meanwhile is not
    counted."""
    total = 0
    for status in glob.glob("/proc/1/task/*/status"):
        try:
            with open(status) as f:
                total += sum(int(l.split()[1]) for l in f if "ctxt_switches:" in l)
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total


def run(name, *args, timeout=60, env=None):
    """Run a tool to completion (usage errors, --help, -d runs)."""
    return run_explained([tool_path(name), *map(str, args)], timeout=timeout,
                         env=dict(os.environ, **(env or {})))


def cpu_seconds(pid):
    """The user and system CPU seconds task pid has used (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_explained(argv, timeout, env=None):
    """subprocess.run(argv, capture_output=True, text=True); a command
    still running after timeout seconds fails the test with what tells a
    slow command from a stuck one: the CPU time it used, the machine's
    load, and where each of its threads waits in the kernel."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            used = f"{cpu_seconds(proc.pid):.1f} s of CPU"
        except OSError as e:
            used = f"CPU time unknown ({e.strerror})"
        with open("/proc/loadavg") as f:
            load = f.read().strip()
        where = hung_task_state(proc.pid)
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"{shlex.join(argv)} still ran after {timeout} s, having used {used}; "
                    f"load average {load}\n{where}\nstdout:\n{out[-2000:]}\n"
                    f"stderr:\n{err[-2000:]}")
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def elf_functions(path):
    """{function: (address, size)} from an ELF file's own symbol table
    (nm -S), for checking the addresses and offsets the stack tools show."""
    out = subprocess.run(["nm", "-S", "--defined-only", str(path)], capture_output=True,
                         text=True, check=True).stdout
    funcs = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tT":
            funcs[parts[3]] = (int(parts[0], 16), int(parts[1], 16))
    return funcs


def next_instruction_offsets(path):
    """{(function, callee): [offsets in function of the instruction after
    each call of callee]}, and (function, "syscall") likewise for system
    call instructions, from the file's own code (objdump -d): where a
    caller's frame returns to, and the user IP of a task in a system
    call made there."""
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(path)],
                         capture_output=True, text=True, check=True).stdout
    funcs = elf_functions(path)
    offsets, func, pending = {}, None, None
    for line in dis.splitlines():
        m = re.match(r"[0-9a-f]+ <([\w.]+)>:$", line)
        if m:
            # A call that ends its function returns nowhere (arm64's
            # _start ends in bl abort, and __wrap_main follows).
            func, pending = m[1], None
            continue
        m = re.match(r"\s+([0-9a-f]+):\s+(\S+)\s*(.*)", line)
        if not m:
            continue
        if pending:
            offsets.setdefault(pending, []).append(int(m[1], 16) - funcs[func][0])
            pending = None
        if func not in funcs:
            continue
        call = re.search(r"<([\w.@]+)>$", m[3])
        if m[2].startswith(("call", "bl")) and call:
            pending = (func, call[1])
        elif m[2] in ("syscall", "svc"):
            pending = (func, "syscall")
    return offsets


def json_lines(text):
    """Parse NDJSON strictly: every line must be one JSON object."""
    records = []
    for line in text.splitlines():
        obj = json.loads(line)
        assert isinstance(obj, dict), line
        records.append(obj)
    return records


def tool_map_id(tool_pid, name):
    """The id of the BPF map called name that the tool holds open."""
    ids = set()
    for fd in os.listdir(f"/proc/{tool_pid}/fdinfo"):
        try:
            with open(f"/proc/{tool_pid}/fdinfo/{fd}") as f:
                ids.update(int(line.split()[1]) for line in f if line.startswith("map_id:"))
        except FileNotFoundError:
            pass
    found = []
    for i in ids:
        r = subprocess.run(["bpftool", "map", "show", "id", str(i), "-j"],
                           capture_output=True, text=True, check=True)
        if json.loads(r.stdout).get("name") == name:
            found.append(i)
    assert len(found) == 1, found
    return found[0]


def loss_record(records):
    """The one {"type": "loss"} record a JSON run ends with, without its
    "runs_missed" (checked to be a count): the runs of the tool's
    programs the kernel skipped because the program was already running
    on that CPU. Those may be of events outside the test (an interrupt's
    block completion or wakeup on a busy machine) and are counted, not
    caused, by the test, so the tests assert the exact counts of their own
    events instead; test_trace.py asserts runs_missed exactly, on runs it
    makes the kernel skip."""
    losses = [r for r in records if r.get("type") == "loss"]
    assert len(losses) == 1, records[-3:]
    assert records[-1]["type"] == "loss"
    loss = dict(losses[0])
    missed = loss.pop("runs_missed", None)
    assert isinstance(missed, int) and missed >= 0, losses[0]
    return loss


# The kernel's fsync entry point: a kernel function the tests can make
# a known number of calls of (fsync on a file they opened).
KERNEL_FN = {"x86_64": "__x64_sys_fsync",
             "aarch64": "__arm64_sys_fsync"}.get(os.uname().machine)


@functools.lru_cache(maxsize=None)
def syscall_numbers():
    """{name: number} of this architecture's system calls, from the C
    library's <sys/syscall.h> as this machine's compiler sees it: the
    numbers a workload passes to syscall(2) differ between x86_64 and
    arm64, and arm64 has no stat, lstat, open or sync(2)-only legacy
    calls at all."""
    out = subprocess.run(["cc", "-dM", "-E", "-x", "c", "-"], input="#include <sys/syscall.h>\n",
                         capture_output=True, text=True, check=True).stdout
    macros = dict(re.findall(r"^#define (\w+) (\w+)$", out, re.M))

    def value(v):
        # arm64's generic table names some by another macro:
        # __NR_newfstatat is __NR3264_fstatat, which is 79.
        while v is not None and not v.isdigit():
            v = macros.get(v)
        return v and int(v)
    numbers = {k[len("__NR_"):]: value(v) for k, v in macros.items() if k.startswith("__NR_")}
    return {k: v for k, v in numbers.items() if v is not None}


# The outermost kernel frames of every system call: x86-64 on 5.10 to
# 6.18, arm64 on 6.1 and 6.12 (the kernels of the matrices).
SYSCALL_ENTRY = {"x86_64": ["entry_SYSCALL_64_after_hwframe", "do_syscall_64"],
                 "aarch64": ["el0t_64_sync", "el0t_64_sync_handler", "el0_svc"]
                 }.get(os.uname().machine)


def has_ksym(name):
    """Does this kernel have function name? For what a tool should pick,
    independent of its own probe: kprobe.multi needs fprobe (Debian's 6.1
    has kprobe.multi's code but CONFIG_FPROBE unset: its link attach is a
    stub), uprobe.multi bpf_uprobe_multi_link_attach (6.6)."""
    with open("/proc/kallsyms") as f:
        return any(line.split()[2:3] == [name] for line in f)


def has_cookies():
    """BPF cookies (5.15): the kernel's bpf_get_attach_cookie for perf
    event links."""
    return has_ksym("bpf_get_attach_cookie_pe")


def kernel_fn():
    """KERNEL_FN, which must be in this kernel; a skip on an architecture
    the tests know no entry point of."""
    if not KERNEL_FN:
        pytest.skip(f"no fsync entry point known for {os.uname().machine}")
    if not has_ksym(KERNEL_FN):
        pytest.fail(f"{KERNEL_FN} is not in /proc/kallsyms")
    return KERNEL_FN


def only_child(pid, timeout=10):
    """The one child of pid, once it has started it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = f.read().split()
        if kids:
            assert len(kids) == 1, kids
            return int(kids[0])
        time.sleep(0.001)
    pytest.fail(f"{pid} never started its child")


def cgroup2_root():
    """Where cgroup v2 is mounted (/sys/fs/cgroup/unified on the host,
    /sys/fs/cgroup in the VM matrix)."""
    with open("/proc/mounts") as f:
        for line in f:
            dev, path, fstype = line.split()[:3]
            if fstype == "cgroup2":
                return path
    pytest.fail("no cgroup v2 mount")


def cgroup_of(pid="self"):
    """A process's cgroup v2 path ("/" for the root)."""
    with open(f"/proc/{pid}/cgroup") as f:
        return [l[3:].strip() for l in f if l.startswith("0::")][0]


def own_cgroup():
    """The test's own cgroup v2 path, which the processes it starts begin in."""
    return cgroup_of("self")


@contextlib.contextmanager
def scratch_cgroup(name):
    """A cgroup v2 directory NAME under the root for one test, removed
    after it (its tasks have exited by then)."""
    d = Path(cgroup2_root()) / name
    d.mkdir()
    try:
        yield d
    finally:
        d.rmdir()


def mapped_executables(binary):
    """The files mapped executable by the running processes of binary
    (binary itself, ld.so, libc, ...)."""
    files = set()
    for proc in Path("/proc").iterdir():
        try:
            if not proc.name.isdigit() or os.readlink(proc / "exe") != str(binary):
                continue
            for line in (proc / "maps").read_text().splitlines():
                f = line.split(maxsplit=5)
                if len(f) == 6 and "x" in f[1] and f[5].startswith("/") \
                        and not f[5].endswith(" (deleted)"):
                    files.add(f[5])
        except OSError:
            pass  # a process that ended while we looked, or not ours to read
    return files


def wait_noted(tool_pid, binary, timeout=10):
    """Until a stack tool has noted a workload (a process is noted when
    its first stack is counted, while it runs): its symbolizer then holds
    open every file the workload maps executable, so that it symbolizes
    the stacks after the workload exits. Every file, not the executable
    alone: the tool opens them one by one, and a workload let exit once
    its executable was open could end before libc's turn (its frames
    then [unknown] (libc.so.6): seen once on 5.10 under TCG). The
    workload must be running."""
    deadline = time.monotonic() + timeout
    want = mapped_executables(binary) | {str(binary)}
    fds = Path(f"/proc/{tool_pid}/fd")
    held = set()
    while time.monotonic() < deadline:
        for fd in list(fds.iterdir()):
            try:
                held.add(os.readlink(fd))
            except FileNotFoundError:
                pass  # an fd closed while we looked
        if want <= held:
            return
        time.sleep(0.01)
    pytest.fail(f"the tool did not open {sorted(want - held)} within {timeout} s")


@pytest.fixture
def cgroup(request):
    """A cgroup for one stack tool test, removed after it: (its directory,
    its path as --print-cgroup shows it). Its name holds a ';' and a
    space, which must not break a folded line."""
    tool = request.module.__name__.removeprefix("test_")
    with scratch_cgroup(f"tk-{tool};cg {os.getpid()}") as d:
        yield d, "/" + d.name


@pytest.fixture(scope="session")
def nfs_server(tmp_path_factory):
    """One nfsd for the session (nfsmount.py; blockdev.mounted_fs's nfs):
    here, not imported into each test module, where each would be a
    session fixture of its own and start a second nfsd."""
    from nfsmount import NfsServer  # it imports this module
    server = NfsServer(tmp_path_factory.mktemp("nfsd"))
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def cmdtree(tmp_path_factory):
    """tests/e2e/progs/cmdtree.c built: a command whose system calls are
    the same every run (for -- COMMAND against strace), dynamically
    linked (its getpid is libc.so's, for uprobes)."""
    path = tmp_path_factory.mktemp("cmdtree") / "cmdtree"
    subprocess.run(["cc", "-O2", "-pthread", "-o", str(path),
                    str(ROOT / "tests/e2e/progs/cmdtree.c")], check=True)
    return str(path)


@pytest.fixture(scope="session")
def cmdtree_static(tmp_path_factory):
    """cmdtree linked statically, for counts of every system call: no
    dynamic loader, whose calls vary with ASLR (see cmdtree.c)."""
    path = tmp_path_factory.mktemp("cmdtree") / "cmdtree"
    subprocess.run(["cc", "-O2", "-static", "-pthread", "-o", str(path),
                    str(ROOT / "tests/e2e/progs/cmdtree.c")], check=True)
    return str(path)


def in_syscall(pid, nrs, timeout=30):
    """True once pid sleeps in one of the system calls numbered nrs (as
    /proc/PID/syscall shows them): what it did before is over, and it
    waits there. False if it did not within timeout seconds or ended."""
    want = {str(n) for n in nrs}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/syscall") as f:
                if f.read().split()[0] in want:
                    return True
            # Ended, not yet reaped: it will never get there.
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return False
        except (FileNotFoundError, ProcessLookupError):
            return False
        time.sleep(0.005)
    return False


@pytest.fixture(autouse=True, scope="session")
def require_root():
    if os.geteuid() != 0:
        pytest.fail("the end-to-end tests load BPF programs: run them as root")


# What the running kernel can do, as tracekit-doctor probes it (once per
# session). Tests of a method or tool the kernel lacks skip naming why;
# the VM kernel matrix (make check-vm) runs them where the kernel has it.
@functools.lru_cache(maxsize=None)
def doctor():
    # --no-tools: the features are all these need; a report of every
    # tool's dry run costs about 30 s in each VM under TCG.
    r = run("tracekit-doctor", "--json", "--no-tools", timeout=300)
    assert r.returncode == 0, r.stderr
    (report,) = json_lines(r.stdout)
    return report


# Attach methods and transports, by the doctor feature that provides them.
FEATURE_OF = {
    "tp_btf": "tp_btf", "raw_tp": "raw_tp", "tp": "tracepoints",
    "fentry": "fentry", "fexit": "fentry", "kprobe": "kprobes",
    "kretprobe": "kprobes", "uprobe": "uprobes", "uretprobe": "uprobes",
    "ringbuf": "ringbuf", "perf": "perf_buffer",
}


def kernel_has(method):
    return doctor()["features"][FEATURE_OF[method]]["ok"]


def require(method):
    """Skip unless the running kernel supports method, saying why not."""
    feature = doctor()["features"][FEATURE_OF[method]]
    if not feature["ok"]:
        pytest.skip(f"this kernel lacks {method}: {feature['detail']} "
                    "(make check-vm runs it under other kernels)")


def assert_no_kernel_function_tracing(tool, func, *args, attach=None):
    """Where neither fentry nor kprobes work (this repository's Firecracker
    host), a kernel-function tool exits 1 with one line naming what is
    missing and what would fix it; TRACEKIT_ATTACH=kprobe leaves fentry
    out of it."""
    if kernel_has("fentry") or kernel_has("kprobe"):
        pytest.skip("this kernel traces kernel functions (fentry or kprobes): "
                    "no failure to check")
    r = run(tool, *args, env={"TRACEKIT_ATTACH": attach} if attach else None)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr.count("\n") == 1 and r.stderr.endswith("\n"), r.stderr
    assert r.stderr.startswith(f"{tool}: cannot trace kernel function {func}: "), r.stderr
    assert "CONFIG_KPROBES is not set" in r.stderr and "CONFIG_KPROBES=y" in r.stderr
    assert ("fentry" in r.stderr) == (attach is None), r.stderr


def assert_annotated(folded_stack):
    """A folded stack of -a -d (comm;user...;-;kernel...): every kernel
    frame ends in _[k], as bcc's -a marks them, and no user frame does.
    Returns the number of kernel frames."""
    frames = folded_stack.split(";")[1:]
    cut = frames.index("-") if "-" in frames else len(frames)
    user, kernel = frames[:cut], frames[cut + 1:]
    assert all(f.endswith("_[k]") for f in kernel), folded_stack
    assert not any(f.endswith("_[k]") for f in user), folded_stack
    return len(kernel)


@pytest.fixture
def netns():
    """A network namespace joined to the test's by a veth pair, with IPv4
    and IPv6 addresses (netns.NetNs), removed after the test."""
    from netns import NetNs
    ns = NetNs()
    try:
        yield ns
    finally:
        ns.close()
