"""The device clock of the Python backends (docs/protocol.md, "What one sample
is"): a sample is the span of the GPU work one call produced, from the start
of its first kernel, memcpy or memset to the end of its last, read from the
timestamps the GPU itself recorded (CUPTI activity records, NVIDIA). Nothing
the host does before the first kernel starts is in it (Python and framework
dispatch, launch latency, the wait for the result); every gap after it is
(kernels waiting on each other or on the host inside the call).

Why one module: JAX and IREE have no device events, and pytorch's events
start before the host has dispatched the call, so each framework's own clock
read a different thing. Every in-process framework wraps its own host timer
(which knows how to wait for its device) in SpanTimer, and the sample is the
same quantity whatever the framework.

CUPTI comes from NVIDIA's cupti-python wheel (module `cupti`) and the
libcupti it finds (torch's nvidia-cuda-cupti wheel or the CUDA toolkit's
extras/CUPTI). Where either is missing, or on ROCm (no CUPTI; rocprofiler is
not wired), device_timer() returns the framework's own timer unchanged, and
its description (env.timing) says so: every description starts with one of
the labels below.

Every stream is in the span: CUPTI's CONCURRENT_KERNEL, MEMCPY and MEMSET
activities record the work of every stream of the process, and the inner
timer waits for the whole device (pytorch: torch.cuda.synchronize, not the
end event) before the records are drained, so work a call leaves running on
a stream of its own is inside its sample, not after it. What the clock goes
through (the cupti module's functions, SpanTimer's and CuptiSource's
methods, span_ms, busy_ms) is protected by xbench_py.guard: code under test
that replaces one has its cell refused.

CUPTI's own cost stays out of the sample: records are drained (flushed) before
the call and after the framework's wait, both outside the span, and the span
is read from device timestamps, not from the host clock around the call. A
null call (one tiny kernel) reads ~1 us here against 20-110 us on the host
clock (H100, scripts/probe-jax-clock.sh).

What CUPTI adds to each kernel launch on the host (about 3 us on the H100)
does reach a sample where the device waits for the host between the call's
kernels: a launch-bound call. The jax scan at T=1024 (4103 kernels a call)
took 19.0 ms untraced on the host clock and 31.4 ms of CUPTI span traced.
So SpanTimer.calibrate() measures each configuration before its samples:
a few calls untraced on the framework's own clock, a few traced; where the
traced span is longer than the whole untraced call (by 10%), or the call has many
records and its device is idle more than LAUNCH_BOUND_IDLE of the span, the
configuration is launch-bound and its samples are the framework's own clock
with tracing off (events for pytorch and triton, host clock and
block_until_ready for JAX), and env.timing says so and why. For such a call
the host's dispatch is most of the work anyway, so a clock that includes
it is the honest one.

Except for a call of a few records (FEW_RECORDS): XLA puts a memset before
a cuBLAS GEMM or cuDNN's attention, and under tracing the host launched the
kernel 0.3-0.4 ms after it (H100: a 1x2048x5504 GEMM's span read 0.42 ms
against 0.13 ms for the whole call untraced, host clock included). There
the device's work is the records themselves, so the samples are their busy
time (the union of their intervals: CUPTI_BUSY), which leaves out the gaps
tracing widened and with them the few microseconds a kernel waits on the
one before it untraced; env.timing says so and why.
"""

from __future__ import annotations

import os
import statistics
import sys
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from xbench_py import guard
from xbench_py import types as xc

# The first word of env.timing, one per clock (docs/protocol.md).
CUPTI_SPAN = "cupti-kernel-span"
CUPTI_BUSY = "cupti-kernel-busy"
HOST_BLOCK = "host-clock-block"
CUDA_EVENTS = "cuda-events"
HOST_CPU = "host-clock"


# calibrate(): a call with more records than this whose device is idle more
# than this fraction of its span is launch-bound (CUPTI's per-launch cost would
# widen its gaps); CALIBRATION_CALLS calls each way measure it.
LAUNCH_BOUND_RECORDS = 50
LAUNCH_BOUND_SLOWER = 1.1
LAUNCH_BOUND_IDLE = 0.2
CALIBRATION_CALLS = 3
# calibrate(): a launch-bound call of at most this many records whose busy
# time (the union of its records) is within the untraced call is timed on
# the busy time instead of the host clock: its few kernels are the work, and
# the gaps between them are what tracing added (module docstring).
FEW_RECORDS = 8
LONG_CALL_MS = 100.0  # above this, calibrate() makes one call each way


@dataclass(frozen=True)
class Activity:
    """One activity record: what ran on the device and when (ns, GPU clock
    as CUPTI normalises it)."""

    kind: str  # "kernel" | "memcpy" | "memset"
    start_ns: int
    end_ns: int
    name: str = ""


class NoActivity(RuntimeError):
    """The call produced no device work that CUPTI recorded."""


