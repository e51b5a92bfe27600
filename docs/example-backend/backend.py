"""A complete xbench backend in one file, with the standard library only
(NumPy for its GEMM, used when installed).

It speaks the JSON-lines protocol of docs/protocol.md (protocol 2)
directly, to show what the shared Python contract
(plugins/_python/xbench_py/ (types.py, runner.py, serve.py, cli.py)) does for the real backends. Two workloads:

  ttt   forward only; its "model" is a toy loop, so its numbers mean nothing
  gemm  C = op(A) @ op(B) with numpy.matmul (float32, cpu), timed and exported;
        declared only when numpy is importable

The harness has validated every config before it arrives (params are
canonical strings, defaults filled): a backend converts, it does not check.

Timing modes: a run request may carry "mode" (docs/protocol.md, "Timing
modes"). gemm is cold-cache by default (the harness asks for
{"cold_cache": true} unless --cold-cache=false), so a backend must either
flush the cache before every sample and echo the mode in its result, or
answer unsupported: an ok result whose mode differs is refused as failed.
This one flushes on the CPU (flush() below) and refuses CUDA graphs.
"""
import ctypes
import importlib.util
import json
import platform
import struct
import sys
import time
import traceback

HAVE_NUMPY = importlib.util.find_spec("numpy") is not None

CAPS = {"workloads": [
    {"workload": "ttt", "phases": ["forward"], "devices": ["cpu"],
     "values": {"dtype": ["float32"], "ttt_type": ["linear"], "backbone": ["transformer"]}},
] + ([
    {"workload": "gemm", "phases": ["forward"], "devices": ["cpu"],
     "values": {"dtype": ["float32"], "layout": ["nn", "nt", "tn", "tt"]}},
] if HAVE_NUMPY else [])}

CPU = {"kind": "cpu", "name": platform.processor() or platform.machine(), "count": 1}

# --cold-cache on a CPU: write over a buffer larger than the last-level cache
# (protocol: twice the LLC, at least 64 MiB) before each timed call, outside
# the sample. Allocated on first use, once per process.
FLUSH_BYTES = 64 << 20
_flush_buf = None


def flush():
    global _flush_buf
    if _flush_buf is None:
        _flush_buf = bytearray(FLUSH_BYTES)
    view = (ctypes.c_char * FLUSH_BYTES).from_buffer(_flush_buf)
    ctypes.memset(view, (_flush_buf[0] + 1) % 256, FLUSH_BYTES)  # every line written: old data leaves the caches


# ------------------------------------------------------------------ the models

def ttt_step(params):
    n = int(params["batch"]) * int(params["seq_len"]) * 50

    def step():
        acc = 0.0
        for i in range(n):
            acc += i * 1e-9
        return acc
    return step


def gemm_operands(params, rng=None):
    import numpy as np

    m, n, k, batch = (int(params[x]) for x in ("m", "n", "k", "batch"))
    layout = params["layout"]
    a_shape = (batch, m, k) if layout[0] == "n" else (batch, k, m)
    b_shape = (batch, k, n) if layout[1] == "n" else (batch, n, k)
    if rng is None:
        return a_shape, b_shape
    return rng.standard_normal(a_shape, dtype=np.float32), rng.standard_normal(b_shape, dtype=np.float32)


def gemm_product(params, a, b):
    import numpy as np

    opa = a if params["layout"][0] == "n" else np.swapaxes(a, 1, 2)  # views: 't' operands stay as stored
    opb = b if params["layout"][1] == "n" else np.swapaxes(b, 1, 2)
    return np.matmul(opa, opb)


def gemm_step(params):
    import numpy as np

    a, b = gemm_operands(params, np.random.default_rng(0))
    return lambda: gemm_product(params, a, b)


# ------------------------------------------------------------------ the protocol

def unsupported(cfg, device):
    """Why the request is outside CAPS (the same rules as the harness's), or ""."""
    w = next((w for w in CAPS["workloads"] if w["workload"] == cfg["workload"]), None)
    if w is None:
        return "workload %s is not supported (supported: %s)" % (
            cfg["workload"], ", ".join(x["workload"] for x in CAPS["workloads"]))
    if cfg["phase"] not in w["phases"]:
        return "phase %s is not supported (supported: %s)" % (cfg["phase"], ", ".join(w["phases"]))
    if device not in ("auto", "") and device not in w["devices"]:
        return "device %s is not supported (supported: %s)" % (device, ", ".join(w["devices"]))
    for k, allowed in sorted(w.get("values", {}).items()):
        if k in cfg["params"] and cfg["params"][k] not in allowed:
            return "%s %s is not supported (supported: %s)" % (k, cfg["params"][k], ", ".join(allowed))
    return ""


