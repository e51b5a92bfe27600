"""jax.profiler glue for `xbench profile` (the contract's op is in
plugins/_python/xbench_py/profile.py).

jax.profiler.trace writes an XSpace and, with create_perfetto_trace, a
gzipped Chrome/Perfetto trace-event JSON; the per-op times are read from
that JSON, since jax has no summary API:

- on a GPU, the kernels on the device's stream lanes ("/device:GPU:0",
  threads "Stream #..."), as device time;
- on the CPU, the XLA ops the CPU runtime executes (events that carry an
  "hlo_op"), as host time, self time taken within each thread so a while
  loop does not count the ops inside it again.

The trace is copied, uncompressed, to the requested path.
"""

from __future__ import annotations

import glob
import gzip
import json
import os
import shutil
import tempfile

import jax

from xbench_py import profile as xprofile


def _names(events: list) -> tuple:
    """{pid: process name}, {(pid, tid): thread name} from the metadata events."""
    procs, threads = {}, {}
    for e in events:
        if e.get("ph") != "M":
            continue
        name = (e.get("args") or {}).get("name", "")
        if e.get("name") == "process_name":
            procs[e.get("pid")] = name
        elif e.get("name") == "thread_name":
            threads[(e.get("pid"), e.get("tid"))] = name
    return procs, threads


def kernels(events: list) -> tuple:
    """(time_kind, [{name, self_ms, count}]) from a jax trace's events."""
    procs, threads = _names(events)
    device = {p for p, n in procs.items() if n.startswith("/device:") and "CPU" not in n}
    spans = [e for e in events if e.get("ph") == "X" and "ts" in e]
    if device:
        kind = "device"
        lane = lambda e: threads.get((e.get("pid"), e.get("tid")), "")  # noqa: E731
        on_device = [e for e in spans if e.get("pid") in device]
        keep = [e for e in on_device if lane(e).startswith("Stream")]
        if not keep:
            # No per-stream kernel lanes: the XLA Ops lane (kernels grouped by
            # the HLO op that launched them) still holds device time, once.
            keep = [e for e in on_device if lane(e) == "XLA Ops"]
        if not keep:
            seen = sorted({lane(e) for e in on_device})
            raise RuntimeError(f"jax trace has device events but no 'Stream' or 'XLA Ops' lane (lanes: {seen})")
    else:
        kind = "host"
        keep = [e for e in spans if "hlo_op" in (e.get("args") or {})]
    times = xprofile.self_times(keep)
    return kind, [{"name": n, "self_ms": ms, "count": c} for n, (ms, c) in times.items()]


def profile(device_kind: str, body, trace_path: str) -> dict:
    tmp = tempfile.mkdtemp(prefix="xbench-jax-profile-")
    try:
        with jax.profiler.trace(tmp, create_perfetto_trace=True):
            body()
        found = glob.glob(os.path.join(tmp, "**", "perfetto_trace.json.gz"), recursive=True)
        if not found:
            raise RuntimeError(f"jax.profiler.trace wrote no perfetto_trace.json.gz under {tmp}")
        with gzip.open(found[0], "rb") as f:
            raw = f.read()
        trace = json.loads(raw)
        events = trace["traceEvents"] if isinstance(trace, dict) else trace
        with open(trace_path, "wb") as f:
            f.write(raw if isinstance(trace, dict) else json.dumps({"traceEvents": events}).encode())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    kind, rows = kernels(events)
    if device_kind != "cpu" and kind != "device":
        raise RuntimeError(f"jax.profiler found no device stream events on {device_kind} (is the GPU tracer, CUPTI, available?)")
    return {"profiler": f"jax.profiler, jax {jax.__version__}", "time_kind": kind, "kernels": rows}
