"""The backward of the TTT inner loop (spec steps 3-5) in Triton: the linear
kernels here, the mlp ones in inner_bwd_mlp.py, the autograd Function
that joins them to model.py's forward in inner_fn.py. Every formula
is docs/ttt-backward.md's ("The inner loop, linear"); names follow it.

The state at the start of every mini-batch is saved by the forward
(model.ttt_inner(states=...)), not recomputed here. At 125m (B=1,
nh=12, f=64, K=16, L=2048) the forward's serial chain has 12 programs for
132 SMs and is latency-bound (0.71 ms of a layer's inner loop); re-running it
in the backward would add that whole chain again, while saving costs a 16.6
KB store per mini-batch that the chain does not wait for (25 MB a layer,
~8 us of HBM bandwidth). With the states saved, all of the backward that does
not depend on the carried gradient (dW', db') runs parallel over mini-batches,
and only what does stays serial. Three kernels, as the forward's split:

  1. ttt_linear_bwd_pre_kernel, one program per (sequence·head, mini-batch): Z, G, Zb
     from the saved state; steps 1-2 (dQ complete, dX's in-batch part, dG's
     in-batch part -M^T dZb, dη and from it dgate/dtok, dγ/dβ of the output
     LayerNorm) and the carry's local term [Q, 1]^T dZb;
  2. ttt_linear_bwd_chain_kernel, one program per sequence·head, mini-batches in
     reverse: only what needs (dW', db'): dG -= e(X dW' + db'), the update's
     dη[K-1, :], the backward of ℓ (dZ, dV, dγ, dβ), and the carry
     (dW, db) = (dW', db') + [Q, 1]^T dZb + [X, 1]^T dZ: two K x f x f
     products a step, as many as the forward's chain;
  3. ttt_linear_bwd_post_kernel, parallel again: dX += dZ W^T - e ⊙ (G dW'^T) - dV.

The carry lives in a buffer DST [B·nh, N+1, f+1, f] (slot n: kernel 1 writes
the local term there, kernel 2 replaces it by the gradient with respect to the
state at the start of mini-batch n; slot N is zero), so kernel 2 keeps no
scratch and kernel 3 finds every dW' it needs. No product contracts over
more than BC (or K) entries, for the forward's reason: an IEEE float32 tl.dot
is FMA-based and holds each thread's rows of A and columns of B over the whole
contraction, so products over f take BC-column chunks of their operands from
global memory (L1/L2); kernel 1 parks dZb in dQ's place to read it back so.
ptxas reports no spills for sm_90 at f=64 (scripts/dev/triton/inner_bwd_compile_check.py; before
the chunking kernel 1 spilled 2.8 KB).
"""

from __future__ import annotations

import os

import torch
import triton
import triton.language as tl

from xbench_triton.inner_ops import ln_back, ln_l2_back, ln_l2_fwd, row_stats
from xbench_triton.model import _mm, _mma


