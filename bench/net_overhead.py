#!/usr/bin/python3
"""Throughput lost to tcplife, tcptop and tcpretrans on loopback TCP
transfers, tracekit's against libbpf-tools' (Debian's, /usr/sbin) where
they attach here.

Two workloads of bench/tcp_load.c, each with a server of its own:
The workload runs on CPU 0 only (its client and server both), so that a
wakeup between them does not wait for an idle vCPU to come back (which
made untraced runs slower than traced ones here: a tracer kept the other
CPU busy); the tracers' own processes run where the scheduler puts them.

- connections: 3000 connections one after another (connect, 100 bytes
  each way, close), wall-clock ns per connection: what a tracer of state
  changes pays (tcplife: a few changes per connection on each end);
- stream: 256 MiB up one connection in 1 KiB send() calls, wall-clock ns
  per MiB: what a tracer of sends and receives pays per call (tcptop),
  and what one of retransmits pays when there are none (tcpretrans: a
  clean loopback retransmits nothing, so its row is its cost at rest).

Tracers alternate with untraced runs as bench/overhead.py says (each
tracer run between two untraced runs, rotating order); the tables give
medians over the rounds. Every tool runs with its default options and
its output drained as it comes.

A peer that cannot attach here (its kernel-function probes, where the
kernel refuses fentry and has no kprobes) gets its error instead of a
row; libbpf-tools 0.26 has no tcpretrans. The kernel matrix compares
their output, not their speed (tests/e2e).

    /usr/bin/python3 bench/net_overhead.py [--rounds 7]

Prints a markdown section on stdout (for bench/results.py net); progress
on stderr. Needs root, cc, libbpf-tools."""
import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

from overhead import Tracer, alternate, build, die, table_rows

CONNS, MIB, CHUNK = 3000, 256, 1024


def measure(argv):
    r = subprocess.run(argv, capture_output=True, text=True, check=True)
    return min(float(x) for x in r.stdout.split())


def peer_error(argv):
    """The error of a peer that cannot attach here (None if it can)."""
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = p.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        p.terminate()
        p.communicate()
        return None
    lines = [x for x in err.splitlines() if x.strip()]
    why = [x for x in lines if "load failed" in x or "failed to" in x][:1] + lines[-1:]
    return " / ".join(dict.fromkeys(why)) or f"exit {p.returncode}: {out.strip()}"