def run(req):
    cfg = req["config"]
    res = {"schema_version": 2, "run_id": "", "backend": "example", "status": "ok", "config": cfg,
           "device": CPU, "samples_ms": [], "compile_ms": 0.0, "throughput": 0,
           "peak_memory_bytes": 0, "num_params": 0,
           "env": {"framework": "python" if cfg["workload"] == "ttt" else "numpy",
                   "versions": {"python": platform.python_version()},
                   "timing": "time.perf_counter around each call"}}
    mode = {k: True for k, on in (req.get("mode") or {}).items() if on}  # only the fields that are on
    why = unsupported(cfg, req.get("device", "auto"))
    if not why and mode.get("cuda_graph"):
        why = "cuda_graph is not supported: this backend runs on the cpu only"
    if why:
        res.update(status="unsupported", message=why)
        return res
    cold = mode.get("cold_cache", False)
    if mode:
        res["mode"] = mode  # echo the mode timed in; omitted when warm
    try:
        step = (ttt_step if cfg["workload"] == "ttt" else gemm_step)(cfg["params"])
        t0 = time.perf_counter()
        step()  # the first call is reported apart, as compile_ms
        res["compile_ms"] = (time.perf_counter() - t0) * 1e3
        for _ in range(cfg["warmup"]):
            step()
        for _ in range(cfg["repeats"]):
            if cold:
                flush()  # before the clock starts: never in the sample
            t0 = time.perf_counter()
            step()
            res["samples_ms"].append((time.perf_counter() - t0) * 1e3)
    except Exception as e:  # the traceback to stderr, the exception line to the result
        traceback.print_exc(file=sys.stderr)
        res.update(status="failed", message="%s: %s" % (type(e).__name__, e), samples_ms=[], compile_ms=0.0)
    return res


def read_safetensors(path):
    import numpy as np

    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header, data = json.loads(f.read(n)), f.read()
    out = {}
    for name, t in header.items():
        if name != "__metadata__":
            lo, hi = t["data_offsets"]
            out[name] = np.frombuffer(data[lo:hi], {"F32": "<f4", "F64": "<f8", "I32": "<i4"}[t["dtype"]]).reshape(t["shape"])
    return out


def write_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name, t in tensors.items():
        raw = t.astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def export(req):
    cfg = req["config"]
    rep = {"status": "ok", "device": CPU}
    why = unsupported(cfg, req.get("device", "auto"))
    if why or cfg["workload"] != "gemm":
        rep.update(status="unsupported", message=why or "the example's ttt is a toy loop, with nothing to export")
        return rep
    try:
        x = read_safetensors(req["inputs_path"])  # gemm has no weights: weights_path is ""
        a_shape, b_shape = gemm_operands(cfg["params"])
        if x["a"].shape != a_shape or x["b"].shape != b_shape:
            raise ValueError("a %s / b %s are not the stored shapes %s / %s" % (x["a"].shape, x["b"].shape, a_shape, b_shape))
        write_safetensors(req["output_path"], {"c": gemm_product(cfg["params"], x["a"], x["b"])})
    except Exception as e:
        traceback.print_exc(file=sys.stderr)
        rep.update(status="failed", message="%s: %s" % (type(e).__name__, e))
    return rep


def main():
    replies = sys.stdout
    sys.stdout = sys.stderr  # a stray print must not reach the reply stream
    for line in sys.stdin:
        req = json.loads(line)
        reply = {"id": req.get("id")}
        op = req.get("op")
        if op == "info":
            # "protocol": the version this backend speaks (docs/protocol.md#changes)
            reply["protocol"] = 2
            reply["info"] = {"name": "example", "capabilities": CAPS}
        elif op == "run":
            reply["result"] = run(req["request"])
        elif op == "run_batch":
            reply["results"] = [run(r) for r in req["requests"]]
        elif op == "export":
            reply["export"] = export(req["request"])
        elif op == "shutdown":
            return
        else:
            reply["error"] = "unknown op %r" % op
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


if __name__ == "__main__":
    main()
