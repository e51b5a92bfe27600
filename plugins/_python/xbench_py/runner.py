"""xbench_py.runner: one request of the protocol, done by the rules: the
capability checks, the timing loop, the result record, export and calibrate
(run, run_batch, export, calibrate), and the parsing of a request's JSON.
It builds on xbench_py.types, workloads, devclock and tensors; the serve loop
(xbench_py.serve) and the CLI (xbench_py.cli) build on it.
"""

from __future__ import annotations

import datetime
import math
import os
import platform
import socket
import sys
import traceback
import uuid

from xbench_py import devclock
from xbench_py import guard
from xbench_py import types as xc
from xbench_py.types import Mode
from xbench_py.workloads import VIEWS

# One per process: a CLI invocation, or a whole serve session (the harness
# overwrites it with its own anyway).
RUN_ID = uuid.uuid4().hex


def _config(cfg) -> xc.Config:
    """A Config from a Config or a typed view (TTT, Gemm)."""
    return cfg if isinstance(cfg, xc.Config) else cfg.config()


def view(cfg: xc.Config):
    """The typed view prepare/export get: TTT, Gemm, or the Config itself for
    a workload the contract has no view of. ConfigError if a param does not
    convert (a broken request, not an unsupported one)."""
    v = VIEWS.get(cfg.workload)
    return v.from_config(cfg) if v else cfg


def _check_device(device: str) -> None:
    if device not in xc.DEVICES:
        raise xc.ConfigError(f"device {device!r} is not allowed; choose from {', '.join(xc.DEVICES)}")


def _caps_for(fw: xc.Framework, cfg: xc.Config, variant: str, device: str) -> tuple:
    """(workload capabilities, display name) for the request, or raise
    Unsupported naming what is outside them and what is supported."""
    if variant:
        match = [v for v in fw.variants if v.name == variant]
        if not match:
            names = ", ".join(v.name for v in fw.variants) or "none"
            raise xc.Unsupported(f"variant {variant!r} is not a variant of {fw.name}; variants: {names}")
        caps, who = match[0].capabilities, f"{fw.name}/{variant}"
    else:
        caps, who = fw.capabilities, fw.name
    why = caps.refusal(cfg, device, who)
    if why:
        raise xc.Unsupported(why)
    return caps.of(cfg.workload), who


def _resolve(fw: xc.Framework, caps: xc.WorkloadCaps, who: str, device: str) -> xc.Device:
    dev = fw.resolve_device(device)
    if dev.kind not in caps.devices:
        raise xc.Unsupported(f"device {device} resolved to {dev.kind}, which {who} does not support for workload "
                             f"{caps.workload} (supported: {', '.join(caps.devices)})")
    return dev


def _method(fw: xc.Framework, what: str, workload: str):
    fn = getattr(fw, f"{what}_{workload}", None)
    if fn is None:
        raise xc.Unsupported(f"workload {workload} is declared by {fw.name} but it has no {what}_{workload}")
    return fn


def _failure(exc: BaseException) -> tuple:
    # The traceback goes to stderr (the harness logs it); the record gets the
    # exception line (xc.failure_message).
    traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    # The traceback's frames hold the failed call's locals (a model, inputs
    # of gigabytes): clear them, so release() can free that memory before the
    # next request even if something still refers to the exception.
    traceback.clear_frames(exc.__traceback__)
    if isinstance(exc, (xc.Failed, guard.Tampered)):
        return "failed", " ".join(str(exc).split())
    return ("oom" if xc.is_oom(exc) else "failed"), xc.failure_message(exc)


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _check_mode(timer: xc.Timer, dev: xc.Device, mode: Mode) -> None:
    """Unsupported when the timer cannot honour the mode on this device."""
    if mode.cold_cache and dev.kind != "cpu" and not xc.has_device_flush(timer):
        raise xc.Unsupported(f"--cold-cache on {dev.kind}: the timer ({timer.description}) has no device cache flush")


