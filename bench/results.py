#!/usr/bin/python3
"""bench/RESULTS.md: each benchmark owns one section between markers
<!-- NAME:begin --> and <!-- NAME:end -->, rewritten by each run.

As a module: machine() and write_section(name, text).
As a command: bench/results.py NAME < markdown  (writes that section,
prefixed with the machine line, and echoes it)."""
import datetime
import os
import platform
import subprocess
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def machine():
    """(CPU model, CPU count, kernel release, libbpf-tools version)."""
    model = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    ver = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libbpf-tools"],
                         capture_output=True, text=True).stdout or "unknown"
    return model, os.cpu_count(), platform.release(), ver


def machine_line():
    model, ncpu, kernel, ver = machine()
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return f"- Date: {now}; kernel {kernel}; {model}, {ncpu} CPUs; libbpf-tools {ver}\n"


def write_section(name, text, path=RESULTS):
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    section = f"{begin}\n{text.rstrip(chr(10))}\n{end}\n"
    old = path.read_text() if path.exists() else "# Benchmarks\n\n"
    if begin in old and end in old:
        new = old[:old.index(begin)] + section + old[old.index(end) + len(end) + 1:]
    else:
        new = old.rstrip("\n") + "\n\n" + section
    path.write_text(new)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: bench/results.py NAME < markdown")
    body = sys.stdin.read()
    lines = body.splitlines(keepends=True)
    # A leading "## title" stays first; the machine line follows it.
    head = lines[0] if lines and lines[0].startswith("#") else ""
    text = head + (("\n" if head else "") + machine_line()) + "".join(lines[1 if head else 0:])
    write_section(sys.argv[1], text)
    sys.stdout.write(text)
