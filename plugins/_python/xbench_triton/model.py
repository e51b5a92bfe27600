"""The TTT inner loop (docs/workloads/ttt.md steps 3-5) as fused Triton
kernels, and the launcher that replaces the pytorch backend's ttt_inner. The
dense rest of the model is the pytorch backend's (reused).

Each inner model is two kernels: the serial chain through the state, one
program per (sequence, head) walking every mini-batch in order, and the
output rows, one program per (sequence, head, mini-batch), from what the
chain saved. The state lives in a per-program scratch slice (L1/L2-resident)
that is read and updated a tile at a time, which keeps every tl.dot operand
small: a whole 64x64 W as an IEEE float32 (FMA) dot operand is replicated
across each thread's columns and spilled (linear: 3.99 ms -> 0.71 ms per layer
on an H100 at 125m). The linear kernels are below (the chain holds b in
registers, W in the scratch, BC rows at a time); the mlp's are in
ttt_mlp.py, with the arithmetic of a step.

Any head dim f runs: f is padded to FP, the next power of two >= 16, inside
the kernels (ttt_math.py states the contract); at a power of two the
padding is compiled out.

For the backward (inner_fn.py) the chain kernels also save the state
each mini-batch starts from, at the true f, when ttt_inner is given states=
buffers: SAVE is a constexpr, so a forward without them compiles as if the
stores were not there.

Portability: only tl.* operations (tl.dot, tl.sum, tl.sigmoid, tl.sqrt), all
elementwise math in float32, so the same source builds for NVIDIA and AMD and
runs in the interpreter (TRITON_INTERPRET=1, set by backend on cpu).
Precision: the state and every accumulation are float32. In float32 runs
tl.dot uses input_precision="ieee" (no TF32); in bfloat16/float16 runs the
dot operands are rounded to that dtype and accumulated in float32.
"""

from __future__ import annotations

import os

import torch
import triton
import triton.language as tl

from xbench_py import types as xt
from xbench_py import spec as xs
# The shared kernel pieces, importable from here as before they moved.
from xbench_triton.dot import DOT_DTYPES  # noqa: F401 - inner_fn reads it from here
from xbench_triton.ttt_math import (EMULATE, GELU_C, _gelu, _gelu_and_prime, _ln, _ln_grad, _load, _mm,  # noqa: F401
                             _mma, _store, _tanh)
from xbench_triton.ttt_mlp import pow2_at_least_16, ttt_mlp, ttt_mlp_chain_kernel, ttt_mlp_out_kernel  # noqa: F401


