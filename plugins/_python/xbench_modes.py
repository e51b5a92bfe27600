"""Timing modes of the protocol (docs/protocol.md, "Timing modes"): the Mode a
run request carries, and the host-side cache flush every Timer inherits.

A Timer's flush() runs before each timed call under --cold-cache, outside the
sample; the default here writes over a host buffer larger than the CPU's
last-level cache. GPU timers override it with a device write (their framework
files hold that code). A Timer's graph(fn) returns a replay of fn captured as a
CUDA graph, or raises Unsupported; the default raises.
"""

from __future__ import annotations

import glob
from dataclasses import dataclass

from xbench_contract import ConfigError

# At least this much is written on a CPU even when the LLC reads smaller
# (or cannot be read): a buffer several times any L3 of today.
MIN_CPU_FLUSH_BYTES = 64 << 20
# What a GPU timer writes: above the L2 of every current GPU (H100 50 MiB,
# H200 50 MiB, MI300X 256 MiB of Infinity Cache counts as the LLC there).
GPU_FLUSH_BYTES = 256 << 20

_FIELDS = ("cold_cache", "cuda_graph")


@dataclass(frozen=True)
class Mode:
    cold_cache: bool = False
    cuda_graph: bool = False

    @classmethod
    def from_json(cls, d) -> "Mode":
        """The request's "mode" (absent or None: warm and eager); ConfigError
        naming the field for a non-object, an unknown key or a non-boolean."""
        if d is None:
            return cls()
        if not isinstance(d, dict):
            raise ConfigError(f"request mode must be an object with {', '.join(_FIELDS)}, got {type(d).__name__}")
        unknown = sorted(set(d) - set(_FIELDS))
        if unknown:
            raise ConfigError(f"request mode has unknown field(s) {', '.join(unknown)}; fields: {', '.join(_FIELDS)}")
        for k, v in d.items():
            if not isinstance(v, bool):
                raise ConfigError(f"request mode.{k} must be true or false, got {v!r}")
        return cls(**d)

    def to_json(self) -> dict:
        """Only the fields that are on, as result.Mode omits the rest."""
        return {k: True for k in _FIELDS if getattr(self, k)}

    def __str__(self) -> str:
        on = [k.replace("_", "-") for k in _FIELDS if getattr(self, k)]
        return "+".join(on) or "warm"


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
        _cpu_buffer = np.zeros(max(2 * llc_bytes(), MIN_CPU_FLUSH_BYTES), dtype=np.uint8)
    _cpu_buffer += 1  # a read and a write of every line: the old contents leave every cache level
    return _cpu_buffer.nbytes
