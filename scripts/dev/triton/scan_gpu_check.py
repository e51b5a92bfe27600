#!/usr/bin/env python3
"""On a GPU: our Triton scan (scan.py) against flash-semicrf at the
sizes the CPU tests cannot reach, then timed against flash-semicrf's own
Triton kernel. Run from the repository root (scripts/h100-scan.sh does):

  1. correctness at batch 4, T 1024, K 24, C 12 (and K 4, C 3): our float32
     forward (log, max) and log gradients against flash-semicrf's reference
     in float64 on the GPU; our max gradient against our own float64 run;
  2. timing (CUDA events, warmup 3, median of 20) of the forward and the
     backward, ours and flash-semicrf's (semi_crf_streaming_forward,
     use_triton=True) at batch 4, T 1024, K in 4/8/16/24, C in 3/6/12, float32
     log: one line per shape with both medians and the ratio.
Exits 1 if a correctness check fails; a shape that raises is printed and
skipped, so one bad shape cannot hide the rest.
"""

import os
import sys

# A development script of the triton backend (not part of it): plugins/_python
# (the contract xbench_py and the backend packages xbench_triton,
# xbench_pytorch, ...) goes first on the path, as benchmark.py puts it.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PLUGINS = os.path.join(ROOT, "plugins")
sys.path.insert(0, os.path.join(PLUGINS, "_python"))


import numpy as np  # noqa: E402
import torch  # noqa: E402

from xbench_triton import scan  # noqa: E402
from xbench_py import workloads as xw  # noqa: E402
from xbench_py import scan_ref as ref  # noqa: E402
from flash_semicrf.streaming import semi_crf_streaming_forward as fsc  # noqa: E402


def tensors(cfg, dtype, grad=False):
    x = ref.fixtures(cfg, 1)
    t = [torch.tensor(x[n], dtype=dtype, device="cuda", requires_grad=grad) for n in ("cum_scores", "transition", "duration_bias")]
    return t, torch.tensor(x["lengths"], device="cuda")


def rel(a, b):
    a, b = a.double(), b.double()
    return float((a - b).norm() / b.norm().clamp_min(1e-300))


def check(T, K, C):
    bad = 0
    for sr in ("log", "max"):
        cfg = xw.Scan(T=T, K=K, C=C, batch=4, semiring=sr)
        (c64, t64, d64), lens = tensors(cfg, torch.float64, grad=sr == "log")
        want = fsc(c64, t64, d64, lens, K, semiring=sr, use_triton=False)
        (c32, t32, d32), _ = tensors(cfg, torch.float32, grad=True)
        got = scan.scan(c32, t32, d32, lens, cfg)
        e = rel(got.detach(), want.detach())
        tol = 2e-5 * max(1, T / 128)
        print(f"check {sr} forward T{T} K{K} C{C}: rel {e:.2e} (tol {tol:.1e})")
        bad += e > tol
        g32 = torch.autograd.grad(got.sum(), (c32, t32, d32))
        if sr == "log":
            g64 = torch.autograd.grad(want.sum(), (c64, t64, d64))
        else:  # flash-semicrf has no max gradient: ours in float64 is the reference
            (o64c, o64t, o64d), _ = tensors(cfg, torch.float64, grad=True)
            g64 = torch.autograd.grad(scan.scan(o64c, o64t, o64d, lens, cfg).sum(), (o64c, o64t, o64d))
        for name, a, b in zip(("d_cum", "d_trans", "d_dur"), g32, g64):
            e = rel(a, b)
            if sr == "max":
                # a float32 Viterbi path may take another segment at a near
                # tie than the float64 one: reported, not a failure
                print(f"info {sr} backward {name} T{T} K{K} C{C}: float32 path vs float64 path, rel {e:.2e}")
                continue
            tolb = 5e-4 * max(1, T / 128)  # the workload's float32 gradient tolerance
            print(f"check {sr} backward {name} T{T} K{K} C{C}: rel {e:.2e} (tol {tolb:.1e})")
            bad += e > tolb
    return bad


def median_ms(fn, warmup=3, reps=20):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    return float(np.median(times))


def timing(T, K, C):
    cfg = xw.Scan(T=T, K=K, C=C, batch=4)
    (c, t, d), lens = tensors(cfg, torch.float32, grad=True)
    with torch.no_grad():
        ours_f = median_ms(lambda: scan.scan(c, t, d, lens, cfg))
        theirs_f = median_ms(lambda: fsc(c, t, d, lens, K, semiring="log", use_triton=True))
    o1 = scan.scan(c, t, d, lens, cfg)
    o2 = fsc(c, t, d, lens, K, semiring="log", use_triton=True)
    ours_b = median_ms(lambda: torch.autograd.grad(o1.sum(), (c, t, d), retain_graph=True))
    theirs_b = median_ms(lambda: torch.autograd.grad(o2.sum(), (c, t, d), retain_graph=True))
    print(f"time T{T} K{K} C{C}: forward ours {ours_f:.3f} ms flash-semicrf {theirs_f:.3f} ms ratio {theirs_f / ours_f:.2f}x; "
          f"backward ours {ours_b:.3f} ms flash-semicrf {theirs_b:.3f} ms ratio {theirs_b / ours_b:.2f}x")


def main():
    bad = 0
    for shape in ((1024, 24, 12), (1024, 4, 3), (300, 7, 5)):
        try:
            bad += check(*shape)
        except Exception as e:  # noqa: BLE001 - report and go on
            print(f"check {shape} raised {type(e).__name__}: {e}")
            bad += 1
    for K in (4, 8, 16, 24):
        for C in (3, 6, 12):
            try:
                timing(1024, K, C)
            except Exception as e:  # noqa: BLE001
                print(f"time T1024 K{K} C{C} raised {type(e).__name__}: {e}")
    print("scan gpu check:", "FAILED" if bad else "ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