def _measure(fw: xc.Framework, timer: xc.Timer, cfg: xc.Config, v, variant: str, dev: xc.Device, seed: int,
             mode: Mode = Mode()):
    # A function of its own so that the model and inputs die with its frame:
    # after an OOM, release() can then actually free the memory.
    prepared, compile_ms = _prepare_first(fw, timer, v, variant, dev, seed, cfg.workload)
    _after(prepared, "during the first call")
    step = prepared.step
    if mode.cuda_graph:
        step = timer.graph(step)  # captured once; warmup and samples replay it
    for _ in range(cfg.warmup):  # rule 2: untimed (timed and dropped, so it is synchronised)
        timer.time(step)
        _after(prepared, "during a warmup call")
    # Untimed calls the clock needs (xbench_py.devclock), after the warmup: a
    # GEMM calibrated before it paid CUPTI's own start and was taken for
    # launch-bound (docs/protocol.md, "what one sample is").
    timer.calibrate(step)
    _after(prepared, "during the clock's calibration calls")
    if mode.cold_cache:
        timer.flush()  # allocates the flush buffer once, before the peak counter restarts
    fw.reset_peak_memory(dev)
    samples = []
    for _ in range(cfg.repeats):  # rule 3
        if mode.cold_cache:
            timer.flush()  # outside the sample: the timer starts after the write is done
        samples.append(timer.time(step))
        _after(prepared, "during a timed call")
    if prepared.after_samples:
        prepared.after_samples()
    guard.check("after the timed calls")
    peak = int(fw.peak_memory_bytes(dev))
    bad = [s for s in samples if not math.isfinite(s) or s < 0]
    if bad or not samples:
        raise ValueError(f"the timer returned {bad or 'no samples'}; samples must be finite and non-negative")
    memory = {str(k): int(n) for k, n in prepared.memory.items()}
    settings = {str(k): str(v) for k, v in prepared.settings.items()}
    return samples, compile_ms, peak, prepared.num_params, list(prepared.warnings), memory, settings


def _after(prepared: xc.Prepared, what: str) -> None:
    """After a call of the code under test, outside its sample: the
    backend's own checks (first: its refusal may say more, as the
    candidates' static review), then the clock and what the runner times
    with are the harness's (xbench_py.guard: anything replaced refuses the
    cell, and is restored). what says which call, for the message."""
    if prepared.after_call:
        prepared.after_call(what)
    guard.check(what)


def run(fw: xc.Framework, cfg, variant: str = "", device: str = "auto", seed: int = 0, mode: Mode = Mode()) -> dict:
    """Time one configuration by the protocol's rules in the given timing
    mode; returns a result record (status ok, unsupported, oom or failed)
    that records the mode. ConfigError (raised, not recorded) for a device
    outside auto/cpu/cuda/rocm or a param that does not convert to its type."""
    cfg = _config(cfg)
    _check_device(device)
    v = view(cfg)
    dev = xc.Device(device if device in ("cpu", "cuda", "rocm") else "cpu", "", count=0)
    status, message, timing = "ok", "", "not timed"
    samples, compile_ms, peak, nparams, warnings, memory, settings = [], 0.0, 0, 0, [], {}, {}
    try:
        # What an earlier request's code replaced and nothing refused (an
        # export or compile op runs code unchecked) is put back first, so
        # one request's tampering never reaches another's samples.
        guard.restore()
        guard.check("by an earlier request, and could not be restored")
        caps, who = _caps_for(fw, cfg, variant, device)
        dev = _resolve(fw, caps, who, device)
        # Every backend's clock on a GPU is the device span (xbench_py.devclock);
        # the framework's own timer makes and waits for the call.
        timer = devclock.device_timer(fw.timer(dev), dev.kind)
        timing = timer.description
        _check_mode(timer, dev, mode)
        try:
            samples, compile_ms, peak, nparams, warnings, memory, settings = _measure(fw, timer, cfg, v, variant, dev,
                                                                                      seed, mode)
        finally:
            timer.close()
            timing = timer.description  # calibrate() may have changed the clock for this call
    except xc.Unsupported as e:
        status, message = "unsupported", str(e)
    except Exception as e:  # noqa: BLE001 - every failure becomes a record
        status, message = _failure(e)
        samples, compile_ms = [], 0.0
    finally:
        fw.release()
    return _record(fw, cfg, variant, dev, mode, status, message, timing, samples, compile_ms, peak, nparams, warnings,
                   memory, settings)


