"""What every tool gets from libtrace's loader: --dry-run, --btf for
kernels without /sys/kernel/btf/vmlinux, forced attach methods, and
one-line errors when none of them works."""
import os
import shutil
import signal
import subprocess
import time

import pytest

from conftest import ALL_TOOLS, BIN, ROOT, Tool, in_syscall, json_lines, run, tool_path

TP_TOOLS = ["execsnoop", "opensnoop", "runqlat", "syscount"]


def dry_run(tool, *args, env=None):
    r = run(tool, "--dry-run", "-j", *args, env=env)
    assert r.returncode == 0, r.stderr
    records = json_lines(r.stdout)
    probes = [p for p in records if p["type"] == "probe"]
    assert probes and all(set(p) == {"type", "probe", "program", "method", "target"}
                          for p in probes)
    return records


@pytest.mark.parametrize("tool", TP_TOOLS)
@pytest.mark.kernel
def test_dry_run_text_matches_json(tool):
    records = dry_run(tool)
    text = run(tool, "--dry-run")
    assert text.returncode == 0 and text.stderr == ""
    want = [f"probe {r['probe']} {r['method']} {r['target']}" if r["type"] == "probe"
            else f"transport {r['transport']}" for r in records]
    assert text.stdout.splitlines() == want


@pytest.mark.kernel
def test_verbose_names_each_probe_and_its_method():
    r = run("runqlat", "-v", "--dry-run", env={"TRACEKIT_ATTACH": "raw_tp"})
    assert r.returncode == 0
    assert [l for l in r.stderr.splitlines() if l.startswith("runqlat: probe ")] == [
        f"runqlat: probe {p}: raw_tp {p}"
        for p in ("sched_wakeup", "sched_wakeup_new", "sched_switch")]


@pytest.mark.kernel
def test_syscalls_tracepoint_attaches_as_a_classic_one_at_once():
    """syscalls:sys_enter_NAME is a trace event made from raw_syscalls'
    tracepoint, not a tracepoint of its own: the loader does not try
    tp_btf and raw_tp on it first (each was a failed load), while a real
    tracepoint keeps its chain."""
    r = run("funccount", "-v", "-d", "0.01", "t:syscalls:sys_enter_getpid")
    assert r.returncode == 0, r.stderr
    probes = [l for l in r.stderr.splitlines() if l.startswith("funccount: probe ")]
    assert probes == ["funccount: probe probe: tp syscalls/sys_enter_getpid"], r.stderr
    r = run("funccount", "-v", "-d", "0.01", "t:sched:sched_process_free")
    assert r.returncode == 0, r.stderr
    assert "funccount: probe probe: tp_btf sched/sched_process_free" in r.stderr.splitlines()


@pytest.mark.parametrize("method", ["tp_btf", "raw_tp", "tp"])
@pytest.mark.parametrize("tool, last", [("syscount", "tp"), ("runqlat", "raw_tp")])
@pytest.mark.kernel
def test_forced_method_starts_the_chain_there(tool, last, method):
    """Probes written for several methods use the forced one; a probe that
    lacks it uses its last method (runqlat has no classic tracepoints)."""
    want = method if method != "tp" else last
    probes = [p for p in dry_run(tool, env={"TRACEKIT_ATTACH": method})
              if p["type"] == "probe"]
    assert {p["method"] for p in probes} == {want}
    assert all(p["program"] == f"{p['probe']}_{want}" for p in probes)


@pytest.mark.kernel
def test_transport_is_reported_and_forcible():
    for env, want in (({}, "ringbuf"), ({"TRACEKIT_TRANSPORT": "perf"}, "perf")):
        records = dry_run("execsnoop", env=env)
        assert records[-1] == {"type": "transport", "transport": want}
    assert not any(r["type"] == "transport" for r in dry_run("runqlat"))


@pytest.mark.parametrize("value, words", [
    ("fentri", "unknown attach method 'fentri'"),
    ("raw_tp,bogus", "unknown attach method 'bogus'"),
])
def test_bad_forced_method_is_one_line(value, words):
    r = run("runqlat", "--dry-run", env={"TRACEKIT_ATTACH": value})
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and words in r.stderr
    assert r.stderr.startswith("runqlat: TRACEKIT_ATTACH=")


@pytest.fixture(scope="module")
def kernel_btf(tmp_path_factory):
    path = tmp_path_factory.mktemp("btf") / "vmlinux.btf"
    shutil.copyfile("/sys/kernel/btf/vmlinux", path)
    return path


