"""On a GPU: xbench_triton.gemm's two bfloat16 kernels against torch.matmul (cuBLAS).

For each shape: the pointer kernel (xbench_triton.gemm's general path), the TMA
persistent kernel (xbench_triton.gemm_tma) without and with warp specialization,
each autotuned on its first call, checked against torch.matmul (relative
Frobenius error, bfloat16 output), then timed interleaved call by call with
torch.matmul (warm L2, CUDA events, median of REPEATS) so the H100's
power-capped clock falls on all alike (results/h100-vendor-paths). Prints one
JSON line a shape: ms, TFLOP/s and the fraction of cuBLAS for each kernel.

    python3 scripts/dev/triton/gemm_kernel_check.py [m,n,k,layout ...]
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time

# A development script of the triton backend (not part of it): plugins/_python
# (the contract xbench_py and the backend packages xbench_triton,
# xbench_pytorch, ...) goes first on the path, as benchmark.py puts it.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLUGINS = os.path.join(ROOT, "plugins")
sys.path.insert(0, os.path.join(PLUGINS, "_python"))


import torch  # noqa: E402

from xbench_triton import gemm as tg  # noqa: E402
from xbench_triton import gemm_tma as tt  # noqa: E402

REPEATS = 20
SHAPES = ["4096,4096,4096,nn", "8192,8192,8192,nn", "16384,16384,16384,nn", "4096,4096,4096,nt",
          "8192,4096,4096,nt", "8192,28672,4096,nt", "8192,4096,14336,nt", "2048,4096,14336,nt",
          "2048,28672,4096,nt", "8192,6144,4096,nt", "1024,22016,4096,nt", "8192,8192,1536,nt"]


def one_ms(fn) -> float:
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    fn()
    e.record()
    e.synchronize()
    return s.elapsed_time(e)


def check(spec: str) -> dict:
    m, n, k, layout = spec.split(",")
    m, n, k = int(m), int(n), int(k)
    params = {"m": str(m), "n": str(n), "k": str(k), "batch": "1", "layout": layout, "dtype": "bfloat16"}
    sa, sb = tg.stored_shapes(m, n, k, 1, layout)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(0)
    a = torch.randn(sa, generator=gen, device="cuda").to(torch.bfloat16)
    b = torch.randn(sb, generator=gen, device="cuda").to(torch.bfloat16)
    opa = a if layout[0] == "n" else a.mT
    opb = b if layout[1] == "n" else b.mT
    ref = torch.empty((1, m, n), device="cuda", dtype=torch.bfloat16)
    fns = {"cublas": lambda: torch.matmul(opa, opb, out=ref)}
    fns["cublas"]()
    out = {"shape": spec, "params": params, "tune_s": {}, "rel_err": {}}
    kernels = {"pointer": (lambda: tg._launcher(a, b, layout, "bfloat16", tma=False), tg._gemm_tuned),
               "tma": (lambda: tt.launcher(a, b, torch.empty_like(ref), m, n, k, layout, False, ws=False), tt._tuned),
               "tma_ws": (lambda: tt.launcher(a, b, torch.empty_like(ref), m, n, k, layout, False, ws=True),
                          tt._tuned_ws)}
    for name, (make, tuner) in kernels.items():
        t0 = time.time()
        try:
            fn = make()
            c = fn()
            torch.cuda.synchronize()
        except Exception as e:  # a kernel that does not build here is reported, not fatal
            out["rel_err"][name] = f"error: {type(e).__name__}: {str(e)[-300:]}"
            continue
        out["tune_s"][name] = round(time.time() - t0, 1)
        out.setdefault("config", {})[name] = str(tuner.best_config)
        out["rel_err"][name] = float((c.float() - ref.float()).norm() / ref.float().norm())
        fns[name] = fn
    for fn in fns.values():
        for _ in range(3):
            fn()
    ts = {name: [] for name in fns}
    for _ in range(REPEATS):
        for name, fn in fns.items():
            ts[name].append(one_ms(fn))
    flops = 2 * m * n * k
    med = {name: statistics.median(t) for name, t in ts.items()}
    out["ms"] = {name: round(v, 4) for name, v in med.items()}
    out["tflops"] = {name: round(flops / v / 1e9, 1) for name, v in med.items()}
    out["of_cublas"] = {name: round(med["cublas"] / v, 3) for name, v in med.items() if name != "cublas"}
    return out


def main() -> None:
    print(json.dumps({"torch": torch.__version__, "triton": __import__("triton").__version__,
                      "gpu": torch.cuda.get_device_name()}), flush=True)
    for spec in sys.argv[1:] or SHAPES:
        print(json.dumps(check(spec)), flush=True)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
