#!/usr/bin/python3
"""What must be copied to a machine that has none of the libraries, to
run each tool there: tracekit's static programs (make static) against
Debian's libbpf-tools and bpftrace, which are dynamically linked, so that
they need their shared libraries copied too (ldd's list, each file once).

Sizes are of the files as shipped and stripped (a copy, `strip`); a
shared library counts at its file's size. Prints the markdown section of
bench/RESULTS.md.

Environment: TRACEKIT_STATIC_BIN (default build/static/bin),
LIBBPF_TOOLS (default /usr/sbin)."""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from startup import file_size, ldd, stripped_size  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
KB = 1024


def closure(path):
    """The files one copies to run path: itself, every shared library it
    loads, and the dynamic loader (which ldd names without "=>")."""
    files = {os.path.realpath(path)} | set(ldd(path).values())
    out = subprocess.run(["ldd", str(path)], capture_output=True, text=True).stdout
    for line in out.splitlines():
        word = line.split()[0] if line.split() else ""
        if word.startswith("/") and os.path.exists(word):
            files.add(os.path.realpath(word))
    return files


def main():
    static_dir = Path(os.environ.get("TRACEKIT_STATIC_BIN", ROOT / "build/static/bin"))
    lt_dir = Path(os.environ.get("LIBBPF_TOOLS", "/usr/sbin"))
    if not (static_dir / "execsnoop").exists():
        sys.exit(f"sizes.py: no static tools in {static_dir}: run make static")
    tools = sorted(p.name for p in static_dir.iterdir()
                   if p.is_file() and not p.is_symlink())
    bpftrace = shutil.which("bpftrace")
    rows, shared = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for t in tools:
            tk = stripped_size(static_dir / t, tmp)
            lt = lt_dir / t
            if lt.exists() and os.access(lt, os.X_OK) and not lt.read_bytes()[:2] == b"#!":
                files = closure(lt)
                libs = files - {os.path.realpath(lt)}
                for f in libs:
                    shared[f] = file_size(f)
                lt_bin = stripped_size(lt, tmp)
                rows.append((t, tk, lt_bin, lt_bin + sum(file_size(f) for f in libs), len(libs)))
            else:
                rows.append((t, tk, None, None, None))
        bt = None
        if bpftrace:
            bt_files = closure(bpftrace)
            bt = (file_size(bpftrace), sum(file_size(f) for f in bt_files), len(bt_files) - 1)

    both = [r for r in rows if r[2] is not None]
    out = ["## Static binaries: what to copy to a machine without the libraries", "",
           "tracekit: `make static` (every library static, glibc too; "
           "tests/e2e/test_static.py runs them in an empty root). libbpf-tools and bpftrace "
           "are Debian's, dynamically linked: copying one means copying the shared libraries "
           "it loads too (ldd's list with the dynamic loader, each file at its size). "
           "Sizes stripped, KB = KiB.", "",
           "| tool | tracekit static (KB) | libbpf-tools (KB) | libbpf-tools with its libraries (KB) |",
           "|---|---:|---:|---:|"]
    for t, tk, lt, lt_all, nlibs in rows:
        if lt is None:
            out.append(f"| {t} | {tk / KB:.0f} | — | — |")
        else:
            out.append(f"| {t} | {tk / KB:.0f} | {lt / KB:.0f} | {lt_all / KB:.0f} ({nlibs} libraries) |")
    out.append("")
    tk_all = sum(r[1] for r in rows)
    tools_only = [r for r in rows if r[0] not in ("tracekitd", "tracekit-doctor")]
    out.append(f"- tracekit: {len(tools_only)} tools, median {sorted(r[1] for r in tools_only)[len(tools_only) // 2] / KB:.0f} KB each, "
               f"{tk_all / KB / KB:.1f} MB for all {len(rows)} programs "
               f"(tracekitd {dict((r[0], r[1]) for r in rows).get('tracekitd', 0) / KB:.0f} KB: "
               "libmicrohttpd and GnuTLS inside).")
    if both:
        lt_libs = sum(shared.values())
        out.append(f"- libbpf-tools, the {len(both)} tools both have: "
                   f"{sum(r[2] for r in both) / KB / KB:.1f} MB of binaries plus "
                   f"{lt_libs / KB:.0f} KB of shared libraries ({len(shared)} files); "
                   f"tracekit's same {len(both)}: {sum(r[1] for r in both) / KB / KB:.1f} MB.")
    if bt:
        out.append(f"- bpftrace (one binary for every script): {bt[0] / KB:.0f} KB, "
                   f"{bt[1] / KB / KB:.1f} MB with the {bt[2]} shared libraries it loads "
                   "(LLVM and clang among them); Debian has no static bpftrace.")
    print("\n".join(out))


if __name__ == "__main__":
    main()
