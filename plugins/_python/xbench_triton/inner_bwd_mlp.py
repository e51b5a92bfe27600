"""The backward of the mlp inner loop (docs/ttt-backward.md, "The inner loop,
mlp"), split as the linear one (inner_bwd.py, which says why the
states are saved by the forward rather than recomputed). The mlp's state is
8x the linear's, 132 KB a mini-batch at f=64: 203 MB a layer at 125m (B=1,
L=2048), 2.4 GB for the 12 layers of a training step, and the carry buffers
of one layer's backward as much again; re-running the chain instead would
cost more than for the linear (its chain has eight times the arithmetic).

  1. ttt_mlp_bwd_pre_kernel, parallel over (sequence·head, mini-batch): the forward of
     the mini-batch from its saved state, then everything that does not need
     the carried (dW1', db1', dW2', db2'): dQ complete, dX's in-batch part,
     the in-batch parts of dG1, dG2 and dA1, dη (dgate, dtok), the output
     LayerNorm's dγ, dβ, and the carry's local terms [Q, 1]^T dZ1b and
     [A1b, 1]^T dZ2b;
  2. ttt_mlp_bwd_chain_kernel, one program per sequence·head, mini-batches in reverse:
     the update's terms, G1 = (G2 W2^T) ⊙ gelu'(Z1)'s backward, ℓ's backward,
     dA1, dZ1 and the carry, in two passes over the hidden chunks (ℓ's
     backward needs all of dG2, to which every chunk's dH W2 adds);
  3. ttt_mlp_bwd_post_kernel, parallel: dX += dZ1 W1^T - e ⊙ (G1 dW1'^T) - dV.

Every [K, 4f] quantity is taken HC hidden columns at a time, in loops that
are not unrolled (unrolled, the eight chunks' loads were hoisted together),
so the registers hold [K, HC] tiles, never [K, 4f] ones. No product contracts
over more than max(HC, BC, K) entries: an IEEE float32 tl.dot is FMA-based
and holds each thread's rows of A and columns of B over the whole
contraction, so products over f take their operands from global memory BC
columns at a time (inner_ops.mm_rows; dZ2b and dZ2 are parked there
for it). The chunks a later loop of the same program needs again (Z1,
G2 W2^T, Z1b) go through global buffers (L2) rather than being recomputed.
With 8 warps, ptxas reports no spills for sm_90 at f=64
(scripts/dev/triton/inner_bwd_compile_check.py).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from xbench_triton.inner_bwd import _env_int
from xbench_triton.inner_bwd import launch as lin_launch
from xbench_triton.inner_ops import gelu_fwd, ln_back, ln_l2_back, ln_l2_fwd, mm_rows, row_stats
from xbench_triton.model import GELU_C, _mm, _mma


@triton.jit
def ttt_mlp_bwd_pre_kernel(XQ, XK, XV, GATE, TOK, LNW, LNB, ST1, ST2, DO, DXQ, DXK, Z1S, HHS, Z1BS, Z2S, G2S, DG1S,
                           DG2S, DA1S, D1, D2, DGATE, DTOK, DLNW, DLNB, NH, L, N, K: tl.constexpr, F: tl.constexpr,
                           H: tl.constexpr, HC: tl.constexpr, BC: tl.constexpr, DT: tl.constexpr, C: tl.constexpr):
    pid, n = tl.program_id(0), tl.program_id(1)
    h = pid % NH
    rk, rf, rh = tl.arange(0, K), tl.arange(0, F), tl.arange(0, HC)
    row = pid.to(tl.int64) * L * F + (n * K + rk) * F
    rowh = pid.to(tl.int64) * L * H + (n * K + rk) * H  # rows of [B, nh, L, 4f] buffers
    xo = row[:, None] + rf[None, :]
    sn = pid.to(tl.int64) * N + n
    st1, st2 = ST1 + sn * (F + 1) * H, ST2 + sn * (H + 1) * F  # [W1; b1], [W2; b2]
    d1, d2 = D1 + (sn + pid) * (F + 1) * H, D2 + (sn + pid) * (H + 1) * F  # carry slots n
    q = tl.load(XQ + xo).to(tl.float32)
    k = tl.load(XK + xo).to(tl.float32)
    g = tl.load(GATE + pid.to(tl.int64) * L + n * K + rk).to(tl.float32)
    tok = tl.load(TOK + rk)
    lnw, lnb = tl.load(LNW + h * F + rf)[None, :], tl.load(LNB + h * F + rf)[None, :]
    b2 = tl.load(st2 + H * F + rf)[None, :]
    a1q = mm_rows(XQ, row, XK, row, 1, tl.zeros([K, K], tl.float32) + 1.0, F, BC, DT)  # Q_i·X_j + 1
    # Z1 = X W1 + b1, A1 = gelu(Z1), Z2 = A1 W2 + b2
    z2 = tl.zeros([K, F], tl.float32) + b2
    for c in range(H // HC):
        ch = c * HC + rh
        z1c = mm_rows(XK, row, st1, ch, H, tl.zeros([K, HC], tl.float32) + tl.load(st1 + F * H + ch)[None, :],
                      F, BC, DT)
        tl.store(Z1S + rowh[:, None] + ch[None, :], z1c)
        a1c, _, _ = gelu_fwd(z1c, C)
        z2 = _mma(a1c, tl.load(st2 + ch[:, None] * F + rf[None, :]), z2, DT)
    G2, _xh2, _rs2, _r2, _c2 = ln_l2_fwd(z2, tl.load(XV + xo).to(tl.float32) - k, lnw, lnb, F)  # (names: a later
    # loop's `_` would be taken for the same loop-carried variable)
    tl.store(Z2S + xo, z2)
    tl.store(G2S + xo, G2)
    causal = rk[:, None] >= rk[None, :]
    eta = tl.where(causal, tok[:, None] * g[None, :], 0.0)
    m1 = eta * a1q
    tl.debug_barrier()  # Z1S and G2S are read back below, by other threads
    # H = G2 W2^T, G1 = H ⊙ gelu'(Z1), Z1b = Q W1 + b1 - M1 G1, A1b = gelu(Z1b),
    # and the sums over hidden columns A1b A1^T, A1b W2 + b2
    s12 = tl.zeros([K, K], tl.float32)
    zw = tl.zeros([K, F], tl.float32) + b2
    for c in range(H // HC):
        ch = c * HC + rh
        ho = rowh[:, None] + ch[None, :]
        a1c, d1c, _ = gelu_fwd(tl.load(Z1S + ho), C)
        hhc = mm_rows(G2S, row, st2, ch * F, 1, tl.zeros([K, HC], tl.float32), F, BC, DT)  # W2[ch, :]^T
        tl.store(HHS + ho, hhc)
        z1bc = mm_rows(XQ, row, st1, ch, H, tl.load(st1 + F * H + ch)[None, :] - _mm(m1, hhc * d1c, DT), F, BC, DT)
        tl.store(Z1BS + ho, z1bc)
        a1bc, _, _ = gelu_fwd(z1bc, C)
        s12 = _mma(a1bc, tl.trans(a1c), s12, DT)
        zw = _mma(a1bc, tl.load(st2 + ch[:, None] * F + rf[None, :]), zw, DT)
    a2 = s12 + 1.0  # A1b_i·A1_j + 1
    m2 = eta * a2
    xhb, rsb = row_stats(zw - _mm(m2, G2, DT), F)  # Z2b's LayerNorm
    do = tl.load(DO + xo)
    tl.store(DLNW + sn * F + rf, tl.sum(do * xhb, axis=0))
    tl.store(DLNB + sn * F + rf, tl.sum(do, axis=0))
    dz2b = ln_back(xhb, rsb, do * lnw, F)
    tl.store(DXQ + xo, dz2b)  # parked in dQ's place (written last), read back in column chunks
    tl.store(DG2S + xo, -_mm(tl.trans(m2), dz2b, DT))
    tl.store(d2 + H * F + rf, tl.sum(dz2b, axis=0))
    tl.debug_barrier()  # dZ2b, HHS, Z1BS are read back below
    ndm2 = mm_rows(DXQ, row, G2S, row, 1, tl.zeros([K, K], tl.float32), F, BC, DT)  # dZ2b G2^T = -dM2
    deta = tl.where(causal, -ndm2 * a2, 0.0)
    p2 = -ndm2 * eta
    dq = tl.zeros([K, F], tl.float32)
    ndm1 = tl.zeros([K, K], tl.float32)  # dZ1b G1^T = -dM1, summed over hidden columns
    for c in range(H // HC):
        ch = c * HC + rh
        ho = rowh[:, None] + ch[None, :]
        a1c, d1c, _ = gelu_fwd(tl.load(Z1S + ho), C)
        a1bc, d1bc, _ = gelu_fwd(tl.load(Z1BS + ho), C)
        da1bc = mm_rows(DXQ, row, st2, ch * F, 1, _mm(p2, a1c, DT), F, BC, DT)  # dZ2b W2^T + P2 A1
        dz1bc = da1bc * d1bc
        tl.store(DA1S + ho, _mm(tl.trans(p2), a1bc, DT))
        tl.store(d2 + ch[:, None] * F + rf[None, :], _mm(tl.trans(a1bc), dz2b, DT))
        dq = _mma(dz1bc, tl.load(st1 + rf[None, :] * H + ch[:, None]), dq, DT)  # W1[:, ch]^T
        tl.store(d1 + rf[:, None] * H + ch[None, :], _mm(tl.trans(q), dz1bc, DT))
        tl.store(d1 + F * H + ch, tl.sum(dz1bc, axis=0))
        ndm1 = _mma(dz1bc, tl.trans(tl.load(HHS + ho) * d1c), ndm1, DT)
        tl.store(DG1S + ho, -_mm(tl.trans(m1), dz1bc, DT))
    deta += tl.where(causal, -ndm1 * a1q, 0.0)
    p1 = -ndm1 * eta
    tl.store(DGATE + pid.to(tl.int64) * L + n * K + rk, tl.sum(deta * tok[:, None], axis=0))
    tl.store(DTOK + sn * K + rk, tl.sum(deta * g[None, :], axis=1))
    tl.store(DXK + xo, _mm(tl.trans(p1), q, DT))
    tl.debug_barrier()  # every chunk of dZ2b is read before dQ takes its place
    tl.store(DXQ + xo, do + _mma(p1, k, dq, DT))


@triton.jit
def ttt_mlp_bwd_chain_kernel(XK, XV, GATE, TOK, LNW, LNB, ST2, Z1S, HHS, Z2S, G2S, DG1S, DG2S, DA1S, DHS, DZ1S, DZ2S,
                             D1, D2, DXV, DGATE, DLNW, DLNB, DTOK, NH, L, N, K: tl.constexpr, F: tl.constexpr,
                             H: tl.constexpr, HC: tl.constexpr, BC: tl.constexpr, DT: tl.constexpr, C: tl.constexpr):
    pid = tl.program_id(0)
    h = pid % NH
    rk, rf, rh = tl.arange(0, K), tl.arange(0, F), tl.arange(0, HC)
    lnw, lnb = tl.load(LNW + h * F + rf)[None, :], tl.load(LNB + h * F + rf)[None, :]
    tok_last = tl.load(TOK + K - 1)
    acc_lnw = tl.zeros([F], tl.float32)
    acc_lnb = tl.zeros([F], tl.float32)
    acc_tok = 0.0
    for i in range(N):
        n = N - 1 - i
        row = pid.to(tl.int64) * L * F + (n * K + rk) * F
        rowh = pid.to(tl.int64) * L * H + (n * K + rk) * H
        xo = row[:, None] + rf[None, :]
        sn = pid.to(tl.int64) * N + n
        st2 = ST2 + sn * (H + 1) * F
        cur1, cur2 = D1 + (sn + pid) * (F + 1) * H, D2 + (sn + pid) * (H + 1) * F  # in: local terms; out: carry
        nxt1, nxt2 = cur1 + (F + 1) * H, cur2 + (H + 1) * F  # dW1', db1', dW2', db2' (slot N is zero)
        x = tl.load(XK + xo).to(tl.float32)
        tgt = tl.load(XV + xo).to(tl.float32) - x
        g = tl.load(GATE + pid.to(tl.int64) * L + n * K + rk).to(tl.float32)
        e = (tok_last * g)[:, None]
        G2 = tl.load(G2S + xo)
        # pass A: the update's terms of dG1 (and dη), G1's backward, dH W2, A1 dW2'
        a1d2 = tl.zeros([K, F], tl.float32) + tl.load(nxt2 + H * F + rf)[None, :]  # A1 dW2' + db2'
        dhw2 = tl.zeros([K, F], tl.float32)
        deta = tl.zeros([K], tl.float32)
        for c in range(H // HC):
            ch = c * HC + rh
            ho = rowh[:, None] + ch[None, :]
            a1c, d1c, dd1c = gelu_fwd(tl.load(Z1S + ho), C)
            hhc = tl.load(HHS + ho)
            xd1c = mm_rows(XK, row, nxt1, ch, H, tl.zeros([K, HC], tl.float32) + tl.load(nxt1 + F * H + ch)[None, :],
                           F, BC, DT)  # X dW1' + db1'
            deta -= tl.sum(xd1c * hhc * d1c, axis=1)  # X_j dW1' G1_j^T + G1_j·db1'
            dg1c = tl.load(DG1S + ho) - e * xd1c
            dhc = dg1c * d1c
            tl.store(DHS + ho, dhc)
            tl.store(DZ1S + ho, dg1c * hhc * dd1c)  # dZ1's part through gelu'(Z1) in G1
            dhw2 = _mma(dhc, tl.load(st2 + ch[:, None] * F + rf[None, :]), dhw2, DT)
            a1d2 = _mma(a1c, tl.load(nxt2 + ch[:, None] * F + rf[None, :]), a1d2, DT)
        deta -= tl.sum(a1d2 * G2, axis=1)
        dgp = DGATE + pid.to(tl.int64) * L + n * K + rk  # kernel 1 wrote the in-batch part
        tl.store(dgp, tl.load(dgp) + deta * tok_last)
        acc_tok += tl.sum(deta * g)
        _g2, xh, rs, r, cc = ln_l2_fwd(tl.load(Z2S + xo), tgt, lnw, lnb, F)
        dz2, dt, dlw, dlb = ln_l2_back(tl.load(DG2S + xo) - e * a1d2 + dhw2, G2, xh, rs, r, cc, tgt, lnw, lnb, F)
        acc_lnw += dlw
        acc_lnb += dlb
        tl.store(DXV + xo, dt)
        tl.store(DZ2S + xo, dz2)
        tl.debug_barrier()  # DHS, DZ1S, DZ2S are read back by other threads
        # pass B: dA1, dZ1 and the carry, hidden chunk by chunk
        for c in range(H // HC):
            ch = c * HC + rh
            ho = rowh[:, None] + ch[None, :]
            a1c, d1c, _ = gelu_fwd(tl.load(Z1S + ho), C)
            # dA1 = (its in-batch part) - e ⊙ (G2 dW2'^T) + dZ2 W2^T
            da1c = mm_rows(G2S, row, nxt2, ch * F, 1, tl.zeros([K, HC], tl.float32), F, BC, DT)
            da1c = mm_rows(DZ2S, row, st2, ch * F, 1, tl.load(DA1S + ho) - e * da1c, F, BC, DT)
            dz1c = tl.load(DZ1S + ho) + da1c * d1c
            tl.store(DZ1S + ho, dz1c)
            o2 = ch[:, None] * F + rf[None, :]
            w2g = _mma(tl.trans(a1c), dz2, _mm(tl.trans(tl.load(DHS + ho)), G2, DT), DT)
            tl.store(cur2 + o2, tl.load(cur2 + o2) + tl.load(nxt2 + o2) + w2g)
            o1 = rf[:, None] * H + ch[None, :]
            tl.store(cur1 + o1, tl.load(cur1 + o1) + tl.load(nxt1 + o1) + _mm(tl.trans(x), dz1c, DT))
            ob = F * H + ch
            tl.store(cur1 + ob, tl.load(cur1 + ob) + tl.load(nxt1 + ob) + tl.sum(dz1c, axis=0))
        ob = H * F + rf
        tl.store(cur2 + ob, tl.load(cur2 + ob) + tl.load(nxt2 + ob) + tl.sum(dz2, axis=0))
        tl.debug_barrier()  # slot n is complete before the next step reads it as the carry
    tl.store(DLNW + pid * F + rf, acc_lnw)
    tl.store(DLNB + pid * F + rf, acc_lnb)
    tl.store(DTOK + pid, acc_tok)


@triton.jit
def ttt_mlp_bwd_post_kernel(GATE, TOK, ST1, D1, Z1S, HHS, DZ1S, DXV, DXK, L, N, K: tl.constexpr, F: tl.constexpr,
                            H: tl.constexpr, HC: tl.constexpr, DT: tl.constexpr, C: tl.constexpr):
    pid, n = tl.program_id(0), tl.program_id(1)
    rk, rf, rh = tl.arange(0, K), tl.arange(0, F), tl.arange(0, HC)
    row = pid.to(tl.int64) * L * F + (n * K + rk) * F
    rowh = pid.to(tl.int64) * L * H + (n * K + rk) * H
    xo = row[:, None] + rf[None, :]
    sn = pid.to(tl.int64) * N + n
    st1 = ST1 + sn * (F + 1) * H  # W1 of this mini-batch
    nxt1 = D1 + (sn + pid + 1) * (F + 1) * H  # dW1' of this mini-batch
    e = (tl.load(TOK + K - 1) * tl.load(GATE + pid.to(tl.int64) * L + n * K + rk).to(tl.float32))[:, None]
    dx = tl.load(DXK + xo) - tl.load(DXV + xo)
    for c in range(H // HC):
        ch = c * HC + rh
        ho = rowh[:, None] + ch[None, :]
        _, d1c, _ = gelu_fwd(tl.load(Z1S + ho), C)
        ot = rf[None, :] * H + ch[:, None]  # [HC, F]: columns ch of a [F, 4f] matrix, transposed
        dx = _mma(tl.load(DZ1S + ho), tl.load(st1 + ot), dx, DT)
        dx = _mma(-e * tl.load(HHS + ho) * d1c, tl.load(nxt1 + ot), dx, DT)
    tl.store(DXK + xo, dx)


def launch(f: int) -> tuple:
    """(num_warps, HC hidden columns per chunk, BC contraction entries per
    product); not yet timed on a GPU. 8 warps: from ptxas's report for sm_90
    at f=64 (scripts/dev/triton/inner_bwd_compile_check.py), the pre and chain kernels spilled
    680 and 76 B with 4 warps (HC 16: 480 and 0; BC 16: 620 and 140) and
    nothing with 8. XBENCH_TRITON_BWD_WARPS/_HC/_BC override."""
    _, bc = lin_launch(f)
    return _env_int("XBENCH_TRITON_BWD_WARPS", 8), min(_env_int("XBENCH_TRITON_BWD_HC", 32), 4 * f), bc


def backward(xq, xk, xv, gate, tok, ln_w, ln_b, states, dout, K: int, dt, hidden: int) -> dict:
    """The three kernels for one layer (arguments as inner_bwd.backward;
    states ([B*nh, N, f+1, 4f], [B*nh, N, 4f+1, f]))."""
    B, nh, L, f = xq.shape
    N, BH, H = L // K, B * nh, hidden
    dev, f32 = xq.device, torch.float32
    nw, hc, bc = launch(f)

    def buf(*shape):
        return torch.empty(shape, device=dev, dtype=f32)

    dxq, dxk, dxv, z2s, g2s, dg2s, dz2s = (buf(B, nh, L, f) for _ in range(7))
    z1s, hhs, z1bs, dg1s, da1s, dhs, dz1s = (buf(B, nh, L, H) for _ in range(7))
    d1, d2 = buf(BH, N + 1, f + 1, H), buf(BH, N + 1, H + 1, f)
    d1[:, N].zero_()
    d2[:, N].zero_()
    dgate, dtok = buf(B, nh, L), buf(BH, N, K)
    dlnw, dlnb, clnw, clnb, ctok = buf(BH, N, f), buf(BH, N, f), buf(BH, f), buf(BH, f), buf(BH)
    kw = dict(K=K, F=f, H=H, HC=hc, DT=dt, C=GELU_C, num_warps=nw)
    ttt_mlp_bwd_pre_kernel[(BH, N)](xq, xk, xv, gate, tok, ln_w, ln_b, *states, dout, dxq, dxk, z1s, hhs, z1bs, z2s,
                                    g2s, dg1s, dg2s, da1s, d1, d2, dgate, dtok, dlnw, dlnb, nh, L, N, BC=bc, **kw)
    ttt_mlp_bwd_chain_kernel[(BH,)](xk, xv, gate, tok, ln_w, ln_b, states[1], z1s, hhs, z2s, g2s, dg1s, dg2s, da1s,
                                    dhs, dz1s, dz2s, d1, d2, dxv, dgate, clnw, clnb, ctok, nh, L, N, BC=bc, **kw)
    ttt_mlp_bwd_post_kernel[(BH, N)](gate, tok, states[0], d1, z1s, hhs, dz1s, dxv, dxk, L, N, **kw)
    dtok = dtok.sum((0, 1))
    dtok[K - 1] += ctok.sum()
    return {"xq": dxq, "xk": dxk, "xv": dxv, "gate": dgate, "Wb": (d1[:, 0], d2[:, 0]), "tok": dtok,
            "ln_w": dlnw.sum(1) + clnw, "ln_b": dlnb.sum(1) + clnb}
