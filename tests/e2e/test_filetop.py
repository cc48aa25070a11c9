"""filetop: exact calls and bytes of the test's own I/O to a marked file.

The test process (filetop -p on its pid) writes and reads a file with a
name of its own: 3 write(2) and 2 pwrite64(2) of 1000 bytes, 2 read(2)
and 1 pread64(2) of 700 bytes; the rows of that file, summed over the
intervals, must hold exactly those calls and bytes. The tracepoint way
also sees readv(2) and writev(2), which the kernel functions (vfs_read,
vfs_write, as bcc) do not.

The file lives in a tmpfs of the test's own: on an overlayfs (/tmp in the
VM matrix) stat(2) gives the upper filesystem's device, the struct file
the overlay's."""
import fcntl
import os
import re
import subprocess
import time

import pytest

from conftest import (Tool, assert_no_kernel_function_tracing, json_lines, loss_record,
                      require, run, syscall_numbers, tool_path)

COMM = open("/proc/self/comm").read().strip()


@pytest.fixture
def fs(tmp_path):
    d = tmp_path / "fs"
    d.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "tk-filetop", str(d)], check=True)
    yield d
    subprocess.run(["umount", str(d)], check=True)


def io(path, vectored=False):
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for _ in range(3):
            assert os.write(fd, b"w" * 1000) == 1000
        for i in range(2):
            assert os.pwrite(fd, b"p" * 1000, 3000 + i * 1000) == 1000
        os.lseek(fd, 0, os.SEEK_SET)
        for _ in range(2):
            assert len(os.read(fd, 700)) == 700
        assert len(os.pread(fd, 700, 4000)) == 700
        if vectored:
            assert os.writev(fd, [b"a" * 300, b"b" * 200]) == 500
            os.lseek(fd, 0, os.SEEK_SET)
            assert os.readv(fd, [bytearray(400), bytearray(100)]) == 500
    finally:
        os.close(fd)


def traced(fs, *args, method=None, vectored=False):
    name = f"tk-filetop-{os.getpid()}"
    env = {"TRACEKIT_ATTACH": method} if method else None
    with Tool("filetop", "-p", os.getpid(), *args, env=env) as t:
        io(str(fs / name), vectored)
        out, err, rc = t.stop()
    assert rc == 0, err
    return name, out, err


def path_of(fs, name):
    return str(fs / name)


def totals(out, name, path):
    st = os.stat(path)
    records = json_lines(out)
    assert loss_record(records) == {"type": "loss", "events_lost": 0,
                                    "map_inserts_failed": 0}
    mine = [r for r in records[:-1] if r["file"] == name]
    assert mine, records
    for r in mine:
        assert (r["type"], r["pid"], r["tid"], r["comm"], r["file_type"],
                r["file_truncated"]) == ("filetop", os.getpid(), os.getpid(), COMM, "R",
                                         False), r
        assert (r["dev"], r["ino"]) == (f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}",
                                        st.st_ino), r
    return {k: sum(r[k] for r in mine) for k in ("reads", "writes", "rbytes", "wbytes")}


@pytest.mark.parametrize("method", ["tp", "fentry", "kprobe"])
@pytest.mark.kernel
def test_counts_exactly_the_calls_and_bytes(fs, method):
    if method != "tp":
        require(method)
    name, out, err = traced(fs, "-j", "-v", method=method)
    assert totals(out, name, path_of(fs, name)) == {"reads": 3, "writes": 5, "rbytes": 2100, "wbytes": 5000}
    probes = dict(re.findall(r"^filetop: probe (\S+): (\S+) \S+$", err, re.M))
    if method == "tp":
        assert set(probes.values()) == {"tp"} and "tp_r_readv_exit" in probes, err
    else:
        assert probes == {"kf_r_read": method, "kf_w_write": method}, err


@pytest.mark.kernel
def test_tracepoints_see_readv_and_writev(fs):
    name, out, err = traced(fs, "-j", method="tp", vectored=True)
    assert totals(out, name, path_of(fs, name)) == {"reads": 4, "writes": 6, "rbytes": 2600, "wbytes": 5500}


