"""A memory cgroup of its own for a test (drsnoop, oomkill), on whichever
hierarchy holds the memory controller: cgroup v1's (this host) or v2's
(the VMs)."""
import os
import subprocess
import uuid
from pathlib import Path


class MemCgroup:
    """limit: v1's memory.limit_in_bytes, or on v2 memory.high (reclaim,
    no OOM kill) or with hard=True memory.max (an OOM kill at the limit).
    path: the cgroup's path as the tools print it (from its hierarchy's
    root)."""

    def __init__(self, prefix, limit, hard=False):
        name = f"{prefix}-{uuid.uuid4().hex[:8]}"
        v1 = Path("/sys/fs/cgroup/memory")
        if (v1 / "memory.limit_in_bytes").exists():
            self.dir = v1 / name
            self.dir.mkdir()
            (self.dir / "memory.limit_in_bytes").write_text(str(limit))
            self.v2 = False
        else:
            root = Path([l.split()[1] for l in open("/proc/mounts")
                         if l.split()[2] == "cgroup2"][0])
            if "memory" not in (root / "cgroup.subtree_control").read_text().split():
                (root / "cgroup.subtree_control").write_text("+memory")
            self.dir = root / name
            self.dir.mkdir()
            (self.dir / ("memory.max" if hard else "memory.high")).write_text(str(limit))
            if (self.dir / "memory.swap.max").exists():
                (self.dir / "memory.swap.max").write_text("0")
            self.v2 = True
        self.path = "/" + name

    def start(self, argv, **kw):
        """argv started inside the cgroup (it moves itself before exec)."""
        procs = self.dir / "cgroup.procs"
        return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                text=True, **kw,
                                preexec_fn=lambda: procs.write_text(str(os.getpid())))

    def remove(self):
        self.dir.rmdir()
