"""cachestat: the page cache misses of a cold read and the hits of a warm
one, made by a reader process the test starts and filters with -p.

The file read is a small loop device the test makes, read through its
own page cache (buffered reads of /dev/loopN, kept open): its pages are dropped with
posix_fadvise(DONTNEED) before the cold read, and POSIX_FADV_RANDOM
turns readahead off, so that each read adds and touches exactly the
device's pages (the loop driver's reads of its backing file are made by
its kernel thread, which -p leaves out)."""
import json
import re
import subprocess
import sys

import pytest

from blockdev import LoopDev
from conftest import (Tool, assert_no_kernel_function_tracing, json_lines, kernel_has,
                      loss_record, require, run)

METHODS = ["fentry", "kprobe"]
PAGE = 4096
DEV_SIZE = 1 << 20
PAGES = DEV_SIZE // PAGE
HEADER = "    HITS   MISSES  DIRTIES HITRATIO   BUFFERS_MB  CACHED_MB"
ROW = re.compile(r" +\d+ +\d+ +\d+ +\d+\.\d\d% +\d+ +\d+")
FIELDS = {"type", "time", "interval", "seconds", "hits", "misses", "dirties", "hit_ratio",
          "buffers_kb", "cached_kb", "pages_accessed", "pages_added", "pages_dirtied"}

# The device stays open: its last close would drop its page cache.
READER = r"""
import os, sys
path, size = sys.argv[1], int(sys.argv[2])
fd = os.open(path, os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
print("ready", flush=True)
for line in sys.stdin:
    if line.strip() == "cold":
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    n = len(os.pread(fd, size, 0))
    print("done", n, flush=True)
"""


class Reader:
    """A process that reads the whole device once per command: "cold"
    drops its cached pages first, "warm" does not."""

    def __init__(self, path):
        self.proc = subprocess.Popen([sys.executable, "-c", READER, path, str(DEV_SIZE)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     bufsize=1)
        self.pid = self.proc.pid
        assert self.proc.stdout.readline() == "ready\n"

    def read(self, how):
        self.proc.stdin.write(how + "\n")
        assert self.proc.stdout.readline() == f"done {DEV_SIZE}\n"

    def close(self):
        self.proc.stdin.close()
        assert self.proc.wait(timeout=10) == 0


@pytest.fixture
def reader(tmp_path):
    dev = LoopDev(tmp_path, size=DEV_SIZE)
    r = Reader(dev.path)
    try:
        yield r
    finally:
        r.close()
        dev.close()


def traced_read(reader, how, method):
    """cachestat -j -p READER over one read: its one record."""
    with Tool("cachestat", "-v", "-j", "-p", reader.pid, "3600",
              env={"TRACEKIT_ATTACH": method}) as t:
        reader.read(how)
        out, err, rc = t.stop()
    assert rc == 0, err
    probes = dict(re.findall(r"^cachestat: probe (\S+): (\S+) ", err, re.M))
    assert probes.get("add") == method and probes.get("access") == method, err
    records = json_lines(out)
    assert loss_record(records) == {"type": "loss", "events_lost": 0,
                                    "map_inserts_failed": 0}
    assert len(records) == 2, records
    r = records[0]
    assert set(r) == FIELDS and (r["type"], r["interval"]) == ("cachestat", 1), r
    return r


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.kernel
def test_cold_read_misses_and_warm_read_hits(reader, method):
    require(method)
    reader.read("warm")  # the pages the test then drops are surely cached
    cold = traced_read(reader, "cold", method)
    assert cold["pages_added"] >= PAGES and cold["misses"] >= PAGES, json.dumps(cold)
    assert cold["hits"] == 0 and cold["hit_ratio"] == 0, json.dumps(cold)
    warm = traced_read(reader, "warm", method)
    assert warm["pages_accessed"] >= PAGES and warm["hits"] >= PAGES, json.dumps(warm)
    assert (warm["misses"], warm["pages_added"], warm["hit_ratio"]) == (0, 0, 1), json.dumps(warm)
    assert warm["buffers_kb"] >= DEV_SIZE // 1024, json.dumps(warm)  # the device's cache


@pytest.mark.kernel
def test_text_columns_and_count():
    if not kernel_has("fentry"):
        require("kprobe")
    with Tool("cachestat", "-T", "1", "2") as t:
        out, err, rc = t.wait(timeout=30)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0] == "TIME    " + " " + HEADER and len(lines) == 3, out
    assert all(re.fullmatch(r"\d\d:\d\d:\d\d " + ROW.pattern, l) for l in lines[1:]), out


@pytest.mark.parametrize("attach", [None, "kprobe"])
@pytest.mark.kernel
def test_no_kernel_function_tracing_fails_in_one_line(attach):
    """No tracepoint sees a page cache access: no tracepoint way, and the
    one line says so."""
    assert_no_kernel_function_tracing("cachestat", "filemap_add_folio", attach=attach)
    r = run("cachestat")
    assert r.stderr.endswith(" (no tracepoint sees a page cache hit: "
                             "cachestat needs kernel functions)\n"), r.stderr


def test_help():
    r = run("cachestat", "--help")
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout.startswith("Usage: cachestat [OPTION...] [interval [count]]")
    for word in ["filemap_add_folio", "mark_page_accessed", "mark_buffer_dirty", "HITRATIO",
                 "writeback_dirty_folio"]:
        assert word in r.stdout


@pytest.mark.parametrize("args,words", [
    (["0"], ["interval", "'0'"]),
    (["x"], ["interval", "'x'"]),
    (["1", "0"], ["count", "'0'"]),
    (["1", "2", "3"], ["'3'"]),
    (["-p", "x"], ["--pid", "'x'"]),
    (["--print-cgroup"], ["--print-cgroup", "--cgroup PATH"]),
    (["--bogus"], ["'--bogus'"]),
    (["-Q"], ["'-Q'"]),
])
def test_usage_errors(args, words):
    r = run("cachestat", *args)
    assert (r.returncode, r.stdout) == (2, ""), r.stderr
    assert r.stderr.count("\n") == 1 and r.stderr.endswith("\n"), r.stderr
    assert r.stderr.startswith("cachestat: ")
    for w in words:
        assert w in r.stderr, r.stderr
