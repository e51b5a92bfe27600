"""One framework's half of the clock cross-check (issue 31), run by
scripts/h100-clock.sh on the GPU machine, one process per framework:

  python3 scripts/clock_crosscheck.py --framework pytorch|jax --out DIR

Times, through the contract's run() (the code path `xbench run` takes), the
cuBLAS GEMM bf16 at 1024^3, 4096^3, 8192^3 and the cuDNN attention forward
b4 h32/8 s4096 d128 causal bf16 (pytorch sdpa-cudnn, jax/cudnn), and lists the
kernels one traced call ran. Then the overhead lines: a null call (one tiny
kernel) on the device clock and on the framework's own clock, the 4096^3 GEMM
on the framework's own clock with CUPTI tracing on and off, and a launch-bound
call (the scan, T=1024) to show which clock calibrate() picks for it.
Writes DIR/<framework>.jsonl (one object per line) for clock_table.py.
"""

import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

p = argparse.ArgumentParser()
p.add_argument("--framework", choices=("pytorch", "jax"), required=True)
p.add_argument("--out", required=True)
p.add_argument("--repeats", type=int, default=30)
p.add_argument("--device", default="cuda", help="cpu: a smoke test of this script, small shapes")
p.add_argument("--xla-choice", action="store_true",
               help="jax: leave XLA's GEMM choice alone (its Triton fusion where faster); rows named jax-xla")
args = p.parse_args()

label = "jax-xla" if args.xla_choice else args.framework
if args.framework == "jax" and not args.xla_choice:
    # cuBLAS, as the cross-check asks: XLA would otherwise pick its own Triton
    # GEMM fusion where its autotuner finds it faster.
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_gpu_enable_triton_gemm=false").strip()
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
sys.path.insert(0, os.path.join(ROOT, "plugins", "_python"))

from xbench_py import workloads as xw  # noqa: E402
from xbench_py import runner as xr  # noqa: E402
from xbench_py import devclock as dc  # noqa: E402

if args.framework == "pytorch":
    from xbench_pytorch import backend

    fw, variant_att = backend.Backend(), "sdpa-cudnn"
else:
    from xbench_jax import backend

    fw, variant_att = backend.Backend(), "cudnn"
fw.name = args.framework
os.makedirs(args.out, exist_ok=True)
out = open(os.path.join(args.out, f"{label}.jsonl"), "w")
R = args.repeats


def emit(**row):
    out.write(json.dumps(row) + "\n")
    out.flush()
    print(json.dumps(row), flush=True)


def kernels(prepare):
    """The kernels (name, us) of one traced call of a freshly prepared step."""
    src, why = dc.cupti_source()
    if src is None:
        return [why]
    step = prepare()
    dev = fw.resolve_device(args.device)
    t = dc.SpanTimer(fw.timer(dev), src)
    for _ in range(3):
        t.time(step)
    t.close()
    ks = [f"{r.kind}:{r.name[:70]} {(r.end_ns - r.start_ns) / 1e3:.1f}us" for r in t.last[:6]]
    return ks + ([f"... {len(t.last)} records"] if len(t.last) > 6 else [])


def case(name, cfg, variant=""):
    t0 = time.time()
    rec = xr.run(fw, cfg, variant, args.device)
    dev = fw.resolve_device(args.device)
    ks, own = [], None
    if rec["status"] == "ok":
        method = getattr(fw, f"prepare_{cfg.workload}")
        ks = kernels(lambda: method(cfg, variant, dev, 0).step)
        if cfg.workload != "scan":  # the same call on the framework's own clock, untraced, for comparison
            step, timer = method(cfg, variant, dev, 0).step, fw.timer(dev)
            for _ in range(3):
                timer.time(step)
            own = statistics.median(timer.time(step) for _ in range(R))
    fw.release()
    emit(case=name, framework=label, backend=rec["backend"], status=rec["status"],
         message=rec.get("message", ""), median_ms=statistics.median(rec["samples_ms"]) if rec["samples_ms"] else None,
         own_clock_untraced_ms=own, samples_ms=rec["samples_ms"], timing=rec["env"]["timing"], kernels=ks,
         wall_s=round(time.time() - t0, 1))


SMOKE = args.device == "cpu"
for n in (64, 128) if SMOKE else (1024, 4096, 8192):
    case(f"gemm bf16 {n}^3", xw.Gemm(m=n, n=n, k=n, dtype="bfloat16", layout="nn", warmup=10, repeats=R))
if args.xla_choice:  # the GEMM rows are what this process is for
    sys.exit(0)
case("attention fwd b4 h32/8 s4096 d128 causal bf16",
     xw.Attention(batch=4, heads=32, kv_heads=8, seq_len=64 if SMOKE else 4096, head_dim=128, causal=True,
                  dtype="bfloat16", phase="forward", warmup=5, repeats=R), "" if SMOKE else variant_att)
if args.framework == "pytorch" and not SMOKE:  # for reading the table: what sdpa picks by itself (not asserted)
    case("attention fwd b4 h32/8 s4096 d128 causal bf16, sdpa's own choice",
         xw.Attention(batch=4, heads=32, kv_heads=8, seq_len=4096, head_dim=128, causal=True,
                      dtype="bfloat16", phase="forward", warmup=5, repeats=R))

# ---- overhead lines
dev = fw.resolve_device(args.device)
src, why = dc.cupti_source()


def med(timer, step, n=R):
    for _ in range(3):
        timer.time(step)
    return statistics.median(timer.time(step) for _ in range(n))


if args.framework == "pytorch":
    import torch

    z = torch.ones(1, device=args.device)
    null = lambda: z + 1  # noqa: E731
else:
    import jax
    import jax.numpy as jnp

    z = jnp.ones((1,), jnp.float32)
    inc = jax.jit(lambda x: x + 1)
    null = lambda: inc(z)  # noqa: E731
own = fw.timer(dev)
row = {"case": "null call (x+1 on one float)", "framework": label,
       "own_clock_ms": med(own, null), "own_clock": own.description}
if src is not None:
    row["device_span_ms"] = med(dc.SpanTimer(fw.timer(dev), src), null)
    src.stop()
emit(**row)

if src is not None:
    g = fw.prepare_gemm(xw.Gemm(m=4096, n=4096, k=4096, dtype="bfloat16", layout="nn"), "", dev, 0).step
    off = med(fw.timer(dev), g)
    src.start()
    on = med(fw.timer(dev), g)
    src.stop()
    emit(case="gemm bf16 4096^3 on the framework's own clock, CUPTI tracing off vs on", framework=label,
         tracing_off_ms=off, tracing_on_ms=on, own_clock=fw.timer(dev).description)
    fw.release()

case("launch-bound: scan fwd T1024 C12 K4 b4 log",
     xw.Scan(T=64 if SMOKE else 1024, K=4, C=12, batch=4, semiring="log", phase="forward", warmup=2, repeats=10))
out.close()