@pytest.mark.kernel
def test_read_only_and_text_columns(fs):
    name, out, err = traced(fs, "-C", "--read-only", "-s", "rbytes", method="tp")
    lines = out.splitlines()
    assert lines[0] == "Tracing... Output every 1 secs. Hit Ctrl-C to end"
    assert "TID     COMM             READS  WRITES R_Kb    W_Kb    T FILE" in lines
    mine = [l for l in lines if l.endswith(" " + name)]
    assert len(mine) == 1, out   # one interval: the I/O is done before SIGINT ends it
    # 2100 bytes read: 2 KiB, rounded down; no writes with --read-only
    assert re.fullmatch(rf"{os.getpid():<7} {re.escape(COMM):<16} 3      0      2       0       R {name}",
                        mine[0]), mine[0]


@pytest.mark.kernel
def test_kernel_functions_only_exits_1_without_them():
    assert_no_kernel_function_tracing("filetop", "vfs_read", attach="kprobe")


@pytest.mark.parametrize("args,needle", [
    (["-s", "bytes"], "--sort"),
    (["-r", "0"], "--maxrows"),
    (["--read-only", "--write-only"], "--read-only and --write-only"),
    (["x"], "interval"),
    (["-p", "abc"], "--pid"),
])
def test_usage_errors_exit_2_one_line(args, needle):
    r = run("filetop", *args)
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("filetop: ") and needle in lines[0] and "--help" in lines[0]


@pytest.mark.kernel
def test_all_files_adds_other_types():
    """-a counts a character device (T "O"): 3 writes of 100 bytes to
    /dev/null; without -a the same writes are not counted."""
    def writes_to_null(*args):
        with Tool("filetop", "-p", os.getpid(), "-j", *args,
                  env={"TRACEKIT_ATTACH": "tp"}) as t:
            fd = os.open("/dev/null", os.O_WRONLY)
            for _ in range(3):
                assert os.write(fd, b"n" * 100) == 100
            os.close(fd)
            out, err, rc = t.stop()
        assert rc == 0, err
        return [(r["file_type"], r["writes"], r["wbytes"]) for r in json_lines(out)
                if r["type"] == "filetop" and r["file"] == "null"]

    assert writes_to_null("-a") == [("O", 3, 300)]
    assert writes_to_null() == []


def blocked_in_write(pid, fd):
    """True while pid's main thread is in write(2) on fd (/proc/PID/syscall:
    the call's number, then its arguments in hex)."""
    try:
        with open(f"/proc/{pid}/syscall") as f:
            return f.read().startswith(f"{syscall_numbers()['write']} {fd:#x} ")
    except OSError:
        return False


def test_duration_counts_from_when_tracing_began():
    """--duration runs from when the tool is attached, as bcc's tools
    sleep for it once attached, not from its start: loading can take a
    second of its own (under TCG the arm64 6.12 VM's 1 s offcputime run
    ended before the workload slept). Here the start is made long on
    purpose: the tool's stdout is a full pipe, so its "Tracing..." line,
    printed before it is ready, blocks until the test reads, 1.5 s after
    the tool's start and past its 1 s duration. It must still run 1 s from
    there: its last interval, printed at the end, comes 1 s or more after
    the test let it go on."""
    rfd, wfd = os.pipe()
    fcntl.fcntl(wfd, fcntl.F_SETPIPE_SZ, 4096)
    os.set_blocking(wfd, False)
    filler = 0
    try:
        while True:
            filler += os.write(wfd, b"x" * 4096)
    except BlockingIOError:
        pass
    os.set_blocking(wfd, True)   # the flag is the pipe's, shared with the tool
    started = time.monotonic()
    p = subprocess.Popen([tool_path("filetop"), "-C", "-d", "1"], stdout=wfd,
                         stderr=subprocess.PIPE)
    os.close(wfd)
    try:
        while not blocked_in_write(p.pid, 1):
            assert p.poll() is None, p.communicate()
            time.sleep(0.01)
        time.sleep(max(0.0, started + 1.5 - time.monotonic()))
        assert p.poll() is None, p.communicate()
        unblocked = time.monotonic()   # the tool goes on only after this
        out = b""
        while chunk := os.read(rfd, 65536):
            out += chunk
            last_read = time.monotonic()   # the end's interval: its last
        p.wait(timeout=30)
    finally:
        os.close(rfd)
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, p.stderr.read()
    assert out[filler:].startswith(b"Tracing... Output every 1 secs."), out[filler:]
    # Timed by the output, not the exit: closing its BPF links takes this
    # kernel 1.5 s after exit_group.
    assert last_read - unblocked >= 1.0, (last_read - unblocked, out[filler:])
