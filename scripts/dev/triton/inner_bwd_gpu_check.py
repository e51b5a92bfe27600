"""The inner loop's hand-written backward on a GPU, in one command (run on an
H100 before the forward's kernels were reworked, h-tritonfwd: gradients within
9.1e-7 of float64):

    python scripts/dev/triton/inner_bwd_gpu_check.py            # cuda, 125m shapes
    python scripts/dev/triton/inner_bwd_gpu_check.py --cpu      # tiny shapes, Triton's interpreter

Per inner model (linear, mlp), at 125m's shapes (B=1, nh=12, f=64, K=16,
L=2048; env L, B override), float32 as the model runs it (its inner-loop
inputs are float32 in every dtype):
  1. relative L2 errors of out and of every gradient (xq, xk, xv, gate, W1,
     b1, (W2, b2), ln_w, ln_b, tok_delta; xq also without the residual's
     dO) against torch autograd through the pytorch model's ttt_inner in
     float64 on the same inputs, and the pytorch float32 autograd's errors
     next to them;
  2. on cuda, one layer's inner loop, median of CUDA-event samples after a
     warm-up call (which compiles): the triton forward alone, with its states
     saved, forward + backward, and pytorch eager's forward + backward; the
     peak memory of triton's forward + backward; and each kernel's device
     time from torch.profiler.
Launch settings: XBENCH_TRITON_BWD_WARPS, _BC, _HC (xbench_triton.inner_bwd*.launch)
for the backward; for the forward XBENCH_TRITON_WARPS, _STAGES, _OUT_WARPS,
and _BC (linear, model.linear_launch) or _HB, _BF (mlp,
xbench_triton.ttt_mlp.mlp_launch).
Exits 1 if a triton error is above 1e-4 (float32).
"""

from __future__ import annotations

import os
import sys

# A development script of the triton backend (not part of it): plugins/_python
# (the contract xbench_py and the backend packages xbench_triton,
# xbench_pytorch, ...) goes first on the path, as benchmark.py puts it.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLUGINS = os.path.join(ROOT, "plugins")
sys.path.insert(0, os.path.join(PLUGINS, "_python"))

if "--cpu" in sys.argv:
    os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported


import torch  # noqa: E402

from xbench_pytorch import model as torch_model  # noqa: E402
from xbench_triton import inner_fn  # noqa: E402
from xbench_triton import model  # noqa: E402
from xbench_py import spec as xs  # noqa: E402

CPU = "--cpu" in sys.argv
DEV = "cpu" if CPU else "cuda"
TOL = 1e-4


def problem(ttt_type: str):
    size = xs.model_size("tiny" if CPU else "125m")
    B, L = int(os.environ.get("B", "1")), int(os.environ.get("L", "48" if CPU else "2048"))
    specs = xs.inner_param_specs(size, ttt_type, 16)
    p = {k.rsplit(".", 1)[1]: torch.from_numpy(v).to(DEV) for k, v in xs.perturbed_params(specs).items()}
    g = torch.Generator(device=DEV).manual_seed(0)
    shape = (B, size.heads, L, size.head_dim)
    x = [0.5 * torch.randn(shape, generator=g, device=DEV) for _ in range(3)]
    gate = torch.sigmoid(torch.randn(shape[:3], generator=g, device=DEV))
    return x + [gate], p, torch.randn(shape, generator=g, device=DEV)


def fwd_bwd(inner, inputs, p, dout, ttt_type, dtype):
    """out and the gradients, named; the inputs made leaves of dtype."""
    ins = [t.detach().to(dtype).requires_grad_() for t in inputs]
    ps = {k: p[k].detach().to(dtype).requires_grad_() for k in inner_fn.PARAMS[ttt_type]}
    out = inner(*ins, ps, ttt_type, 16)
    out.backward(dout.to(out.dtype))
    grads = dict(zip(["xq", "xk", "xv", "gate", *ps], [t.grad for t in ins] + [ps[k].grad for k in ps]))
    grads["xq - dO"] = grads["xq"] - dout.to(dtype)
    return out.detach(), grads


def rel(x, r):
    return float((x.double() - r).norm() / r.norm())


def median_ms(fn, n=20):
    fn()  # compiles, autotunes nothing
    torch.cuda.synchronize()
    times = []
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    return sorted(times)[n // 2]


def timings(ttt_type, inputs, p, dout):
    ins = [t.detach().requires_grad_() for t in inputs]
    ps = {k: p[k].detach().requires_grad_() for k in inner_fn.PARAMS[ttt_type]}
    B, nh, L, f = inputs[0].shape
    states = inner_fn.state_buffers(ttt_type, B, nh, L // 16, f, p["W1"].shape[-1], DEV)

    def triton_fb():
        inner_fn.ttt_inner(*ins, ps, ttt_type, 16).backward(dout)

    def torch_fb():
        torch_model.ttt_inner(*ins, ps, ttt_type, 16).backward(dout)

    fwd = median_ms(lambda: model.ttt_inner(*inputs, p, ttt_type, 16))
    fwd_save = median_ms(lambda: model.ttt_inner(*inputs, p, ttt_type, 16, states=states))
    fb = median_ms(triton_fb)
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    triton_fb()
    peak = (torch.cuda.max_memory_allocated() - base) / 2 ** 20
    tfb = median_ms(torch_fb, n=5)
    print(f"  time ({ttt_type}, one layer): triton fwd {fwd:.3f} ms, fwd saving states {fwd_save:.3f} ms, "
          f"fwd+bwd {fb:.3f} ms (peak +{peak:.0f} MiB) | pytorch eager fwd+bwd {tfb:.3f} ms", flush=True)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            triton_fb()
        torch.cuda.synchronize()
    for ev in sorted(prof.key_averages(), key=lambda e: -e.device_time_total)[:12]:
        print(f"    {ev.key[:60]:60} {ev.device_time_total / ev.count / 1000:.3f} ms x{ev.count // 5}")


def main() -> int:
    torch.backends.cuda.matmul.allow_tf32 = False  # pytorch's float32 is IEEE, as the kernels'
    bad = 0
    for ttt_type in ("linear", "mlp"):
        inputs, p, dout = problem(ttt_type)
        ref_out, ref = fwd_bwd(torch_model.ttt_inner, inputs, p, dout, ttt_type, torch.float64)
        out, got = fwd_bwd(inner_fn.ttt_inner, inputs, p, dout, ttt_type, torch.float32)
        _, eager = fwd_bwd(torch_model.ttt_inner, inputs, p, dout, ttt_type, torch.float32)
        errs = {"out": rel(out, ref_out), **{k: rel(got[k], ref[k]) for k in ref}}
        worst = max(errs.values())
        bad += worst > TOL
        print(f"{ttt_type} {tuple(inputs[0].shape)} float32 vs float64 autograd: worst {worst:.2e} "
              f"{'ok' if worst <= TOL else 'FAIL'}", flush=True)
        print("  triton  " + " ".join(f"{k} {v:.1e}" for k, v in errs.items()))
        print("  pytorch " + " ".join(f"{k} {rel(eager[k], ref[k]):.1e}" for k in ref))
        if not CPU:
            timings(ttt_type, inputs, p, dout)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