def span_ms(records: Iterable[Activity]) -> float:
    """First start to last end of the complete records, in milliseconds.
    A record CUPTI could not complete (start or end 0, or end before start)
    is left out; NoActivity when none is left."""
    done = [r for r in records if r.start_ns > 0 and r.end_ns >= r.start_ns]
    if not done:
        raise NoActivity("CUPTI recorded no complete kernel, memcpy or memset for the call")
    return (max(r.end_ns for r in done) - min(r.start_ns for r in done)) / 1e6


def busy_ms(records: Iterable[Activity]) -> float:
    """The union of the complete records' intervals in ms: the time some
    work of the call was running (span_ms less the idle gaps); NoActivity
    when no record is complete, as span_ms."""
    ivs = sorted((r.start_ns, r.end_ns) for r in records if r.start_ns > 0 and r.end_ns >= r.start_ns)
    if not ivs:
        raise NoActivity("CUPTI recorded no complete kernel, memcpy or memset for the call")
    total, (cur_s, cur_e) = 0, ivs[0]
    for s, e in ivs[1:]:
        if s > cur_e:
            total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    return (total + cur_e - cur_s) / 1e6


class CuptiSource:
    """CUPTI's activity API through cupti-python: kernels (concurrent),
    memcpys and memsets, delivered to a list by CUPTI's buffer callbacks.

    One per process (CUPTI has one set of activity callbacks per process):
    start() registers the callbacks again each time, because another client
    (torch.profiler's kineto, jax.profiler) may have replaced them since."""

    BUFFER_BYTES = 8 << 20

    def __init__(self, cupti_module):
        self.c = cupti_module
        k = cupti_module.ActivityKind
        self._kinds = {int(k.CONCURRENT_KERNEL): "kernel", int(k.MEMCPY): "memcpy", int(k.MEMSET): "memset"}
        self._records: list = []
        self._lock = threading.Lock()
        self._flag = int(cupti_module.ActivityFlag.FLUSH_FORCED)
        self.active = False

    def _requested(self):
        return self.BUFFER_BYTES, 0  # 0: as many records as fit

    def _completed(self, activities) -> None:
        out = []
        for r in activities:
            kind = self._kinds.get(int(r.kind))
            if kind:
                out.append(Activity(kind, int(r.start), int(r.end), str(getattr(r, "name", "") or "")))
        with self._lock:
            self._records.extend(out)

    def start(self) -> None:
        self.c.activity_register_callbacks(self._requested, self._completed)
        for k in self._kinds:
            self.c.activity_enable(k)
        self.active = True
        self.drain()

    def drain(self) -> list:
        """Every record of work finished so far, and forget them. Called after
        the framework waited for the device, so the call's records are final."""
        self.c.activity_flush_all(self._flag)
        with self._lock:
            out, self._records = self._records, []
        return out

    def stop(self) -> None:
        if not self.active:
            return
        self.active = False
        for k in self._kinds:
            try:
                self.c.activity_disable(k)
            except Exception:  # noqa: BLE001 - stopping must not lose a result
                pass
        self.drain()


_source: CuptiSource | None = None
_why_not = ""


def cupti_source() -> tuple[CuptiSource | None, str]:
    """The process's CUPTI source, or (None, why it is unavailable). Probed
    once per process; XBENCH_CLOCK=host turns it off (for comparisons)."""
    global _source, _why_not
    if _source is not None or _why_not:
        return _source, _why_not
    if os.environ.get("XBENCH_CLOCK", "") == "host":
        _why_not = "XBENCH_CLOCK=host"
        return None, _why_not
    try:
        from cupti import cupti  # cupti-python
        # CUPTI's functions are the GPU clock: replaced, the cell is refused
        # (xbench_py.guard). Probed on the first request, before any of its code.
        guard.protect_all("cupti", cupti, ("activity_flush_all", "activity_enable", "activity_disable",
                                           "activity_register_callbacks"))
        src = CuptiSource(cupti)
        src.start()  # loads libcupti and attaches to the device: fails here if it cannot
        src.stop()
        _source = src
    except Exception as e:  # noqa: BLE001 - any failure means: no device clock here
        _why_not = f"CUPTI unavailable ({xc.failure_message(e)})"
    return _source, _why_not


def cupti_version() -> str:
    try:
        from importlib.metadata import version

        return "cupti-python " + version("cupti-python")
    except Exception:  # noqa: BLE001
        return "cupti-python"


