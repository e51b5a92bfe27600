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


def cpu_flush() -> int:
    """Write every byte of a host buffer twice the LLC (at least
    MIN_CPU_FLUSH_BYTES), allocated once per process; returns its size."""
    global _cpu_buffer
    import numpy as np

    if _cpu_buffer is None:
        # np.ones, not np.zeros: zeros comes from calloc, whose pages are
        # mapped 4 KiB at a time on the first write (6.7 s for the 520 MiB
        # of the 2-core CI machine, whose LLC reads 260 MiB), where numpy's
        # own allocation asks for huge pages (0.13 s). The content is never read.
        _cpu_buffer = np.ones(max(2 * llc_bytes(), MIN_CPU_FLUSH_BYTES), dtype=np.uint8)
    _cpu_buffer += 1  # a read and a write of every line: the old contents leave every cache level
    return _cpu_buffer.nbytes
