"""A complete xbench backend in one file, with no dependencies.

It speaks the JSON-lines protocol of docs/protocol.md directly, to show what
the shared Python contract (plugins/_python/xbench_contract.py) does for the
real backends. Its "model" is a toy loop, so its numbers mean nothing.
"""
import json
import platform
import sys
import time

CAPS = {"workloads": ["ttt"], "ttt_types": ["linear"], "phases": ["forward"],
        "dtypes": ["float32"], "devices": ["cpu"], "backbones": ["transformer"]}


def step(cfg):
    acc = 0.0
    for i in range(cfg["batch"] * cfg["seq_len"] * 50):
        acc += i * 1e-9
    return acc


def run(req):
    cfg = req["config"]
    t0 = time.perf_counter()
    step(cfg)  # the first call is reported apart, as compile_ms
    compile_ms = (time.perf_counter() - t0) * 1e3
    for _ in range(cfg["warmup"]):
        step(cfg)
    samples = []
    for _ in range(cfg["repeats"]):
        t0 = time.perf_counter()
        step(cfg)
        samples.append((time.perf_counter() - t0) * 1e3)
    return {"schema_version": 1, "run_id": "", "backend": "example", "status": "ok", "config": cfg,
            "device": {"kind": "cpu", "name": platform.processor() or platform.machine(), "count": 1},
            "samples_ms": samples, "compile_ms": compile_ms, "tokens_per_s": 0,
            "peak_memory_bytes": 0, "num_params": 0,
            "env": {"framework": "python", "versions": {"python": platform.python_version()},
                    "timing": "time.perf_counter around each call"}}


def main():
    for line in sys.stdin:
        req = json.loads(line)
        reply = {"id": req["id"]}
        if req["op"] == "info":
            reply["info"] = {"name": "example", "capabilities": CAPS}
        elif req["op"] == "run":
            reply["result"] = run(req["request"])
        elif req["op"] == "export":
            reply["export"] = {"status": "unsupported", "message": "the example has no real model",
                               "device": {"kind": "cpu", "name": "", "count": 1}}
        elif req["op"] == "shutdown":
            return
        else:
            reply["error"] = "unknown op %r" % req["op"]
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