@triton.jit
def ttt_linear_bwd_pre_kernel(XQ, XK, XV, GATE, TOK, LNW, LNB, ST, DO, DXQ, DXK, ZS, GS, DGS, DST, DGATE, DTOK, DLNW,
                              DLNB, NH, L, N, K: tl.constexpr, F: tl.constexpr, BC: tl.constexpr, DT: tl.constexpr):
    # Every product contracts over at most BC or K entries: an IEEE float32
    # tl.dot is FMA-based and holds each thread's rows of A and columns of B
    # over the whole contraction, so a contraction of f=64 spilled (ptxas,
    # sm_90: 2.8 KB). Operands wider than that come from global memory in
    # BC-column chunks: dZb is parked in DXQ (dQ's place, written last).
    pid, n = tl.program_id(0), tl.program_id(1)
    h = pid % NH
    rk, rf, rc = tl.arange(0, K), tl.arange(0, F), tl.arange(0, BC)
    row = pid.to(tl.int64) * L * F + (n * K + rk) * F  # [K] offsets of this mini-batch's rows
    xo = row[:, None] + rf[None, :]
    sn = pid.to(tl.int64) * N + n  # this mini-batch's index in [B*nh, N, ...] buffers
    st = ST + sn * (F + 1) * F  # the forward's saved state, [W; b]
    dst = DST + (sn + pid) * (F + 1) * F  # slot n of [B*nh, N+1, F+1, F]
    b = tl.load(st + F * F + rf)[None, :]
    z = tl.zeros([K, F], tl.float32) + b
    zq = tl.zeros([K, F], tl.float32) + b
    a1 = tl.zeros([K, K], tl.float32) + 1.0  # Q_i·X_j + 1
    for c in tl.static_range(F // BC):
        col = c * BC + rc
        wc = tl.load(st + col[:, None] * F + rf[None, :])  # [BC, F]
        kc = tl.load(XK + row[:, None] + col[None, :]).to(tl.float32)
        qc = tl.load(XQ + row[:, None] + col[None, :]).to(tl.float32)
        z = _mma(kc, wc, z, DT)
        zq = _mma(qc, wc, zq, DT)
        a1 = _mma(qc, tl.trans(kc), a1, DT)
    k = tl.load(XK + xo).to(tl.float32)
    g = tl.load(GATE + pid.to(tl.int64) * L + n * K + rk).to(tl.float32)
    tok = tl.load(TOK + rk)
    lnw, lnb = tl.load(LNW + h * F + rf)[None, :], tl.load(LNB + h * F + rf)[None, :]
    G, _, _, _, _ = ln_l2_fwd(z, tl.load(XV + xo).to(tl.float32) - k, lnw, lnb, F)
    tl.store(ZS + xo, z)
    tl.store(GS + xo, G)
    causal = rk[:, None] >= rk[None, :]
    eta = tl.where(causal, tok[:, None] * g[None, :], 0.0)
    m = eta * a1
    xhb, rsb = row_stats(zq - _mm(m, G, DT), F)  # Zb's LayerNorm
    do = tl.load(DO + xo)
    tl.store(DLNW + sn * F + rf, tl.sum(do * xhb, axis=0))
    tl.store(DLNB + sn * F + rf, tl.sum(do, axis=0))
    dzb = ln_back(xhb, rsb, do * lnw, F)
    tl.store(DXQ + xo, dzb)
    tl.store(DGS + xo, -_mm(tl.trans(m), dzb, DT))
    # the carry's local term [Q, 1]^T dZb, BC rows at a time
    for c in tl.static_range(F // BC):
        col = c * BC + rc
        qt = tl.load(XQ + row[None, :] + col[:, None]).to(tl.float32)  # [BC, K] = Q[:, col]^T
        tl.store(dst + col[:, None] * F + rf[None, :], _mm(qt, dzb, DT))
    tl.store(dst + F * F + rf, tl.sum(dzb, axis=0))
    tl.debug_barrier()  # dZb and G are read back in column chunks, by other threads
    ndm = tl.zeros([K, K], tl.float32)  # dZb G^T = -dM
    dq = tl.zeros([K, F], tl.float32)  # dZb W^T
    for c in tl.static_range(F // BC):
        col = c * BC + rc
        dzc = tl.load(DXQ + row[:, None] + col[None, :])
        ndm = _mma(dzc, tl.trans(tl.load(GS + row[:, None] + col[None, :])), ndm, DT)
        dq = _mma(dzc, tl.load(st + rf[None, :] * F + col[:, None]), dq, DT)  # [BC, F] = W[:, col]^T
    deta = tl.where(causal, -ndm * a1, 0.0)
    p = -ndm * eta  # zero above the diagonal, where eta is
    # dη -> the learning rates: η[i, j] = tok[i]·gate[j] (tok scaled by base_lr/f)
    tl.store(DGATE + pid.to(tl.int64) * L + n * K + rk, tl.sum(deta * tok[:, None], axis=0))
    tl.store(DTOK + sn * K + rk, tl.sum(deta * g[None, :], axis=1))
    tl.store(DXK + xo, _mm(tl.trans(p), tl.load(XQ + xo).to(tl.float32), DT))
    tl.debug_barrier()  # every chunk of dZb is read before dQ takes its place
    tl.store(DXQ + xo, do + _mma(p, k, dq, DT))


@triton.jit
def ttt_linear_bwd_chain_kernel(XK, XV, GATE, TOK, LNW, LNB, ZS, GS, DGS, DST, DXV, DZS, DGATE, DLNW, DLNB, DTOK, NH,
                                L, N, K: tl.constexpr, F: tl.constexpr, BC: tl.constexpr, DT: tl.constexpr):
    pid = tl.program_id(0)
    h = pid % NH
    rk, rf, rc = tl.arange(0, K), tl.arange(0, F), tl.arange(0, BC)
    lnw, lnb = tl.load(LNW + h * F + rf)[None, :], tl.load(LNB + h * F + rf)[None, :]
    tok_last = tl.load(TOK + K - 1)
    db = tl.zeros([1, F], tl.float32)  # db', the carry's bias row, also kept in registers
    acc_lnw = tl.zeros([F], tl.float32)
    acc_lnb = tl.zeros([F], tl.float32)
    acc_tok = 0.0
    for i in range(N):
        n = N - 1 - i
        row = pid.to(tl.int64) * L * F + (n * K + rk) * F
        xo = row[:, None] + rf[None, :]
        cur = DST + (pid.to(tl.int64) * (N + 1) + n) * (F + 1) * F  # in: [Q,1]^T dZb; out: dW, db
        nxt = cur + (F + 1) * F  # dW', db' (slot N is zero)
        xd = tl.zeros([K, F], tl.float32) + db  # X dW' + db'
        for c in tl.static_range(F // BC):
            col = c * BC + rc
            kc = tl.load(XK + row[:, None] + col[None, :]).to(tl.float32)
            xd = _mma(kc, tl.load(nxt + col[:, None] * F + rf[None, :]), xd, DT)
        k = tl.load(XK + xo).to(tl.float32)
        tgt = tl.load(XV + xo).to(tl.float32) - k
        G = tl.load(GS + xo)
        g = tl.load(GATE + pid.to(tl.int64) * L + n * K + rk).to(tl.float32)
        # the update W' = W - X^T diag(e) G, b' = b - G^T e (step 3), e = η[K-1, :]
        dG = tl.load(DGS + xo) - (tok_last * g)[:, None] * xd
        deta = -tl.sum(xd * G, axis=1)  # dη[K-1, j]
        dgp = DGATE + pid.to(tl.int64) * L + n * K + rk  # kernel 1 wrote the in-batch part
        tl.store(dgp, tl.load(dgp) + deta * tok_last)
        acc_tok += tl.sum(deta * g)
        _, xh, rs, r, cc = ln_l2_fwd(tl.load(ZS + xo), tgt, lnw, lnb, F)
        dz, dt, dlw, dlb = ln_l2_back(dG, G, xh, rs, r, cc, tgt, lnw, lnb, F)
        acc_lnw += dlw
        acc_lnb += dlb
        tl.store(DXV + xo, dt)
        tl.store(DZS + xo, dz)
        db = db + tl.load(cur + F * F + rf)[None, :] + tl.sum(dz, axis=0)[None, :]
        for c in tl.static_range(F // BC):
            col = c * BC + rc
            kt = tl.load(XK + row[None, :] + col[:, None]).to(tl.float32)  # [BC, K] = X[:, col]^T
            wo = col[:, None] * F + rf[None, :]
            tl.store(cur + wo, tl.load(cur + wo) + tl.load(nxt + wo) + _mm(kt, dz, DT))
        tl.store(cur + F * F + rf[None, :], db)
        tl.debug_barrier()  # slot n is complete before the next step reads it as dW'
    tl.store(DLNW + pid * F + rf, acc_lnw)
    tl.store(DLNB + pid * F + rf, acc_lnb)
    tl.store(DTOK + pid, acc_tok)


@triton.jit
def ttt_linear_bwd_post_kernel(GATE, TOK, ST, DST, GS, DZS, DXV, DXK, L, N, K: tl.constexpr, F: tl.constexpr,
                               BC: tl.constexpr, DT: tl.constexpr):
    # Products contract over BC columns at a time (see ttt_linear_bwd_pre_kernel).
    pid, n = tl.program_id(0), tl.program_id(1)
    rk, rf, rc = tl.arange(0, K), tl.arange(0, F), tl.arange(0, BC)
    row = pid.to(tl.int64) * L * F + (n * K + rk) * F
    xo = row[:, None] + rf[None, :]
    st = ST + (pid.to(tl.int64) * N + n) * (F + 1) * F  # W of this mini-batch
    nxt = DST + (pid.to(tl.int64) * (N + 1) + n + 1) * (F + 1) * F  # dW' of this mini-batch
    e = tl.load(TOK + K - 1) * tl.load(GATE + pid.to(tl.int64) * L + n * K + rk).to(tl.float32)
    dx = tl.zeros([K, F], tl.float32)
    for c in tl.static_range(F // BC):
        col = c * BC + rc
        co = row[:, None] + col[None, :]
        ot = rf[None, :] * F + col[:, None]  # [BC, F]: columns col of an f x f matrix, transposed
        dx = _mma(tl.load(DZS + co), tl.load(st + ot), dx, DT)
        dx = _mma(-e[:, None] * tl.load(GS + co), tl.load(nxt + ot), dx, DT)
    tl.store(DXK + xo, tl.load(DXK + xo) - tl.load(DXV + xo) + dx)


# Launch settings (num_warps, BC rows of an f x f matrix per product). Not yet
# timed on a GPU: the forward's linear chain was fastest with (4, 32), and the
# backward's chain has the same products. XBENCH_TRITON_BWD_WARPS/_BC override.
def launch(f: int) -> tuple:
    return (_env_int("XBENCH_TRITON_BWD_WARPS", 4), min(_env_int("XBENCH_TRITON_BWD_BC", 32), f))


def _env_int(name: str, default: int) -> int:
    env = os.environ.get(name)
    return int(env) if env else default


def backward(xq, xk, xv, gate, tok, ln_w, ln_b, states, dout, K: int, dt) -> dict:
    """The three kernels for one layer. Inputs contiguous: xq/xk/xv [B, nh, L, f]
    (the forward's), gate [B, nh, L], tok [K] = base_lr/f·tok (float32), ln_w,
    ln_b [nh, f] float32, states the forward's ([B*nh, N, f+1, f],), dout
    [B, nh, L, f] float32; dt the products' tl dtype. Returns float32 grads:
    xq, xk, xv, gate, and per sequence·head (summed by the caller) Wb [B*nh, f+1, f],
    ln_w, ln_b [B*nh, f], tok [K]."""
    B, nh, L, f = xq.shape
    N, BH = L // K, B * nh
    dev, f32 = xq.device, torch.float32
    nw, bc = launch(f)
    act = lambda: torch.empty((B, nh, L, f), device=dev, dtype=f32)  # noqa: E731
    dxq, dxk, dxv, zs, gs, dgs, dzs = (act() for _ in range(7))
    dst = torch.empty((BH, N + 1, f + 1, f), device=dev, dtype=f32)
    dst[:, N].zero_()
    dgate = torch.empty((B, nh, L), device=dev, dtype=f32)
    dtok = torch.empty((BH, N, K), device=dev, dtype=f32)
    dlnw, dlnb = (torch.empty((BH, N, f), device=dev, dtype=f32) for _ in range(2))
    clnw, clnb = (torch.empty((BH, f), device=dev, dtype=f32) for _ in range(2))
    ctok = torch.empty((BH,), device=dev, dtype=f32)
    kw = dict(K=K, F=f, BC=bc, DT=dt, num_warps=nw)
    ttt_linear_bwd_pre_kernel[(BH, N)](xq, xk, xv, gate, tok, ln_w, ln_b, states[0], dout, dxq, dxk, zs, gs, dgs, dst,
                                       dgate, dtok, dlnw, dlnb, nh, L, N, **kw)
    ttt_linear_bwd_chain_kernel[(BH,)](xk, xv, gate, tok, ln_w, ln_b, zs, gs, dgs, dst, dxv, dzs, dgate, clnw, clnb,
                                       ctok, nh, L, N, **kw)
    ttt_linear_bwd_post_kernel[(BH, N)](gate, tok, states[0], dst, gs, dzs, dxv, dxk, L, N, **kw)
    dtok = dtok.sum((0, 1))
    dtok[K - 1] += ctok.sum()
    return {"xq": dxq, "xk": dxk, "xv": dxv, "gate": dgate, "Wb": (dst[:, 0],), "tok": dtok,
            "ln_w": dlnw.sum(1) + clnw, "ln_b": dlnb.sum(1) + clnb}
