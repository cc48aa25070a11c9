"""What this machine's kernel gives the tools that need hardware beside
BPF: a CPU PMU (llcstat's cache counters), a cpufreq driver (cpufreq's
frequencies). The tests of those tools check their one-line failure
where the hardware is missing, and say so where it is not."""
import ctypes
import errno
import os

PERF_TYPE_HARDWARE = 0
PERF_COUNT_HW_CACHE_REFERENCES = 3
PERF_COUNT_HW_CACHE_MISSES = 4
SYS_PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241}[os.uname().machine]


def hw_event_errno(config):
    """0 when this process can count the hardware event config, else the
    errno of perf_event_open (ENOENT or EOPNOTSUPP: no PMU with it)."""
    attr = bytearray(128)  # struct perf_event_attr, zeroed: counting only
    attr[0:4] = PERF_TYPE_HARDWARE.to_bytes(4, "little")
    attr[4:8] = len(attr).to_bytes(4, "little")
    attr[8:16] = config.to_bytes(8, "little")
    attr[40] = 1  # disabled
    libc = ctypes.CDLL(None, use_errno=True)
    buf = ctypes.create_string_buffer(bytes(attr), len(attr))
    fd = libc.syscall(SYS_PERF_EVENT_OPEN, buf, 0, -1, -1, 0)
    if fd >= 0:
        os.close(fd)
        return 0
    return ctypes.get_errno()


def has_cache_counters():
    return all(hw_event_errno(c) not in (errno.ENOENT, errno.EOPNOTSUPP)
               for c in (PERF_COUNT_HW_CACHE_REFERENCES, PERF_COUNT_HW_CACHE_MISSES))


def has_cpufreq():
    return any(os.path.exists(f"/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_cur_freq")
               for c in os.sched_getaffinity(0))
