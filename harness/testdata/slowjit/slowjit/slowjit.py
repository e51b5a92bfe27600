#!/usr/bin/env python3
"""A backend whose configurations take a slow compile, kept in a persistent
cache, for the harness's compile-ahead tests (sweep --compile-ahead).

A configuration's "compile" sleeps 0.3 s and leaves a file in
$XBENCH_COMPILE_CACHE/slowjit; whoever finds the file (the timing process
after a helper compiled) pays 1 ms instead. Both ops "compile" and "run"
compile first, as a JIT does. Faults, by the config's seq_len (float32):
  32   the process dies while compiling (exit 3)
  80   compiling runs out of memory (status failed, a CUDA OOM message)
Every compile and run appends "op key pid start end" to $XBENCH_SLOWJIT_LOG,
so a test can check that nothing was timed while a compile ran. Standard
library only, JSON-lines protocol of docs/protocol.md.
"""

import json
import os
import sys
import time

INFO = {
    "name": "slowjit",
    "description": "slow JIT, persistent cache",
    "capabilities": {"workloads": [{
        "workload": "ttt", "phases": ["forward"], "devices": ["cpu"],
        "values": {"ttt_type": ["linear", "mlp"], "dtype": ["float32"], "backbone": ["transformer"]},
    }]},
}


def log(op, key, t0, t1):
    path = os.environ.get("XBENCH_SLOWJIT_LOG")
    if path:
        with open(path, "a") as f:
            f.write(f"{op} {key} {os.getpid()} {t0:.6f} {t1:.6f}\n")


def compile_(cfg):
    """Compile cfg (or find it in the cache): (status, message, compile_ms)."""
    params = cfg.get("params", {})
    key = f"{params.get('model_size')}-{params.get('seq_len')}-{params.get('dtype')}"
    seq = int(params.get("seq_len", "0"))
    t0 = time.time()
    if seq == 32:
        print("slowjit: the compiler crashed", file=sys.stderr, flush=True)
        os._exit(3)
    if seq == 80:
        return key, "failed", "RuntimeError: CUDA out of memory. Tried to allocate 9.00 GiB", 0.0, t0
    cache = os.path.join(os.environ.get("XBENCH_COMPILE_CACHE", "/nonexistent"), "slowjit")
    hit = os.path.join(cache, key)
    if os.path.exists(hit):
        time.sleep(0.001)
    else:
        time.sleep(0.3)
        os.makedirs(cache, exist_ok=True)
        with open(hit, "w") as f:
            f.write("compiled\n")
    return key, "ok", "", (time.time() - t0) * 1e3, t0


def run(cfg):
    key, status, message, compile_ms, t0 = compile_(cfg)
    if status != "ok":
        return {"error": message}
    time.sleep(0.02)  # the timed calls
    log("run", key, t0, time.time())
    repeats = cfg.get("repeats", 3)
    return {"result": {
        "samples_ms": [1.0 + 0.01 * i for i in range(repeats)], "backend": "slowjit", "status": "ok",
        "config": cfg, "device": {"kind": "cpu", "name": "slow jit", "count": 1}, "compile_ms": compile_ms,
        "peak_memory_bytes": 0, "num_params": 0, "throughput": 0,
        "env": {"framework": "none", "timing": "host-clock"}, "run_id": "", "schema_version": 2}}


def compile_op(cfg):
    key, status, message, compile_ms, t0 = compile_(cfg)
    log("compile", key, t0, time.time())
    return {"compiled": {"status": status, "message": message, "compile_ms": compile_ms}}


def main():
    if "--serve" not in sys.argv:
        sys.exit("slowjit.py only serves the harness: run it with --serve")
    for line in sys.stdin:
        req = json.loads(line)
        op = req.get("op")
        if op == "shutdown":
            return
        if op == "info":
            out = {"protocol": 2, "info": INFO}
        elif op == "run":
            out = run(req["request"]["config"])
        elif op == "compile":
            out = compile_op(req["request"]["config"])
        else:
            out = {"error": f"slowjit: unknown op {op!r}"}
        sys.stdout.write(json.dumps({"id": req.get("id"), **out}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
