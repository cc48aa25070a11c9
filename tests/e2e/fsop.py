"""What test_fsslower.py and test_fsdist.py share: the child
(progs/fs_target.c) that opens a marked file, writes 4096 bytes 3 times,
reads 4096 bytes at 0 and at 4096, fsyncs it and fstats it, and a run of
a tool on it. Each way: the file system's own functions (fentry, kprobe)
where the kernel has them, the syscall tracepoints (tp) everywhere."""
import os
import subprocess

import pytest

from conftest import ROOT, Tool, Workload, require, tool_path

COMM = "fs-target"
EXPECTED = [("open", 0, 0), ("write", 4096, 0), ("write", 4096, 4096), ("write", 4096, 8192),
            ("read", 4096, 0), ("read", 4096, 4096), ("fsync", 0, 0), ("getattr", 0, 0)]
METHODS = ["tp", "fentry", "kprobe"]
LOSS_NONE = {"type": "loss", "events_lost": 0, "map_inserts_failed": 0}


@pytest.fixture(scope="session")
def fs_target(tmp_path_factory):
    path = tmp_path_factory.mktemp("fs") / COMM
    subprocess.run(["cc", "-O1", "-o", str(path), str(ROOT / "tests/e2e/progs/fs_target.c")],
                   check=True)
    return path


def traced(tool, fs, target, method, *args):
    """Run tool (-p the child) while the child makes its operations on
    fs/marked-<pid>; returns the file's name, stdout and stderr."""
    if method != "tp":
        require(method)
    with Workload(target) as child:
        name = f"marked-{child.pid}"
        with Tool(tool, "-p", child.pid, *args, env={"TRACEKIT_ATTACH": method}) as t:
            child.send(f"ops {fs.path / name}")
            out, err, rc = t.stop()
        child.finish()
    assert rc == 0, err
    return child.pid, name, out, err


def alias_run(alias, fs, target, *args):
    """Run tool by another name (a link made here, as make install's)."""
    link = fs.path.parent / alias
    os.symlink(tool_path("fsslower" if alias.endswith("slower") else "fsdist"), link)
    return traced(str(link), fs, target, "tp", *args)
