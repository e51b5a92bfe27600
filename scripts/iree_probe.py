"""The H100 probe of IREE (scripts/probe-iree.sh): what the runtime sees, and
for each candidate CUDA target, whether its precompiled modules run,
compute the right thing, and how fast (host clock around the synchronous
call; torch's cuBLAS in the same process as the yardstick when torch is there).

    python3 scripts/iree_probe.py CACHE_FOLDER [targets [check]]

CACHE_FOLDER holds the modules iree_precompile.py --probe wrote (its iree/
subfolder); targets default to iree_precompile.PROBE_TARGETS. Only the
runtime is needed here. Prints one line per check and a summary table.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "plugins", "_python"))

import numpy as np  # noqa: E402

from xbench_iree import cache as iree_cache  # noqa: E402
from xbench_iree import mlir as iree_mlir  # noqa: E402
import iree_precompile  # noqa: E402  (beside this script)
from xbench_iree import targets as iree_targets  # noqa: E402


def reference(a, b, layout):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if layout[0] == "t":
        a64 = a64.transpose(0, 2, 1)
    if layout[1] == "t":
        b64 = b64.transpose(0, 2, 1)
    return a64 @ b64


def runtime_report(rt) -> None:
    import iree.runtime.version as v

    print(f"iree.runtime {v.VERSION} {v.REVISIONS}")
    print("drivers:", rt.query_available_drivers())
    for name in ("cuda", "hip", "local-task"):
        try:
            drv = rt.get_driver(name)
            print(f"driver {name}: devices {drv.query_available_devices()}")
        except Exception as e:  # noqa: BLE001 - a probe reports everything
            print(f"driver {name}: {type(e).__name__}: {' '.join(str(e).split())[:300]}")


class Loaded:
    def __init__(self, rt, target, vmfb: bytes, fn: str):
        self.config = rt.Config(target.driver)
        self.ctx = rt.SystemContext(config=self.config)
        self.ctx.add_vm_module(rt.VmModule.copy_buffer(self.ctx.instance, vmfb))
        self.fn = self.ctx.modules.module[fn]


def attention_reference(q, k, v, causal):
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    g = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, g, axis=1), np.repeat(v, g, axis=1)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
    if causal:
        n, m = s.shape[-2:]
        s = np.where(np.arange(m)[None, :] <= np.arange(n)[:, None] + (m - n), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


def time_calls(fn, warmup=3, repeats=20):
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts)


def torch_ms(shape, layout, dtype):
    try:
        import torch
    except ImportError:
        return None
    m, n, k, batch = shape
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    td = {"bfloat16": torch.bfloat16, "float32": torch.float32, "float16": torch.float16}[dtype]
    sa, sb, _ = iree_mlir.gemm_shapes(m, n, k, batch, layout)
    a = torch.randn(sa, device="cuda", dtype=td)
    b = torch.randn(sb, device="cuda", dtype=td)
    oa = a.mT if layout[0] == "t" else a
    ob = b.mT if layout[1] == "t" else b

    def call():
        torch.matmul(oa, ob)
        torch.cuda.synchronize()
    return time_calls(call)


def torch_attention_ms(b, h, kh, sq, kv, d, causal, dtype):
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        return None
    td = {"bfloat16": torch.bfloat16, "float32": torch.float32, "float16": torch.float16}[dtype]
    q = torch.randn(b, h, sq, d, device="cuda", dtype=td)
    k = torch.randn(b, kh, kv, d, device="cuda", dtype=td)
    v = torch.randn(b, kh, kv, d, device="cuda", dtype=td)

    def call():
        with torch.inference_mode():
            F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=kh != h)
        torch.cuda.synchronize()
    return time_calls(call)


def cases():
    """(kind, label, mlir, fn name, shape tuple, purpose)."""
    out = []
    for (m, n, k, batch), layout, dtype, purpose in iree_precompile.PROBE_GEMMS:
        out.append(("gemm", iree_precompile.gemm_label(m, n, k, batch, layout, dtype),
                    iree_mlir.gemm(m, n, k, batch, layout, dtype), (m, n, k, batch, layout, dtype), purpose))
    for *shape, purpose in iree_precompile.PROBE_ATTENTION:
        out.append(("attention", iree_precompile.attention_label(*shape), iree_mlir.attention(*shape),
                    tuple(shape), purpose))
    return out


def one(rt, target, kind, label, mlir, shape, purpose, cache):
    from xbench_iree.backend import np_dtype  # the backend's host arrays (it imports iree.runtime, as main has)

    vmfb, _ = iree_cache.get(target, mlir, label, cache)
    t0 = time.perf_counter()
    mod = Loaded(rt, target, vmfb, kind)
    load_ms = (time.perf_counter() - t0) * 1e3
    rng = np.random.default_rng(0)
    if kind == "gemm":
        m, n, k, batch, layout, dtype = shape
        sa, sb, _ = iree_mlir.gemm_shapes(m, n, k, batch, layout)
        host = [rng.standard_normal(sa).astype(np_dtype(dtype)), rng.standard_normal(sb).astype(np_dtype(dtype))]
        flops = 2.0 * m * n * k * batch
    else:
        b, h, kh, sq, kv, d, causal, dtype = shape
        host = [rng.uniform(-2, 2, (b, h, sq, d)).astype(np_dtype(dtype)),
                rng.uniform(-2, 2, (b, kh, kv, d)).astype(np_dtype(dtype)),
                rng.uniform(-1, 1, (b, kh, kv, d)).astype(np_dtype(dtype))]
        flops = 4.0 * b * h * sq * kv * d * (0.5 if causal else 1.0)
    dev = [rt.asdevicearray(mod.config.device, x) for x in host]
    t0 = time.perf_counter()
    out = mod.fn(*dev)
    first_ms = (time.perf_counter() - t0) * 1e3
    if purpose == "check":
        c = np.asarray(out.to_host()).astype(np.float64)
        ref = reference(*host, shape[4]) if kind == "gemm" else attention_reference(*host, shape[6])
        rel = float(np.linalg.norm(c - ref) / np.linalg.norm(ref))
        return f"rel L2 {rel:.2e}", f"load {load_ms:.0f} ms, first call {first_ms:.0f} ms"
    ms = time_calls(lambda: mod.fn(*dev))
    tm = None
    if target.driver == "cuda":
        tm = torch_ms(shape[:4], shape[4], shape[5]) if kind == "gemm" else torch_attention_ms(*shape)
    vs = f", torch {tm:.3f} ms (iree/torch speed {tm / ms:.2f})" if tm else ""
    return f"{ms:.3f} ms {flops / ms / 1e9:.1f} TFLOP/s", f"load {load_ms:.0f} ms, first call {first_ms:.0f} ms{vs}"


def main(argv) -> int:
    import iree.runtime as rt

    cache = os.path.join(argv[1], "iree")
    targets = argv[2].split(",") if len(argv) > 2 else list(iree_precompile.PROBE_TARGETS)
    only = argv[3] if len(argv) > 3 else ""  # "check": skip the timed shapes (a quick local run)
    runtime_report(rt)
    rows = []
    for tname in targets:
        target = iree_targets.cpu() if tname == "cpu" else iree_targets.cuda(tname)
        for kind, label, mlir, shape, purpose in cases():
            if only and purpose != only:
                continue
            try:
                rows.append((tname, label) + one(rt, target, kind, label, mlir, shape, purpose, cache))
            except Exception as e:  # noqa: BLE001
                traceback.print_exc()
                rows.append((tname, label, "ERROR", " ".join(f"{type(e).__name__}: {e}".split())[:300]))
            print(" | ".join(rows[-1]), flush=True)
    print("\n=== summary (host clock around the synchronous call, median of 20 after 3 warmup)")
    for r in rows:
        print(f"{r[0]:7s} {r[1]:46s} {r[2]:26s} {r[3]}")
    return 0 if all(r[2] != "ERROR" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
