"""The "profile" op of the protocol (docs/protocol.md): one configuration
under the framework's own profiler. Reach it through the serve loop; the
Framework supplies only the glue (Framework.profile), this module the rest,
once for every Python backend:

  1. the same capability and device checks as run (status unsupported),
  2. prepare, then the first (compiling) call and `warmup` calls outside the
     profiler, each waited for by the framework's timer,
  3. `calls` calls inside the profiler, each waited for, with a host wall
     clock around them (inside, so profiler start-up and trace writing are
     not in it),
  4. the report: kernels [{name, self_ms, count}] summed over the calls.

The figures are profiled, never timings: the harness labels them so.
"""

from __future__ import annotations

import math
import os
import time

from xbench_py import runner as xr
from xbench_py import types as xc


def supported(fw: xc.Framework) -> bool:
    """Whether the framework has profiler glue at all; without it the op is
    an error reply ("cannot profile"), as calibrate's is."""
    return type(fw).profile is not xc.Framework.profile


def parse(req) -> tuple:
    """(config, variant, device, calls, trace_path) of a profile request;
    ConfigError if malformed."""
    cfg, variant, device = xr._parse_request(req, "profile")
    calls, path = req.get("calls", 3), req.get("trace_path")
    if not isinstance(calls, int) or isinstance(calls, bool) or calls < 1:
        raise xc.ConfigError(f"profile request calls {calls!r} is not allowed; it must be an integer >= 1")
    if not isinstance(path, str) or not os.path.isabs(path):
        raise xc.ConfigError(f"profile request trace_path {path!r} is not allowed; it must be an absolute path")
    return cfg, variant, device, calls, path


def _profiled(fw, timer, cfg, v, variant, dev, calls: int, path: str) -> tuple:
    # Own frame, like the runner's _measure: the model dies with it, so
    # release() can free its memory after an OOM.
    step = xr._method(fw, "prepare", cfg.workload)(v, variant, dev, 0).step
    timer.time(step)  # the first call: compilation, autotuning, lazy init
    for _ in range(cfg.warmup):
        timer.time(step)
    wall = []

    def body():
        t0 = time.perf_counter()
        for _ in range(calls):
            timer.time(step)  # waits for the device, so every kernel lands inside
        wall.append((time.perf_counter() - t0) * 1000.0)

    out = fw.profile(dev, body, path)
    if not wall:
        raise RuntimeError(f"{fw.name}'s profile() did not run the calls it was given")
    return out, wall[0]


def profile(fw: xc.Framework, cfg, variant: str, device: str, calls: int, trace_path: str) -> dict:
    """A ProfileReport dict: status ok with the kernels, or unsupported,
    oom or failed with a message, as run() would record it."""
    if not supported(fw):
        raise xc.ConfigError(f"backend {fw.name} cannot profile: its framework file has no profiler glue")
    v = xr.view(cfg)
    dev = xc.Device(device if device in ("cpu", "cuda", "rocm") else "cpu", "", count=0)
    rep = {"status": "ok", "device": dev.to_json(), "profiler": "", "time_kind": "host", "kernels": [],
           "wall_ms": 0.0, "calls": calls}
    try:
        caps, who = xr._caps_for(fw, cfg, variant, device)
        dev = xr._resolve(fw, caps, who, device)
        rep["device"] = dev.to_json()
        out, rep["wall_ms"] = _profiled(fw, fw.timer(dev), cfg, v, variant, dev, calls, trace_path)
        rep["profiler"], rep["time_kind"] = str(out["profiler"]), str(out["time_kind"])
        rep["kernels"] = [{"name": str(k["name"]), "self_ms": float(k["self_ms"]), "count": int(k["count"])}
                          for k in out["kernels"] if math.isfinite(float(k["self_ms"]))]
        rep["trace_path"] = trace_path
    except xc.Unsupported as e:
        rep["status"], rep["message"] = "unsupported", str(e)
    except Exception as e:  # noqa: BLE001 - a failure is the report's status, like a run's
        rep["status"], rep["message"] = xr._failure(e)
    finally:
        fw.release()
    return rep


def self_times(events: list) -> dict:
    """{name: [self_ms, count]} of trace-event "X" events (times in µs):
    an event's self time is its duration less that of the events nested
    directly inside it on the same (pid, tid) lane, so a loop and the ops
    it runs are not counted twice. For profilers that give only a trace."""
    lanes = {}
    for e in events:
        lanes.setdefault((e.get("pid"), e.get("tid")), []).append(e)
    out = {}
    for lane in lanes.values():
        lane.sort(key=lambda e: (float(e["ts"]), -float(e.get("dur", 0))))
        stack = []  # [end, name, self]

        def close(item):
            s = out.setdefault(item[1], [0.0, 0])
            s[0] += max(item[2], 0.0) / 1000.0
            s[1] += 1

        for e in lane:
            ts, dur = float(e["ts"]), float(e.get("dur", 0))
            while stack and stack[-1][0] <= ts:
                close(stack.pop())
            if stack:
                stack[-1][2] -= dur
            stack.append([ts + dur, e["name"], dur])
        while stack:
            close(stack.pop())
    return out