@pytest.mark.kernel
def test_btf_file_works_like_the_kernels(kernel_btf):
    assert dry_run("runqlat", "--btf", kernel_btf) == dry_run("runqlat")


@pytest.mark.parametrize("content, rc, words", [
    (None, 2, "invalid --btf value '{path}': no such file"),
    (b"not btf at all\n", 1, "--btf {path}: not a BTF file"),
    ("object", 1, "--btf {path}: this BTF does not describe a kernel (too few types)"),
])
def test_bad_btf_file_is_one_line(tmp_path, content, rc, words):
    path = tmp_path / "bad.btf"
    if content == "object":  # a BPF object's own BTF: real BTF, not a kernel's
        path = BIN.parent / "obj" / "bpf" / "runqlat.bpf.o"
    elif content is not None:
        path.write_bytes(content)
    r = run("runqlat", "--btf", path, "--dry-run")
    assert (r.returncode, r.stdout) == (rc, "")
    assert r.stderr.count("\n") == 1, r.stderr
    assert words.format(path=path) in r.stderr


def without_kernel_btf(argv):
    """argv in a mount namespace where /sys/kernel/btf is an empty tmpfs: a
    kernel without CONFIG_DEBUG_INFO_BTF, as far as the tool can tell."""
    script = 'mount -t tmpfs none /sys/kernel/btf && exec "$@"'
    return ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", *argv]