def _record(fw: xc.Framework, cfg: xc.Config, variant: str, dev: xc.Device, mode: Mode, status: str, message: str,
            timing: str, samples=(), compile_ms: float = 0.0, peak: int = 0, nparams: int = 0, warnings=(),
            memory=None, settings=None) -> dict:
    """The result record of one request (run's, or a failed one of run_batch)."""
    env = {
        "framework": fw.framework,
        "versions": _versions(fw),
        "host": socket.gethostname(),
        "timing": timing,
        "python": platform.python_version(),
    }
    if settings:
        env["settings"] = settings
    rec = {
        "schema_version": xc.SCHEMA_VERSION,
        "run_id": RUN_ID,  # placeholder: the harness sets its own
        "backend": fw.name + ("/" + variant if variant else ""),
        "status": status,
        "message": message,
        "config": cfg.to_json(),
        "device": dev.to_json(),
        "samples_ms": list(samples),
        "compile_ms": compile_ms if status == "ok" else 0.0,
        "throughput": 0,  # placeholder: the harness computes throughput (and stats) from samples_ms
        "peak_memory_bytes": peak,
        "num_params": int(nparams),
        "memory_bytes": memory or {},
        "env": env,
        "mode": mode.to_json(),
        "warnings": list(warnings),
        "timestamp": _now(),
    }
    for k in ("message", "warnings", "mode", "memory_bytes"):  # omitempty fields of result.Result
        if not rec[k]:
            del rec[k]
    return rec


def compile_ahead(fw: xc.Framework, cfg, variant: str = "", device: str = "auto", seed: int = 0,
                  mode: Mode = Mode()) -> dict:
    """op compile: prepare the configuration and make its first call,
    untimed, so that what a JIT compiles (into the persistent compile cache
    the harness points it at) is there when the cell is timed, possibly by
    another process (sweep --compile-ahead). No sample is taken and no
    device clock is started. Returns {status, message, compile_ms, settings};
    compile_ms is what run() would have recorded as this cell's compile_ms."""
    cfg = _config(cfg)
    _check_device(device)
    v = view(cfg)
    status, message, compile_ms, settings = "ok", "", 0.0, {}
    try:
        caps, who = _caps_for(fw, cfg, variant, device)
        dev = _resolve(fw, caps, who, device)
        compile_ms, settings = _compile_once(fw, fw.timer(dev), v, variant, dev, seed, cfg.workload)
    except xc.Unsupported as e:
        status, message = "unsupported", str(e)
    except Exception as e:  # noqa: BLE001 - every failure becomes a record
        status, message = _failure(e)
        compile_ms = 0.0
    finally:
        fw.release()
    rec = {"status": status, "message": message, "compile_ms": compile_ms, "settings": settings}
    return {k: val for k, val in rec.items() if val or k in ("status", "compile_ms")}


def _compile_once(fw: xc.Framework, timer: xc.Timer, v, variant: str, dev: xc.Device, seed: int, workload: str):
    # Its own frame, as _measure's: the model and inputs die on return, so
    # release() frees them before the next configuration compiles.
    try:
        prepared, compile_ms = _prepare_first(fw, timer, v, variant, dev, seed, workload)
    finally:
        timer.close()
    return compile_ms, {str(k): str(val) for k, val in prepared.settings.items()}


def _prepare_first(fw: xc.Framework, timer: xc.Timer, v, variant: str, dev: xc.Device, seed: int, workload: str):
    """prepare and the first call: the prepared configuration and its
    compile_ms (rule 1: the first call alone, plus prepare's own compile),
    for a run and for an ahead-of-time compile alike."""
    prepared = _method(fw, "prepare", workload)(v, variant, dev, seed)
    return prepared, prepared.compile_ms + timer.first(prepared.step)


def run_batch(fw: xc.Framework, requests: list) -> list:
    """op run_batch: one result per (config, variant, device, seed[, mode])
    tuple, in order, each exactly as run() makes it (the same checks,
    warmup, repeats, timer and release()). A request whose run() raises
    instead of returning a record (release() failing after it, say) gets a
    failed record in its slot, and the requests after it still run: one
    request's failure is never the batch's."""
    out = []
    for req in requests:
        try:
            out.append(run(fw, *req))
        except Exception as e:  # noqa: BLE001 - every failure becomes that request's record
            out.append(_failed_request(fw, *req, exc=e))
    return out


def _failed_request(fw: xc.Framework, cfg, variant: str = "", device: str = "auto", seed: int = 0,
                    mode: Mode = Mode(), *, exc: Exception) -> dict:
    status, message = _failure(exc)
    kind = device if device in ("cpu", "cuda", "rocm") else "cpu"
    return _record(fw, _config(cfg), variant, xc.Device(kind, "", count=0), mode, status, message, "not timed")


def _versions(fw: xc.Framework) -> dict:
    try:
        return {str(k): str(v) for k, v in fw.versions().items() if v is not None}
    except Exception as e:  # noqa: BLE001 - never lose a result over a version string
        return {"error": f"{type(e).__name__}: {e}"}