class SpanTimer(xc.Timer):
    """The device clock around a framework's own timer: inner.time(fn) makes
    and waits for the call (its host reading is dropped); the sample is the
    span of the activity records drained in between. flush, graph and the
    first (compile) call are the inner timer's: compile_ms keeps its meaning
    (host time of the first call, compilation included)."""

    def __init__(self, inner: xc.Timer, source: CuptiSource):
        self.inner = inner
        self.source = source
        self.description = (f"{CUPTI_SPAN}: first kernel/memcpy/memset start to last end of the call's CUPTI "
                            f"activity records (GPU timestamps; {cupti_version()}); the call waited for by "
                            f"{inner.description}")
        self.last: list = []  # the last sample's records (tests, diagnostics)
        self.untraced = False  # calibrate() found the call launch-bound
        self.busy = False  # calibrate() found a few-record call whose gaps tracing widened

    def first(self, fn: Callable[[], Any]) -> float:
        if not self.source.active:
            self.source.start()
        return self.inner.time(fn)

    def calibrate(self, fn: Callable[[], Any]) -> None:
        """Before the warmup: is tracing going to enter this call's samples?
        CALIBRATION_CALLS calls untraced on the inner clock, as many traced;
        launch-bound (see the module docstring) switches the samples to the
        inner clock, untraced, and says so in the description."""
        self.source.stop()
        first = self.inner.time(fn)
        calls = 1 if first > LONG_CALL_MS else CALIBRATION_CALLS  # a long call: one each way is enough
        untraced = statistics.median([first] + [self.inner.time(fn) for _ in range(calls - 1)])
        spans, busy, n = [], [], 0
        self.time(fn)  # dropped: the first call after tracing restarts pays CUPTI's own start
        for _ in range(calls):
            spans.append(self.time(fn))
            busy.append(busy_ms(self.last))
            n = max(n, len(self.last))
        traced, idle = statistics.median(spans), 1 - statistics.median(busy) / max(statistics.median(spans), 1e-12)
        why = launch_bound(traced, untraced, n, idle)
        if why and n <= FEW_RECORDS and statistics.median(busy) <= untraced:
            self.busy = True
            self.description = (f"{CUPTI_BUSY}: the union of the call's CUPTI activity record intervals (kernels, "
                                f"memcpys, memsets; GPU timestamps; {cupti_version()}), the gaps between them left "
                                f"out: {why}; busy {statistics.median(busy):.4g} ms; the call waited for by "
                                f"{self.inner.description}")
        elif why:
            self.untraced = True
            self.source.stop()
            self.description = f"{self.inner.label}: {self.inner.description} (launch-bound call, CUPTI tracing off: {why})"

    def time(self, fn: Callable[[], Any]) -> float:
        if self.untraced:
            return self.inner.time(fn)
        if not self.source.active:
            self.source.start()
        self.source.drain()  # what ran before (warmup, a cache flush) is not this call's
        self.inner.time(fn)
        self.last = self.source.drain()
        if self.busy:
            return busy_ms(self.last)
        return span_ms(self.last)

    def flush(self) -> None:
        self.inner.flush()

    def has_device_flush(self) -> bool:
        return xc.has_device_flush(self.inner)

    def graph(self, fn: Callable[[], Any]) -> Callable[[], Any]:
        return self.inner.graph(fn)

    def close(self) -> None:
        self.source.stop()
        self.inner.close()


def launch_bound(traced_ms: float, untraced_ms: float, records: int, idle: float) -> str:
    """Why a call is launch-bound (CUPTI's per-launch cost would enter its
    span), or "" when it is not: its traced span is longer than the whole
    untraced call on the framework's clock (by LAUNCH_BOUND_SLOWER: on the
    H100 a 4096^3 torch GEMM read 0.198 ms of span against 0.1915 ms of
    untraced events, the span's own spread), or it has more than
    LAUNCH_BOUND_RECORDS records and its device is idle more than
    LAUNCH_BOUND_IDLE of the span."""
    if traced_ms > LAUNCH_BOUND_SLOWER * untraced_ms:
        return (f"{records} kernels/copies, traced span {traced_ms:.4g} ms > untraced call "
                f"{untraced_ms:.4g} ms on the framework's clock")
    if records > LAUNCH_BOUND_RECORDS and idle > LAUNCH_BOUND_IDLE:
        return (f"{records} kernels/copies, device idle {idle:.0%} of the traced span "
                f"{traced_ms:.4g} ms (untraced call {untraced_ms:.4g} ms)")
    return ""


def device_timer(inner: xc.Timer, device_kind: str) -> xc.Timer:
    """The protocol's clock for a call on device_kind: SpanTimer around inner
    on an NVIDIA GPU with CUPTI; otherwise inner itself, its description
    prefixed with why (CPU: the host clock is the clock; ROCm or no CUPTI:
    the framework's fallback, labelled)."""
    if getattr(inner, "own_clock", False):  # a method of its own (KernelBench's: xbench_pytorch.model.KernelBenchTimer)
        if not inner.description.startswith(inner.label):
            inner.description = f"{inner.label}: {inner.description}"
        return inner
    if device_kind == "cuda":
        src, why = cupti_source()
        if src is not None:
            return SpanTimer(inner, src)
    else:
        why = "ROCm: no CUPTI (rocprofiler not wired)" if device_kind == "rocm" else ""
    label = getattr(inner, "label", HOST_BLOCK if device_kind != "cpu" else HOST_CPU)
    if device_kind != "cpu":
        inner.description = f"{label}: {inner.description} ({why})"
    elif not inner.description.startswith(label):
        inner.description = f"{label}: {inner.description}"
    return inner


guard.protect_all("xbench_py.devclock", sys.modules[__name__], ("span_ms", "busy_ms", "device_timer"))
guard.protect_all("xbench_py.devclock.SpanTimer", SpanTimer, ("time", "first", "calibrate"))
guard.protect_all("xbench_py.devclock.CuptiSource", CuptiSource, ("drain", "start", "stop", "_completed"))