@triton.jit
def ttt_linear_kernel(XQ, XK, XV, TOK, GATE, W1, B1, LNW, LNB, ZQ, GS, WS, ST, NH, L, N,
                      K: tl.constexpr, F: tl.constexpr, BC: tl.constexpr, DT: tl.constexpr,
                      FP: tl.constexpr, SAVE: tl.constexpr = False):
    # The serial chain only: per mini-batch, Z = Kx W + b, its gradient G and
    # the update of (W, b), plus Q W + b, which needs this mini-batch's state.
    # Q W + b goes to ZQ and G to GS; ttt_linear_out_kernel forms the output
    # from them for all mini-batches in parallel.
    # The state W [F, F] lives in this program's slice of the scratch WS
    # (L1/L2-resident, 16 KiB at f=64), not in registers: every product with it
    # is taken BC rows of W at a time, so a tl.dot's operands stay small. A
    # whole-W operand (64x64) made the float32 (FMA) dot replicate W's columns
    # in every thread, hundreds of registers, and spill on every mini-batch.
    # f = F is padded to FP (triton_ttt_math's contract): WS is [FP, FP] with
    # zero padding, and row chunks of W that are all padding are skipped.
    # SAVE (for the backward, inner_bwd.py): the state [W; b] at the
    # start of every mini-batch goes to ST [B*nh, N, F+1, F] (unpadded): the
    # initial W as it is copied into WS, b before each update, each updated W
    # chunk as it is written back. Storing the chunks the products load
    # instead took ptxas from 144 to 254 registers at f=64 (they are in the
    # dot's operand layout); these values are in a store's layout already.
    PAD: tl.constexpr = F != FP
    pid = tl.program_id(0)
    h = pid % NH
    rk, rf, rc = tl.arange(0, K), tl.arange(0, FP), tl.arange(0, BC)
    cm = rf[None, :] < F  # the true lanes of a row
    xbase, gbase = pid * L * F, pid * L  # [B, nh, L, f] and [B, nh, L], contiguous
    ws = WS + pid * FP * FP
    st = ST + pid.to(tl.int64) * N * (F + 1) * F
    for c in tl.static_range(FP // BC):  # BC rows at a time, padded rows too (zeros)
        col = c * BC + rc
        wm = (col[:, None] < F) & cm
        w0 = _load(W1 + h * F * F + col[:, None] * F + rf[None, :], wm, PAD)
        tl.store(ws + col[:, None] * FP + rf[None, :], w0)
        if SAVE:
            if c * BC < F:
                _store(st + col[:, None] * F + rf[None, :], w0, wm, PAD)
    b = _load(B1 + h * F + rf, rf < F, PAD)[None, :]
    lnw, lnb = _load(LNW + h * F + rf, rf < F, PAD)[None, :], _load(LNB + h * F + rf, rf < F, PAD)[None, :]
    tok_last = tl.load(TOK + K - 1)  # base_lr / f * max(0, 1/K + tok_delta[K-1])
    tl.debug_barrier()
    for n in range(N):
        row = xbase + (n * K + rk) * F  # [K] offsets of this mini-batch's rows
        zk = tl.zeros([K, FP], tl.float32) + b
        zq = tl.zeros([K, FP], tl.float32) + b
        for c in tl.static_range(FP // BC):
            if c * BC < F:
                col = c * BC + rc
                qc = _load(XQ + row[:, None] + col[None, :], col[None, :] < F, PAD)  # [K, BC]
                kc = _load(XK + row[:, None] + col[None, :], col[None, :] < F, PAD)  # [K, BC]
                wc = tl.load(ws + col[:, None] * FP + rf[None, :])  # [BC, FP]
                zk = _mma(kc, wc, zk, DT)
                zq = _mma(qc, wc, zq, DT)
        if SAVE:
            _store(st + n * (F + 1) * F + F * F + rf[None, :], b, cm, PAD)
        xo = row[:, None] + rf[None, :]
        k = _load(XK + xo, cm, PAD)
        v = _load(XV + xo, cm, PAD)
        g = tl.load(GATE + gbase + n * K + rk).to(tl.float32)
        G = _ln_grad(zk, v - k, lnw, lnb, F, cm, PAD)
        _store(ZQ + xo, zq, cm, PAD)
        _store(GS + xo, G, cm, PAD)
        eG = G * (tok_last * g)[:, None]
        b = b - tl.sum(eG, axis=0)[None, :]
        tl.debug_barrier()  # every read of W above is done before it is overwritten
        for c in tl.static_range(FP // BC):
            if c * BC < F:  # padded rows of W stay zero: their rows of Kx^T are
                col = c * BC + rc
                kt = _load(XK + row[None, :] + col[:, None], col[:, None] < F, PAD)  # [BC, K] = Kx^T rows
                wp = ws + col[:, None] * FP + rf[None, :]
                wn = tl.load(wp) - _mm(kt, eG, DT)
                tl.store(wp, wn)
                if SAVE:  # the state at the start of mini-batch n+1 (none is kept after the last)
                    live = rf[None, :] < (N - 1 - n) * FP  # a tensor: the interpreter takes no scalar mask
                    if PAD:
                        live = live & (col[:, None] < F) & cm
                    tl.store(st + (n + 1) * (F + 1) * F + col[:, None] * F + rf[None, :], wn, mask=live)
        tl.debug_barrier()  # the new W is visible to every thread of the program


@triton.jit
def ttt_linear_out_kernel(XQ, XK, TOK, GATE, LNW, LNB, ZQ, GS, OUT, NH, L,
                          K: tl.constexpr, F: tl.constexpr, DT: tl.constexpr, FP: tl.constexpr):
    # One program per (sequence, head, mini-batch): the output rows from the
    # chain's Q W + b (ZQ) and G (GS). OUT may be ZQ (each element is read,
    # then written, by this program only).
    PAD: tl.constexpr = F != FP
    pid, n = tl.program_id(0), tl.program_id(1)
    h = pid % NH
    rk, rf = tl.arange(0, K), tl.arange(0, FP)
    cm = rf[None, :] < F
    row = pid * L * F + (n * K + rk) * F
    xo = row[:, None] + rf[None, :]
    q = _load(XQ + xo, cm, PAD)
    kt = _load(XK + row[None, :] + rf[:, None], rf[:, None] < F, PAD)  # [FP, K] = Kx^T
    g = tl.load(GATE + pid * L + n * K + rk).to(tl.float32)
    tok = tl.load(TOK + rk)
    lnw, lnb = _load(LNW + h * F + rf, rf < F, PAD)[None, :], _load(LNB + h * F + rf, rf < F, PAD)[None, :]
    G = _load(GS + xo, cm, PAD)
    # tril(eta * Q Kx^T) @ G + tril(eta) @ G in one product.
    m = tl.where(rk[:, None] >= rk[None, :], tok[:, None] * g[None, :] * (_mm(q, kt, DT) + 1.0), 0.0)
    zbar = _load(ZQ + xo, cm, PAD) - _mm(m, G, DT)
    _store(OUT + xo, q + _ln(zbar, lnw, lnb, F, cm, PAD), cm, PAD)


def _pow2(n: int) -> bool:
    return n >= 16 and n & (n - 1) == 0


def check_shapes(head_dim: int, mini_batch: int) -> str | None:
    """Why the kernels cannot run these sizes, or None. Any head dim runs
    (padded to a power of two inside the kernels); the mini-batch is the M
    dimension of every tl.dot and a tl.arange, unpadded, so it must be a
    power of two >= 16."""
    if head_dim < 1:
        return f"the triton kernel needs head_dim f >= 1, got {head_dim}"
    if not _pow2(mini_batch):
        return f"the triton kernel needs --mini-batch a power of two >= 16, got {mini_batch}"
    return None


# Linear kernel launch settings per dtype of the products: (num_warps, BC rows
# of W per product, num_stages), the fastest of a sweep of ttt_inner on an H100
# at 125m (docs/results/tuning.md#triton-ttt-linear-launch has the sweep).
# XBENCH_TRITON_WARPS/_BC/_STAGES override.
LINEAR_LAUNCH = {torch.float32: (4, 32, 2), torch.bfloat16: (4, 32, 2), torch.float16: (4, 32, 2)}


def _env_int(name: str, default: int) -> int:
    env = os.environ.get(name)
    return int(env) if env else default


def linear_launch(dtype: torch.dtype, fp: int) -> tuple:
    """(num_warps, BC, num_stages, out-kernel warps) at padded head dim fp."""
    nw, bc, st = LINEAR_LAUNCH[dtype]
    return (_env_int("XBENCH_TRITON_WARPS", nw), min(_env_int("XBENCH_TRITON_BC", bc), fp),
            _env_int("XBENCH_TRITON_STAGES", st), _env_int("XBENCH_TRITON_OUT_WARPS", 4))


def ttt_inner(xq, xk, xv, gate, p: dict, ttt_type: str, mini_batch: int, states=None):
    """Drop-in for the pytorch backend's model.ttt_inner: xq/xk/xv [B, nh, L, f]
    (rotated), gate [B, nh, L]; returns out [B, nh, L, f] in float32.

    states, for the backward (inner_bwd.py): float32 buffers the
    kernels fill with the inner state at the start of every mini-batch, laid
    out as the pytorch model's [W; b] stacks at the true f: linear
    ([B*nh, N, f+1, f],), mlp ([B*nh, N, f+1, 4f], [B*nh, N, 4f+1, f])."""
    B, nh, L, f = xq.shape
    K = mini_batch
    why = check_shapes(f, K)
    if why:
        raise xt.Unsupported(why)
    xq, xk, xv, gate = (t.contiguous() for t in (xq, xk, xv, gate))
    f32 = {k: v.float().contiguous() for k, v in p.items()}
    i = torch.arange(1, K + 1, device=xq.device, dtype=torch.float32)
    tok = (xs.BASE_LR[ttt_type] / f) * torch.relu(1.0 / i + f32["tok_delta"])
    out = torch.empty(xq.shape, device=xq.device, dtype=torch.float32)
    dt = DOT_DTYPES[xq.dtype]
    if ttt_type == "linear":
        fp = pow2_at_least_16(f)
        ws = torch.empty((B * nh, fp, fp), device=xq.device, dtype=torch.float32)
        gs = torch.empty(xq.shape, device=xq.device, dtype=torch.float32)
        nw, bc, st, onw = linear_launch(xq.dtype, fp)
        save = states[0] if states is not None else ws  # ws: a pointer that SAVE=False never writes
        # out holds Q W + b between the two kernels
        ttt_linear_kernel[(B * nh,)](xq, xk, xv, tok, gate, f32["W1"], f32["b1"], f32["ln_w"], f32["ln_b"], out, gs,
                                     ws, save, nh, L, L // K, K=K, F=f, BC=bc, DT=dt, FP=fp, SAVE=states is not None,
                                     num_warps=nw, num_stages=st)
        ttt_linear_out_kernel[(B * nh, L // K)](xq, xk, tok, gate, f32["ln_w"], f32["ln_b"], out, gs, out, nh, L,
                                                K=K, F=f, DT=dt, FP=fp, num_warps=onw)
    else:
        ttt_mlp(xq, xk, xv, gate, f32, tok, out, dt, states)
    return out
