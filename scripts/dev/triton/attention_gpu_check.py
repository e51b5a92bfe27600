"""The attention kernels on a GPU, in one command (none has run there yet):

    python scripts/dev/triton/attention_gpu_check.py            # cuda
    python scripts/dev/triton/attention_gpu_check.py --cpu      # tiny sizes, Triton's interpreter

env DS picks the head dims (default 64,128,256; each dim, dtype and causal flag
compiles and autotunes 3 kernels of 1-5 configs on first use: minutes in all).

Per case (dtype, head dim, causal, S, KV, heads): relative L2 errors of out,
dq, dk, dv against float64 torch on the same rounded inputs (explicit
bottom-right causal mask), and on cuda the forward and forward+backward times
(median of CUDA-event samples after a warm-up call, which autotunes) next to
torch's scaled_dot_product_attention on the same problem (MHA, S == KV only:
its causal mask is top-left, the same as ours only there).
"""

from __future__ import annotations

import math
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

from xbench_triton import attention as ta  # noqa: E402

CPU = "--cpu" in sys.argv
DEV = "cpu" if CPU else "cuda"
TOL = {torch.float32: 1e-4, torch.bfloat16: 2e-2, torch.float16: 5e-3}


def reference(q, k, v, dout, causal):
    q, k, v = (t.detach().double().requires_grad_() for t in (q, k, v))
    H, S, D = q.shape[1:]
    KH, KV = k.shape[1:3]
    kk, vv = k.repeat_interleave(H // KH, 1), v.repeat_interleave(H // KH, 1)
    s = q @ kk.transpose(-1, -2) / math.sqrt(D)
    if causal:
        i, j = torch.arange(S, device=q.device)[:, None], torch.arange(KV, device=q.device)[None, :]
        s = s.masked_fill(j > i + (KV - S), float("-inf"))
    m = s.amax(-1, keepdim=True).clamp_min(-1e300).detach()
    e = torch.exp(s - m)
    out = (e / e.sum(-1, keepdim=True).clamp_min(1e-300)) @ vv
    out.backward(dout.double())
    return out.detach(), q.grad, k.grad, v.grad


def rel(x, r):
    return float((x.double() - r).norm() / r.norm())


def median_ms(fn, n=20):
    fn()
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


def case(B, H, KH, S, KV, D, dtype, causal):
    g = torch.Generator(device=DEV).manual_seed(0)
    q, k, v, do = (torch.randn(shape, generator=g, device=DEV).to(dtype)
                   for shape in ((B, H, S, D), (B, KH, KV, D), (B, KH, KV, D), (B, H, S, D)))
    out, lse = ta.forward(q, k, v, causal)
    dq, dk, dv = ta.backward(q, k, v, out, lse, do, causal)
    small = B * H * S * KV <= 2 ** 26  # the float64 reference's score tensor stays small
    errs = [rel(x, r) for x, r in zip((out, dq, dk, dv), reference(q, k, v, do, causal))] if small else []
    ok = all(e < TOL[dtype] for e in errs)
    line = f"{str(dtype)[6:]:8} D{D:3} causal={causal!s:5} B{B} H{H} KH{KH} S{S} KV{KV}: "
    line += ("err out/dq/dk/dv " + " ".join(f"{e:.1e}" for e in errs) + (" ok" if ok else " FAIL")) if errs else ""
    if not CPU:
        qg, kg, vg = (t.clone().requires_grad_() for t in (q, k, v))
        fwd = median_ms(lambda: ta.forward(q, k, v, causal))
        fb = median_ms(lambda: ta.attention(qg, kg, vg, causal).backward(do))
        line += f" | triton fwd {fwd:.3f} ms fwd+bwd {fb:.3f} ms"
        if H == KH and S == KV:
            sd = torch.nn.functional.scaled_dot_product_attention
            line += f" | sdpa fwd {median_ms(lambda: sd(q, k, v, is_causal=causal)):.3f} ms"
            line += f" fwd+bwd {median_ms(lambda: sd(qg, kg, vg, is_causal=causal).backward(do)):.3f} ms"
    print(line, flush=True)
    return ok


def main() -> int:
    if CPU:
        cases = [(1, 4, 2, 37, 53, d, dt, c) for d in (16, 64) for dt in (torch.float32, torch.bfloat16)
                 for c in (False, True)]
    else:
        dims = [int(x) for x in os.environ.get("DS", "64,128,256").split(",")]
        cases = [(2, 8, 2, 1000, 1200, d, dt, c) for d in dims
                 for dt in (torch.bfloat16, torch.float16, torch.float32) for c in (False, True)]
        cases += [(1, 2, 1, 65, 37, 128, torch.float32, True),  # S > KV: 28 rows see no key
                  (1, 2, 2, 17, 300, 64, torch.bfloat16, True)]  # a few query rows, many keys
        cases += [(4, 16, 16, 4096, 4096, d, torch.bfloat16, c) for d in dims for c in (False, True)]
    bad = [c for c in cases if not case(*c)]
    print(f"{len(cases) - len(bad)} of {len(cases)} cases within tolerance")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
