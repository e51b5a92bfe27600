"""The request side of xbench_contract: the timing loop, result records, export
and the JSON-lines serve loop. Reach it through xbench_contract (run, export,
serve); see that module's docstring.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import socket
import sys
import traceback
import uuid

import xbench_contract as xc
from xbench_stats import CV_WARN_THRESHOLD, CV_WARNING, summarize, tokens_per_s

# One per process: a CLI invocation, or a whole serve session (the harness
# overwrites it with its own anyway).
RUN_ID = uuid.uuid4().hex


def _caps_for(fw: xc.Framework, cfg: xc.Config, variant: str, device: str) -> tuple:
    """(capabilities, display name) for the request, or raise Unsupported
    naming the value that is outside them and what is allowed."""
    if device not in xc.DEVICES:
        raise xc.ConfigError(f"device {device!r} is not allowed; choose from {', '.join(xc.DEVICES)}")
    if variant:
        match = [v for v in fw.variants if v.name == variant]
        if not match:
            names = ", ".join(v.name for v in fw.variants) or "none"
            raise xc.Unsupported(f"variant {variant!r} is not a variant of {fw.name}; variants: {names}")
        caps, who = match[0].capabilities, f"{fw.name}/{variant}"
    else:
        caps, who = fw.capabilities, fw.name
    why = caps.refusal(cfg, who)
    if why:
        raise xc.Unsupported(why)
    if device != "auto" and device not in caps.devices:
        raise xc.Unsupported(f"device {device} is not supported by {who}; supported: {', '.join(caps.devices)}")
    return caps, who


def _resolve(fw: xc.Framework, caps: xc.Capabilities, who: str, device: str) -> xc.Device:
    dev = fw.resolve_device(device)
    if dev.kind not in caps.devices:
        raise xc.Unsupported(f"device {device} resolved to {dev.kind}, which {who} does not support")
    return dev


def _failure(fw: xc.Framework, exc: BaseException) -> tuple:
    # The traceback goes to stderr (the harness logs it); the record gets one line.
    traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    return ("oom" if fw.is_oom(exc) else "failed"), f"{type(exc).__name__}: {exc}"


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _measure(fw: xc.Framework, timer: xc.Timer, cfg: xc.Config, variant: str, dev: xc.Device, seed: int):
    # A function of its own so that the model and inputs die with its frame:
    # after an OOM, release() can then actually free the memory.
    prepared = fw.prepare(cfg, variant, dev, seed)
    step = prepared.step
    compile_ms = timer.time(step)  # rule 1: the first call alone
    for _ in range(cfg.warmup):  # rule 2: untimed (timed and dropped, so it is synchronised)
        timer.time(step)
    fw.reset_peak_memory(dev)
    samples = [timer.time(step) for _ in range(cfg.repeats)]  # rule 3
    peak = int(fw.peak_memory_bytes(dev))
    return samples, compile_ms, peak, prepared.num_params, list(prepared.warnings)


def run(fw: xc.Framework, cfg: xc.Config, variant: str = "", device: str = "auto", seed: int = 0) -> dict:
    """Time one configuration by the protocol's rules; always returns a
    result record (status ok, unsupported, oom or failed)."""
    dev = xc.Device(device if device in ("cpu", "cuda", "rocm") else "cpu", "", count=0)
    status, message, timing = "ok", "", "not timed"
    samples, compile_ms, peak, nparams, warnings, stats = [], 0.0, 0, 0, [], None
    try:
        caps, who = _caps_for(fw, cfg, variant, device)
        dev = _resolve(fw, caps, who, device)
        timer = fw.timer(dev)
        timing = timer.description
        got, compile_ms, peak, nparams, warnings = _measure(fw, timer, cfg, variant, dev, seed)
        stats = summarize(got)  # raises on NaN/negative samples
        samples = got
    except xc.Unsupported as e:
        status, message = "unsupported", str(e)
    except Exception as e:  # noqa: BLE001 - every failure becomes a record
        status, message = _failure(fw, e)
    finally:
        fw.release()
    if stats and stats["cv"] > CV_WARN_THRESHOLD:
        warnings.append(CV_WARNING)
    env = {
        "framework": fw.framework,
        "versions": _versions(fw),
        "host": socket.gethostname(),
        "timing": timing,
        "python": platform.python_version(),
    }
    rec = {
        "schema_version": xc.SCHEMA_VERSION,
        "run_id": RUN_ID,
        "backend": fw.name + ("/" + variant if variant else ""),
        "status": status,
        "message": message,
        "config": cfg.to_json(),
        "device": dev.to_json(),
        "samples_ms": samples,
        "compile_ms": compile_ms if status == "ok" else 0.0,
        "stats": stats,
        "tokens_per_s": tokens_per_s(cfg.batch, cfg.seq_len, stats["median_ms"]) if stats else 0.0,
        "peak_memory_bytes": peak,
        "num_params": int(nparams),
        "env": env,
        "warnings": warnings,
        "timestamp": _now(),
    }
    # omitempty fields of result.Result
    for k in ("message", "stats", "warnings"):
        if not rec[k]:
            del rec[k]
    return rec


def _versions(fw: xc.Framework) -> dict:
    try:
        return {str(k): str(v) for k, v in fw.versions().items() if v is not None}
    except Exception as e:  # noqa: BLE001 - never lose a result over a version string
        return {"error": f"{type(e).__name__}: {e}"}


def _check_tensors(cfg: xc.Config, weights: dict, inputs: dict) -> None:
    """Raise ValueError naming the first missing or misshapen tensor."""
    s = cfg.size
    if cfg.inner_only:
        specs = xc.inner_param_specs(s, cfg.ttt_type, cfg.mini_batch, 0)
        x = (cfg.batch, s.heads, cfg.seq_len, s.head_dim)
        want_in = {"xq": x, "xk": x, "xv": x, "gate": x[:3]}
    else:
        specs = xc.param_specs(s, cfg.ttt_type, cfg.mini_batch, cfg.backbone)
        want_in = {"tokens": (cfg.batch, cfg.seq_len)}
    for where, have, want in (("weights", weights, {p.name: p.shape for p in specs}), ("inputs", inputs, want_in)):
        for name, shape in want.items():
            if name not in have:
                raise ValueError(f"{where} file lacks tensor {name!r} {list(shape)}")
            if tuple(have[name].shape) != tuple(shape):
                raise ValueError(f"{where} tensor {name!r} has shape {list(have[name].shape)}, expected {list(shape)}")
    if "tokens" in want_in:
        t = inputs["tokens"]
        if t.dtype.kind not in "iu" or t.size and (t.min() < 0 or t.max() >= s.vocab):
            raise ValueError(f"inputs tensor 'tokens' must be integers in [0, {s.vocab})")


def _export_once(fw, cfg, variant, dev, weights_path, inputs_path, output_path) -> None:
    # Own frame for the same reason as _measure.
    import numpy as np

    weights = {k: v.astype(np.float32, copy=False) for k, v in xc.read_safetensors(weights_path).items()}
    inputs = xc.read_safetensors(inputs_path)
    _check_tensors(cfg, weights, inputs)
    inputs = {k: v.astype(np.int32 if k == "tokens" else np.float32, copy=False) for k, v in inputs.items()}
    out = fw.export(cfg, variant, dev, weights, inputs)
    ft = np.float64 if cfg.dtype == "float64" else np.float32
    xc.write_safetensors(output_path, {k: np.asarray(v).astype(ft, copy=False) for k, v in out.items()})


def export(fw: xc.Framework, cfg: xc.Config, variant: str, device: str,
           weights_path: str, inputs_path: str, output_path: str) -> dict:
    """One untimed pass on given tensors; returns an ExportResponse dict."""
    dev = xc.Device(device if device in ("cpu", "cuda", "rocm") else "cpu", "", count=0)
    status, message = "ok", ""
    try:
        caps, who = _caps_for(fw, cfg, variant, device)
        dev = _resolve(fw, caps, who, device)
        _export_once(fw, cfg, variant, dev, weights_path, inputs_path, output_path)
    except xc.Unsupported as e:
        status, message = "unsupported", str(e)
    except Exception as e:  # noqa: BLE001
        status, message = _failure(fw, e)
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


# ---------------------------------------------------------------- serve loop

def _handle(fw: xc.Framework, op: str, req) -> dict:
    if op == "info":
        return {"info": fw.info()}
    if op == "calibrate":
        return {"calibration": calibrate(fw, req)}
    if op not in ("run", "export"):
        raise xc.ConfigError(f"unknown op {op!r}; ops: info, run, export, calibrate, shutdown")
    if not isinstance(req, dict):
        raise xc.ConfigError(f"op {op} needs a 'request' object")
    cfg = xc.Config.from_json(req.get("config"))
    if req.get("workload", cfg.workload) != cfg.workload:
        raise xc.ConfigError(f"request workload {req['workload']!r} differs from config workload {cfg.workload!r}")
    variant, device = req.get("variant") or "", req.get("device") or "auto"
    if not isinstance(variant, str) or not isinstance(device, str):
        raise xc.ConfigError("request variant and device must be strings")
    if op == "run":
        return {"result": run(fw, cfg, variant, device)}
    paths = []
    for k in ("weights_path", "inputs_path", "output_path"):
        if not isinstance(req.get(k), str) or not req[k]:
            raise xc.ConfigError(f"export request needs {k} (a path)")
        paths.append(req[k])
    return {"export": export(fw, cfg, variant, device, *paths)}


def protocol_stdout():
    """Keep the real stdout for replies only and point fd 1 (and sys.stdout)
    at stderr, so prints from Python or native libraries (also while the
    framework is imported) cannot corrupt the protocol. Returns the reply stream."""
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return replies


def serve(fw: xc.Framework, replies=None) -> int:
    """Answer JSON-lines requests on stdin until "shutdown" or EOF."""
    if replies is None:
        replies = protocol_stdout()
    for line in sys.stdin:
        if not line.strip():
            continue
        rid = None
        try:
            msg = json.loads(line)
            if not isinstance(msg, dict):
                raise xc.ConfigError("a request must be a JSON object")
            rid = msg.get("id")
            if msg.get("op") == "shutdown":
                return 0
            reply = {"id": rid, **_handle(fw, msg.get("op"), msg.get("request"))}
        except (xc.ConfigError, json.JSONDecodeError) as e:
            reply = {"id": rid, "error": str(e)}
        except Exception as e:  # noqa: BLE001 - one bad request must not end the session
            traceback.print_exc(file=sys.stderr)
            reply = {"id": rid, "error": f"{type(e).__name__}: {e}"}
        replies.write(json.dumps(reply, allow_nan=False) + "\n")
        replies.flush()
    return 0
