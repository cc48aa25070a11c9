#!/usr/bin/python3
"""tracekitd under process churn: N short-lived processes, each exec'ing
a program of its own name (a symlink to /bin/true), so that every one
brings a new comm and a new pid. tracekitd must stay bounded: its RSS,
its BPF maps' entries and its series. Scrapes /metrics at the start and
after each tenth of the run.

  /usr/bin/python3 bench/tracekitd_churn.py [--procs 100000] [--bin build/bin]

Prints a markdown section on stdout; progress on stderr."""
import argparse
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=60) as r:
        text = r.read().decode()
    vals = {}
    for line in text.splitlines():
        m = re.match(r'^(\w+)(\{[^}]*\})? (\S+)$', line)
        if m:
            vals[m.group(1) + (m.group(2) or "")] = float(m.group(3))
    return vals


def pick(v, prefix):
    return sum(x for k, x in v.items() if k.startswith(prefix))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--procs", type=int, default=100000)
    ap.add_argument("--bin", default=str(ROOT / "build/bin"))
    a = ap.parse_args()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    tmp = tempfile.mkdtemp(prefix="tkd-churn-")
    conf = os.path.join(tmp, "c.conf")
    Path(conf).write_text("[collectors]\nsyscalls = yes\nexecs = yes\nrunqlat = yes\n"
                          "tcpconnect = no\nvfsstat = no\n")
    rfd, wfd = os.pipe()
    d = subprocess.Popen([os.path.join(a.bin, "tracekitd"), "--config", conf,
                          "--listen", f"127.0.0.1:{port}"],
                         env=dict(os.environ, TRACEKIT_READY_FD=str(wfd)),
                         pass_fds=(wfd,), stderr=subprocess.DEVNULL)
    os.close(wfd)
    assert os.read(rfd, 16) == b"ready\n"
    rows = []

    def sample(done, secs):
        v = scrape(port)
        rows.append((done, secs, v["process_resident_memory_bytes"] / 2**20,
                     pick(v, 'tracekit_map_entries{collector="execs",map="pending"}'),
                     pick(v, 'tracekit_map_entries{collector="runqlat",map="start"}'),
                     len([k for k in v if k.startswith("tracekit_execs_total{")]),
                     v.get('tracekit_execs_total{comm="__overflow__"}', 0),
                     pick(v, "tracekit_events_lost_total")))
        log(rows[-1])

    sample(0, 0)
    links = os.path.join(tmp, "p")
    os.mkdir(links)
    t0 = time.monotonic()
    step = a.procs // 10
    for i in range(a.procs):
        p = os.path.join(links, f"c{i}")
        os.symlink("/bin/true", p)
        pid = os.posix_spawn(p, [p], {})
        os.waitpid(pid, 0)
        os.unlink(p)
        if (i + 1) % step == 0:
            sample(i + 1, time.monotonic() - t0)
    d.terminate()
    d.wait()
    print(f"## tracekitd: {a.procs:,} short-lived processes\n")
    print("Each process execs a program of its own name (a new comm and a new pid), "
          "with tracekitd's default collectors running here (syscalls, execs, runqlat; "
          "max_series 1000). Scraped at the start and after each tenth.\n")
    print("| processes | seconds | RSS (MiB) | execs map `pending` | runqlat map `start` "
          "| execs series | `__overflow__` count | events lost |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r[0]:,} | {r[1]:.0f} | {r[2]:.1f} | {r[3]:.0f} | {r[4]:.0f} | {r[5]} "
              f"| {r[6]:.0f} | {r[7]:.0f} |")


if __name__ == "__main__":
    main()