@pytest.mark.kernel
def test_missing_kernel_btf_says_use_btf_file():
    r = subprocess.run(without_kernel_btf([tool_path("runqlat"), "--dry-run"]),
                       capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == ("runqlat: kernel BTF is missing (/sys/kernel/btf/vmlinux): use a "
                        "kernel built with CONFIG_DEBUG_INFO_BTF=y, or pass --btf FILE\n")


@pytest.mark.parametrize("tool", TP_TOOLS)
@pytest.mark.kernel
def test_btf_file_stands_in_for_missing_kernel_btf(tool, kernel_btf):
    """tp_btf needs the kernel's own BTF; with --btf the tools fall back to
    raw tracepoints and classic ones."""
    r = subprocess.run(without_kernel_btf([tool_path(tool), "--btf", str(kernel_btf),
                                           "--dry-run", "-j"]),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    methods = {p["method"] for p in json_lines(r.stdout) if p["type"] == "probe"}
    assert methods and methods <= {"raw_tp", "tp"}


@pytest.mark.kernel
def test_execsnoop_traces_with_btf_file_and_no_kernel_btf(kernel_btf, tmp_path):
    """A real run, not just an attach: the exec the test makes is reported."""
    ready_r, ready_w = os.pipe()
    proc = subprocess.Popen(
        without_kernel_btf([tool_path("execsnoop"), "--btf", str(kernel_btf), "-j"]),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=(ready_w,),
        env=dict(os.environ, TRACEKIT_READY_FD=str(ready_w)))
    os.close(ready_w)
    try:
        assert os.read(ready_r, 16) == b"ready\n", proc.stderr.read()
        subprocess.run(["/bin/true", "btf-file-marker"], check=True)
    finally:
        os.close(ready_r)
        proc.send_signal(2)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    execs = [r for r in json_lines(out.decode())
             if r.get("argv") == ["/bin/true", "btf-file-marker"]]
    assert len(execs) == 1, out


# write(2)'s number, to see from /proc/PID/syscall that a tool is blocked
# writing its output.
WRITE_NR = {"x86_64": 1, "aarch64": 64}[os.uname().machine]


def blocked_writing(pid, timeout=30):
    return in_syscall(pid, [WRITE_NR], timeout)


def signal_taken(pid, sig, timeout=30):
    """True once sig is no longer pending for pid: the kernel has handed
    it to the handler. Standard signals do not queue, so a second one
    sent while the first is still pending (a slow vCPU under TCG) is
    merged into it and never seen."""
    bit = 1 << (sig - 1)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/status") as f:
            pending = [int(line.split()[1], 16) for line in f
                       if line.startswith(("SigPnd:", "ShdPnd:"))]
        if not any(mask & bit for mask in pending):
            return True
        time.sleep(0.005)
    return False


def test_sigint_while_blocked_writing_loses_nothing(tmp_path):
    """SIGINT that arrives while a tool is blocked writing to a full pipe
    (a reader slower than the events) must not cost output: stdio drops
    its whole buffer when write(2) fails with EINTR, which once cut a
    JSON line in two under load. The reader here reads nothing until the
    tool is blocked in write, then sends SIGINT and reads everything."""
    storm = tmp_path / "storm"
    subprocess.run(["cc", "-O2", "-o", str(storm), str(ROOT / "tests/e2e/progs/storm.c")],
                   check=True)
    path = tmp_path / "sigint-write-marker"
    path.write_text("x")
    opens = 2000   # about 300 KB of JSON: far more than a 64 KiB pipe holds
    with Tool("opensnoop", "-j", "-n", "storm", "--buffer-kb", 65536) as tool:
        subprocess.run([str(storm), "open", str(opens), str(path)], check=True,
                       stdout=subprocess.DEVNULL)
        assert blocked_writing(tool.proc.pid), "opensnoop never blocked writing"
        out, err, rc = tool.stop()
    assert rc == 0, err
    records = json_lines(out)   # every line whole
    assert sum(r.get("path") == str(path) for r in records) == opens
    assert records[-1]["type"] == "loss" and records[-1]["events_lost"] == 0, records[-1]


def test_second_sigint_ends_a_tool_whose_reader_is_stuck(tmp_path):
    """Writes go on after the first SIGINT (above); a reader that never
    reads again must not hold the tool: the second SIGINT ends it."""
    storm = tmp_path / "storm"
    subprocess.run(["cc", "-O2", "-o", str(storm), str(ROOT / "tests/e2e/progs/storm.c")],
                   check=True)
    path = tmp_path / "stuck-reader-marker"
    path.write_text("x")
    with Tool("opensnoop", "-j", "-n", "storm", "--buffer-kb", 65536) as tool:
        subprocess.run([str(storm), "open", "2000", str(path)], check=True,
                       stdout=subprocess.DEVNULL)
        assert blocked_writing(tool.proc.pid), "opensnoop never blocked writing"
        tool.proc.send_signal(signal.SIGINT)
        assert signal_taken(tool.proc.pid, signal.SIGINT), "first SIGINT never taken"
        assert blocked_writing(tool.proc.pid)
        tool.proc.send_signal(signal.SIGINT)
        assert tool.proc.wait(timeout=30) == -signal.SIGINT




@pytest.mark.parametrize("tool, args, instead", [
    *[(t, ["--cgroupmap", "/sys/fs/bpf/m"], "filter by cgroup directory with --cgroup PATH")
      for t in ALL_TOOLS],
    *[(t, ["--mntnsmap=/sys/fs/bpf/m"], "there is no mount-namespace map")
      for t in ALL_TOOLS],
    *[(t, ["--ebpf"], "the BPF programs are compiled ahead of time") for t in ALL_TOOLS],
    *[(t, ["--exec", "ls"], "use -- COMMAND [ARG...]: the tool runs COMMAND")
      for t in ALL_TOOLS],
    ("opensnoop", ["-b", "64"], "use --buffer-kb KB"),
    ("opensnoop", ["--buffer-pages", "64"], "use --buffer-kb KB"),
    ("profile", ["--hash-storage-size", "40960"], "use --max-stacks N"),
    ("funclatency", ["-k", "vfs_read"], "set TRACEKIT_ATTACH=kprobe"),
    ("funclatency", ["--kprobes", "vfs_read"], "set TRACEKIT_ATTACH=kprobe"),
    ("stackcount", ["--debug", "vfs_read"], "--verbose shows how it attaches"),
    ("funccount", ["-D", "vfs_read"], "--verbose shows how it attaches"),
    ("tcpconnect", ["-C", "/sys/fs/bpf/m"], "libbpf-tools' --cgroupmap"),
    ("tcpconnect", ["-M", "/sys/fs/bpf/m"], "libbpf-tools' --mntnsmap"),
])
def test_bcc_option_it_has_not_says_what_to_use(tool, args, instead):
    """A bcc option a tool has not is a usage error naming it and what to
    use instead, never an unknown option or another meaning (getopt
    would take stackcount's --debug for --debug-dir)."""
    r = run(tool, *args)
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    name = args[0].split("=")[0]
    assert r.stderr.startswith(f"{tool}: bcc's option '{name}' is not in tracekit: "), r.stderr
    assert instead in r.stderr and r.stderr.count("\n") == 1, r.stderr
