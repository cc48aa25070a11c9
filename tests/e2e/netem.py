"""tc netem on the namespace's end of the veth pair (netns.NetNs): a
delay or a loss on every packet the namespace sends to the test's own
side. Needs tc (iproute2) and sch_netem (a module in Debian's kernels:
the kernel matrix has it, this repository's host kernel has not); the
tests skip saying so where either is missing."""
import json
import shutil
import subprocess

import pytest


def need_netem():
    if not shutil.which("tc"):
        pytest.skip("tc (iproute2) is not installed")
    subprocess.run(["modprobe", "sch_netem"], capture_output=True)


def netem(ns, *spec, change=False):
    """tc qdisc add (or change) dev PEER_IF root netem SPEC in ns; skips
    where the kernel has no netem."""
    need_netem()
    r = subprocess.run(ns.argv("tc", "qdisc", "change" if change else "add", "dev", ns.peer_if,
                               "root", "netem", *spec), capture_output=True, text=True)
    if r.returncode and not change and "unknown" in r.stderr:
        pytest.skip(f"this kernel has no sch_netem: {r.stderr.strip()}")
    assert r.returncode == 0, f"tc netem {' '.join(spec)}: {r.stderr.strip()}"


def nstat(ns, name):
    """The namespace's own counter NAME (nstat -asz: absolute, every one, no history file written)."""
    out = subprocess.run(ns.argv("nstat", "-asz", "--json"), check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)["kernel"][name]
