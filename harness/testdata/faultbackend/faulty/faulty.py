#!/usr/bin/env python3
"""A backend that fails on purpose, for the harness's fault tests.

Which fault a run request gets depends on its config's params (strings, as
the protocol sends them; schema version 2):

  dtype bfloat16          hang: spawn a sleeping child, then never answer
  dtype float16           raise an error reply saying "CUDA out of memory"
  dtype float32, seq_len  16 ok      32 crash (exit 3)    48 garbage line
                          64 result that breaks the schema
                          80 NaN samples   96 negative samples   112 no samples
                          128 status oom from the framework side
                          4016 ok, after replacing the folder named by
                              XBENCH_FAULT_BREAK with a file, so the harness
                              cannot store the result (a full disk, say)
                          4000 ok, after starting a child in a new session
                              (setsid) that sleeps on: xbench must reap it
                          anything else: ok

When XBENCH_FAULT_PIDS names a file, the hang appends its own pid and its
child's, one per line, so a test can check that nothing survived. Speaks the
JSON-lines protocol of docs/protocol.md with the standard library only;
run_batch answers each request as run would, and a hang, crash or garbage
line inside a batch behaves as it does for a single run.
"""

import json
import os
import subprocess
import sys
import time

INFO = {
    "name": "faulty",
    "description": "fails on purpose",
    "capabilities": {"workloads": [{
        "workload": "ttt", "phases": ["forward", "backward", "inner_only"], "devices": ["cpu", "cuda", "rocm"],
        "values": {"ttt_type": ["linear", "mlp"], "dtype": ["float32", "bfloat16", "float16"],
                   "backbone": ["transformer"]},
    }]},
}


def result(cfg, status="ok", samples=None, message="", device="cpu"):
    repeats = cfg.get("repeats", 3)
    return {
        # samples first, so a truncated copy of the line still shows them
        "samples_ms": [1.0 + 0.01 * i for i in range(repeats)] if samples is None else samples,
        "backend": "faulty", "status": status, "message": message, "config": cfg,
        # The GPU pinning the harness gave this process, for --gpus tests.
        # kind: what the harness asked for, so a test sees that --device
        # cuda:N reaches the backend as plain cuda (no GPU is touched).
        "device": {"kind": device if device in ("cuda", "rocm") else "cpu", "name": "fault injector " + pinning(), "count": 1},
        "compile_ms": 0.5, "peak_memory_bytes": 0, "num_params": 0, "throughput": 0,
        "env": {"framework": "none", "timing": "host-clock"},
        "run_id": "", "schema_version": 2,
    }


def pinning():
    names = ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES")
    return " ".join(f"{n}={os.environ[n]}" for n in names if n in os.environ)


def hang():
    child = subprocess.Popen(["sleep", "3600"])
    path = os.environ.get("XBENCH_FAULT_PIDS")
    if path:
        with open(path, "a") as f:
            f.write(f"{os.getpid()}\n{child.pid}\n")
    print("faulty: hanging on purpose", file=sys.stderr, flush=True)
    while True:
        time.sleep(3600)


def run(req, reply):
    cfg = req["config"]
    params = cfg.get("params", {})
    dtype, seq = params.get("dtype"), int(params.get("seq_len", "0"))
    if dtype == "bfloat16":
        hang()
    if dtype == "float16":
        print("faulty: allocating 2 GiB", file=sys.stderr, flush=True)
        return {"error": "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"}
    if seq == 32:
        print("faulty: crashing on purpose", file=sys.stderr, flush=True)
        os._exit(3)
    if seq == 48:
        reply.write("this is not JSON at all\n")
        reply.flush()
        return None
    if seq == 64:
        bad = result(cfg)
        bad["status"] = "splendid"
        return {"result": bad}
    if seq == 80:
        return {"result": result(cfg, samples=[float("nan")] * cfg.get("repeats", 3))}
    if seq == 96:
        return {"result": result(cfg, samples=[-1.0] * cfg.get("repeats", 3))}
    if seq == 112:
        return {"result": result(cfg, samples=[])}
    if seq == 4016:
        import shutil
        path = os.environ["XBENCH_FAULT_BREAK"]
        shutil.rmtree(path)
        with open(path, "w") as f:
            f.write("not a folder any more\n")
        return {"result": result(cfg)}
    if seq == 4000:
        child = subprocess.Popen(["sleep", "3600"], start_new_session=True)
        path = os.environ.get("XBENCH_FAULT_PIDS")
        if path:
            with open(path, "a") as f:
                f.write(f"{child.pid}\n")
        return {"result": result(cfg)}
    if seq == 128:
        return {"result": result(cfg, status="oom", samples=[], message="the framework ran out of memory")}
    return {"result": result(cfg, device=req.get("device", "cpu"))}


def main():
    if "--serve" not in sys.argv:
        sys.exit("faulty.py only serves the harness: run it with --serve")
    reply = sys.stdout
    for line in sys.stdin:
        req = json.loads(line)
        op = req.get("op")
        if op == "shutdown":
            return
        if op == "info":
            out = {"protocol": 2, "info": INFO}
        elif op == "run":
            out = run(req["request"], reply)
            if out is None:
                continue
        elif op == "run_batch":
            outs = [run(r, reply) for r in req["requests"]]
            if any(o is None for o in outs):
                continue
            errors = [o["error"] for o in outs if "error" in o]
            out = {"error": errors[0]} if errors else {"results": [o["result"] for o in outs]}
        else:
            out = {"error": f"faulty: op {op!r} is not supported"}
        reply.write(json.dumps({"id": req.get("id"), **out}) + "\n")  # NaN stays NaN, on purpose
        reply.flush()


if __name__ == "__main__":
    main()