def verdict(what, med, none, tk, peer, unit):
    t, p = med[tk], med[peer]
    if p <= 0:
        return (f"Target, {what}'s throughput loss at most half of libbpf-tools': not "
                f"measurable in this run (libbpf-tools' median overhead {p:+.0f} {unit}, "
                f"within the noise; tracekit's {t:+.0f}).")
    return (f"**Target: {what}'s throughput loss at most half of libbpf-tools': "
            f"{'met' if t <= 0.5 * p else 'MISSED'}** (tracekit / libbpf-tools = "
            f"{t / p:.2f}, ratio of median slowdowns: tracekit {t / none:+.1%}, "
            f"libbpf-tools {p / none:+.1%}; {t:+.0f} vs {p:+.0f} {unit}).")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--bin", default=os.environ.get("TRACEKIT_BIN",
                                                    str(Path(__file__).resolve().parents[1]
                                                        / "build/bin")))
    args = ap.parse_args()
    if os.geteuid() != 0:
        die("run as root: it loads BPF programs")
    tk = {n: Path(args.bin) / n for n in ("tcplife", "tcptop", "tcpretrans")}
    peer = {n: Path("/usr/sbin") / n for n in ("tcplife", "tcptop")}
    for p in (*tk.values(), *peer.values()):
        if not os.access(p, os.X_OK):
            die(f"{p} is missing (make; apt-get install libbpf-tools)")

    tmp = tempfile.mkdtemp(prefix="net-bench-")
    try:
        build(tmp, programs=[("tcp_load", "tcp_load.c")], floor=False)
        load = ["taskset", "-c", "0", f"{tmp}/tcp_load"]
        conn = [*load, "conn", str(CONNS), "3"]
        stream = [*load, "stream", str(MIB), str(CHUNK), "3"]

        life = [Tracer("tracekit tcplife", [str(tk["tcplife"])], "fd", drain=True,
                       expect=r"tcp_load"),
                Tracer("libbpf-tools tcplife", ["stdbuf", "-oL", str(peer["tcplife"])],
                       "line", drain=True, expect=r"tcp_load")]
        base_conn = alternate(life, lambda: measure(conn), args.rounds)

        flow = [Tracer("tracekit tcptop", [str(tk["tcptop"]), "-C", "1"], "fd", drain=True,
                       expect=r"127\.0\.0\.1"),
                Tracer("tracekit tcpretrans", [str(tk["tcpretrans"])], "fd", drain=True)]
        top_err = peer_error([str(peer["tcptop"]), "-C", "1", "1"])
        if top_err is None:
            flow.append(Tracer("libbpf-tools tcptop", ["stdbuf", "-oL", str(peer["tcptop"]),
                                                       "-C", "1"], "line", drain=True,
                               expect=r"127\.0\.0\.1"))
        base_stream = alternate(flow, lambda: measure(stream), args.rounds)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    med = {t.name: statistics.median(s[1] for s in t.samples) for t in life + flow}
    none_c, none_s = statistics.median(base_conn), statistics.median(base_stream)
    lines = [
        "## network: tcplife, tcptop and tcpretrans on loopback TCP transfers",
        "",
        f"- Workloads: `bench/tcp_load.c` over loopback with its own server: {CONNS} "
        "connections one after another (connect, 100 bytes each way, close), ns per "
        f"connection; and {MIB} MiB up one connection in {CHUNK}-byte send() calls, ns per "
        f"MiB; {args.rounds} rounds, each run 3 bursts (fastest burst); the workload on CPU 0 "
        "only",
        "- Each tracer run sits between two untraced runs; overhead = with - mean(around); "
        "slowdown = overhead / untraced cost; medians over the rounds. Every tool runs with "
        "its default options, its output drained as it comes",
        "",
        "Connections (tcplife):",
        "",
        "| tracer | ns/connection | overhead ns/connection (median) | min .. max | vs "
        "libbpf-tools tcplife |",
        "|---|---:|---:|---:|---:|",
    ]
    lines += table_rows(life, base_conn, "libbpf-tools tcplife", 0)
    ref = "libbpf-tools tcptop" if top_err is None else "tracekit tcptop"
    lines += ["", f"Stream (tcptop, tcpretrans; ratios against {ref}):", "",
              "| tracer | ns/MiB | overhead ns/MiB (median) | min .. max | ratio |",
              "|---|---:|---:|---:|---:|"]
    lines += table_rows(flow, base_stream, ref, 0)
    lines += ["", verdict("tcplife", med, none_c, "tracekit tcplife", "libbpf-tools tcplife",
                          "ns per connection")]
    if top_err is None:
        lines.append(verdict("tcptop", med, none_s, "tracekit tcptop", "libbpf-tools tcptop",
                             "ns per MiB"))
    else:
        lines.append(f"Target, tcptop's throughput loss at most half of libbpf-tools': not "
                     f"measured here (tracekit's slowdown "
                     f"{med['tracekit tcptop'] / none_s:+.1%}; libbpf-tools' tcptop cannot "
                     f"attach on this kernel: `{top_err}`; its probes are kernel functions "
                     "(tcp_sendmsg, tcp_cleanup_rbuf), and this kernel refuses fentry and "
                     "has no kprobes).")
    lines.append(f"Target, tcpretrans's throughput loss at most half of libbpf-tools': not "
                 f"measured (libbpf-tools 0.26 has no tcpretrans; tracekit's slowdown on a "
                 f"stream that retransmits nothing {med['tracekit tcpretrans'] / none_s:+.1%}).")
    lines.append("")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
