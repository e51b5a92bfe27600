"""The cache flush of the timing modes (docs/protocol.md, "Timing modes"):
the host-side flush every Timer inherits and the sizes a flush writes. The
Mode a run request carries is a protocol type (xbench_py.types.Mode). This
module imports nothing of xbench_py, so types can build on it.

A Timer's flush() runs before each timed call under --cold-cache, outside the
sample; the default here writes over a host buffer larger than the CPU's
last-level cache. GPU timers override it with a device write (their framework
files hold that code). A Timer's graph(fn) returns a replay of fn captured as a
CUDA graph, or raises Unsupported; the default raises.
"""

from __future__ import annotations

import glob

# At least this much is written on a CPU even when the LLC reads smaller
# (or cannot be read): a buffer several times any L3 of today.
MIN_CPU_FLUSH_BYTES = 64 << 20
# What a GPU timer writes: above the L2 of every current GPU (H100 50 MiB,
# H200 50 MiB, MI300X 256 MiB of Infinity Cache counts as the LLC there).
GPU_FLUSH_BYTES = 256 << 20


def llc_bytes() -> int:
    """The largest CPU cache the kernel reports (sysfs), or 0 when unknown."""
    best = 0
    for path in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*/size"):
        try:
            text = open(path).read().strip().upper()
        except OSError:
            continue
        mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        digits = text.rstrip("KMG")
        if digits.isdigit():
            best = max(best, int(digits) * mult)
    return best


_cpu_buffer = None


def _mapped_bytes(n: int):
    """n bytes of host memory with every page already mapped (Linux:
    MAP_POPULATE). Left to fault in page by page on the first write
    (np.zeros and np.ones alike: direct compaction for huge pages, or 4 KiB
    faults), the buffer cost seconds a process on the 2-core CI machine, and
    a varying number of them (docs/results/ci-time.md)."""
    import mmap

    import numpy as np

    populate = getattr(mmap, "MAP_POPULATE", 0)
    if not populate:
        return np.ones(n, dtype=np.uint8)
    return np.frombuffer(mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | populate), dtype=np.uint8)


def cpu_flush() -> int:
    """Write every byte of a host buffer twice the LLC (at least
    MIN_CPU_FLUSH_BYTES), allocated once per process; returns its size."""
    global _cpu_buffer
    if _cpu_buffer is None:
        _cpu_buffer = _mapped_bytes(max(2 * llc_bytes(), MIN_CPU_FLUSH_BYTES))
    _cpu_buffer += 1  # a read and a write of every line: the old contents leave every cache level
    return _cpu_buffer.nbytes