def _export_once(fw, cfg: xc.Config, v, variant, dev, weights_path, inputs_path, output_path) -> None:
    # Own frame for the same reason as _measure. numpy (and tensors, which
    # needs it) only here: the CLI checks a backend's requirements first.
    import numpy as np

    from xbench_py.tensors import read_safetensors, write_safetensors

    weights = {}
    if weights_path and os.path.getsize(weights_path) > 0:  # gemm: "" or an empty file
        weights = {k: t.astype(np.float32, copy=False) for k, t in read_safetensors(weights_path).items()}
    inputs = read_safetensors(inputs_path)
    check = getattr(v, "check_tensors", None)
    if check:
        check(weights, inputs)
    cast = getattr(v, "cast_inputs", None)
    if cast:
        inputs = cast(inputs)
    else:
        inputs = {k: t.astype(np.int32 if k == "tokens" else np.float32, copy=False) for k, t in inputs.items()}
    out = _method(fw, "export", cfg.workload)(v, variant, dev, weights, inputs)
    ft = np.float64 if getattr(v, "output_float64", lambda: False)() else np.float32
    write_safetensors(output_path, {k: np.asarray(t).astype(ft, copy=False) for k, t in out.items()})


def export(fw: xc.Framework, cfg, variant: str, device: str,
           weights_path: str, inputs_path: str, output_path: str) -> dict:
    """One untimed pass on given tensors; returns an ExportResponse dict.
    weights_path may be "" (gemm has no weights)."""
    cfg = _config(cfg)
    _check_device(device)
    v = view(cfg)
    dev = xc.Device(device if device in ("cpu", "cuda", "rocm") else "cpu", "", count=0)
    status, message = "ok", ""
    try:
        caps, who = _caps_for(fw, cfg, variant, device)
        dev = _resolve(fw, caps, who, device)
        _export_once(fw, cfg, v, variant, dev, weights_path, inputs_path, output_path)
    except xc.Unsupported as e:
        status, message = "unsupported", str(e)
    except Exception as e:  # noqa: BLE001
        status, message = _failure(e)
    finally:
        fw.release()
    rep = {"status": status, "message": message, "device": dev.to_json()}
    if not message:
        del rep["message"]
    return rep


def calibrate(fw: xc.Framework, req) -> dict:
    """The "calibrate" op: the framework's calibrate() on the resolved device.
    A framework without it, or a device it lacks, is an error reply (the
    harness turns "cannot calibrate" into one clear message)."""
    if not isinstance(req, dict):
        raise xc.ConfigError("op calibrate needs a 'request' object")
    device, dtypes = req.get("device") or "auto", req.get("dtypes") or ["float32"]
    bad = [d for d in dtypes if d not in xc.DTYPES]
    if not isinstance(device, str) or bad:
        raise xc.ConfigError(f"calibrate: bad device {device!r} or dtypes {bad}; dtypes: {', '.join(xc.DTYPES)}")
    try:
        dev = fw.resolve_device(device)
        out = fw.calibrate(dev, list(dtypes))
    except xc.Unsupported as e:
        raise xc.ConfigError(str(e)) from e
    finally:
        fw.release()
    return {"device": dev.to_json(), "matmul_tflops": {k: float(v) for k, v in out.get("matmul_tflops", {}).items()},
            "copy_gbps": float(out.get("copy_gbps", 0.0)), "method": str(out.get("method", ""))}


# ---------------------------------------------------------------- requests

def _parse_request(req, op: str) -> tuple:
    """(config, variant, device) of a run/export request; ConfigError if malformed."""
    if not isinstance(req, dict):
        raise xc.ConfigError(f"op {op} needs a 'request' object")
    cfg = xc.Config.from_json(req.get("config"))
    if "workload" in req and req["workload"] != cfg.workload:
        raise xc.ConfigError(f"request workload {req['workload']!r} differs from config workload {cfg.workload!r}")
    variant, device = req.get("variant") or "", req.get("device") or "auto"
    if not isinstance(variant, str) or not isinstance(device, str):
        raise xc.ConfigError("request variant and device must be strings")
    _check_device(device)
    view(cfg)  # a param that does not convert is a broken request
    return cfg, variant, device


def _parse_mode(req: dict) -> Mode:
    """The run request's timing mode; ConfigError if malformed."""
    return Mode.from_json(req.get("mode"))
