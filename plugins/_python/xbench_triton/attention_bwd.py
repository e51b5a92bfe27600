"""Flash attention backward (see attention.py for the definition, the
precision and the tuning): dq, dk, dv of sum(out * dout), written from the
FlashAttention-2 paper (Dao 2023, Algorithm 2), in three kernels:
  1. _delta_kernel: delta_i = sum_d dout[i, d] * out[i, d] (float32), the
     rowsum(dP * P) term of the softmax gradient, once per row;
  2. _dkdv_kernel: one program per (BLOCK_N kv rows, batch*kv head); k, v and
     the float32 dk, dv accumulators stay while the program walks, for each
     query head sharing this kv head (GQA: the sum over the group happens in
     registers, no atomics), the query rows BLOCK_M at a time, recomputing
     P^T = exp2(K Q^T * scale*log2 e - lse*log2 e) from the saved lse:
        dV += P^T dO,  dS^T = P^T * (V dO^T - delta),  dK += dS^T Q;
     dK is scaled by 1/sqrt(D) once at the end;
  3. _dq_kernel: one program per (BLOCK_M query rows, batch*head), the forward's
     walk over the keys: dS = P * (dO V^T - delta), dQ += dS K.
dq in its own kernel (not atomically added from kernel 2) keeps every sum in a
fixed order: the gradients are deterministic, run to run, for a given config
(two processes whose autotuners pick different block sizes sum in different
orders).
Masking: query blocks entirely above the causal diagonal of a kv block are not
visited (and kv blocks above the diagonal of a query block, as in the forward);
the causal mask is applied only in the blocks that straddle the diagonal.
Padded query rows (>= S) load lse = +inf, so their P is exactly 0 without a
mask; so do rows that see no key (lse = -inf from the forward, S > KV causal).
Padded kv rows (>= KV) in kernel 2 only produce dk/dv rows that are not stored.
"""

from __future__ import annotations

import math

import torch
import triton
import triton.language as tl

from xbench_triton.attention import DOT_DTYPES, INTERPRET, LOG2E, _dot, _mma, _rows_dot, check, chunk, kv_range
from xbench_triton.attention_cfg import CPU_CONFIGS, all_configs, pruner


@triton.jit
def _delta_kernel(O, DO, DELTA, S, D: tl.constexpr, BLOCK_M: tl.constexpr):
    bh = tl.program_id(1).to(tl.int64)
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs = bh * S * D + rm[:, None] * D + tl.arange(0, D)[None, :]
    o = tl.load(O + offs, mask=rm[:, None] < S, other=0.0).to(tl.float32)
    do = tl.load(DO + offs, mask=rm[:, None] < S, other=0.0).to(tl.float32)
    tl.store(DELTA + bh * S + rm, tl.sum(o * do, 1), mask=rm < S)


@triton.jit
def _lse2(LSE, rows, S):
    # lse in log2 units; +inf for padded rows and for rows with no visible key
    # (-inf), so that exp2(s - lse2) is 0 for them.
    lse = tl.load(LSE + rows, mask=rows < S, other=float("inf")) * 1.4426950408889634
    return tl.where(lse == float("-inf"), float("inf"), lse)


@triton.jit
def _dkdv_blocks(dk, dv, k, v, kb, vb, rn, qb, dob, lb, db, lo, hi, S, KV, qk_scale,
                 MASK: tl.constexpr, D: tl.constexpr, DT: tl.constexpr, BLOCK_M: tl.constexpr, CHUNK: tl.constexpr):
    # CHUNK: float32 D-contracted products in D-column steps (attention._rows_dot).
    rd = tl.arange(0, D)
    OFF = KV - S
    for m0 in range(lo, hi, BLOCK_M):
        rm = m0 + tl.arange(0, BLOCK_M)
        qt = tl.load(qb + rm[None, :] * D + rd[:, None], mask=rm[None, :] < S, other=0.0)  # [D, BM]
        do = tl.load(dob + rm[:, None] * D + rd[None, :], mask=rm[:, None] < S, other=0.0)  # [BM, D]
        lse2 = _lse2(lb, rm, S)
        delta = tl.load(db + rm, mask=rm < S, other=0.0)
        # V dO^T: in the CHUNK path before dV's product, in the other after it:
        # the orders that compiled without spills (ptxas, sm_90: the float32
        # D64 configs spilled 200-500 B of stack with V dO^T after dV's product).
        if CHUNK:
            kq = _rows_dot(kb, rn, KV, qb, rm, S, D, CHUNK)
            vdo = _rows_dot(vb, rn, KV, dob, rm, S, D, CHUNK)
        else:
            kq = _dot(k, qt, DT)
        pt = tl.exp2(kq * qk_scale - lse2[None, :])  # P^T [BN, BM]
        if MASK:  # causal: key j is seen by query i when j <= i + OFF
            pt = tl.where(rn[:, None] <= rm[None, :] + OFF, pt, 0.0)
        dv = _mma(pt, do, dv, DT)
        if CHUNK == 0:
            vdo = _dot(v, tl.trans(do), DT)
        dst = pt * (vdo - delta[None, :])  # dS^T [BN, BM]
        dk = _mma(dst, tl.trans(qt), dk, DT)
    return dk, dv


@triton.jit
def _dkdv_kernel(Q, K, V, DO, LSE, DELTA, DK, DV, H, GROUP, S, KV, qk_scale, sm_scale,
                 CAUSAL: tl.constexpr, D: tl.constexpr, DT: tl.constexpr, CHUNK: tl.constexpr,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    nb = tl.program_id(0)
    bkv = tl.program_id(1).to(tl.int64)  # b * KH + kv head
    KH = H // GROUP
    b, kvh = bkv // KH, bkv % KH
    rn = nb * BLOCK_N + tl.arange(0, BLOCK_N)
    rd = tl.arange(0, D)
    kvo = bkv * KV * D + rn[:, None] * D + rd[None, :]
    k = tl.load(K + kvo, mask=rn[:, None] < KV, other=0.0)
    v = tl.load(V + kvo, mask=rn[:, None] < KV, other=0.0)
    kb, vb = K + bkv * KV * D, V + bkv * KV * D
    dk = tl.zeros((BLOCK_N, D), dtype=tl.float32)
    dv = tl.zeros((BLOCK_N, D), dtype=tl.float32)
    OFF = KV - S
    if CAUSAL:
        # Query rows < n0 - OFF see no key of this block; from row n0 + BN - 1 - OFF
        # on, every row sees all of them.
        lo = tl.maximum(nb * BLOCK_N - OFF, 0) // BLOCK_M * BLOCK_M
        full = tl.minimum(tl.cdiv(tl.maximum(nb * BLOCK_N + BLOCK_N - 1 - OFF, 0), BLOCK_M) * BLOCK_M,
                          tl.cdiv(S, BLOCK_M) * BLOCK_M)
        lo = tl.minimum(lo, full)
    else:
        lo = 0
        full = 0
    for g in range(GROUP):
        bh = b * H + kvh * GROUP + g
        qb, dob, lb, db = Q + bh * S * D, DO + bh * S * D, LSE + bh * S, DELTA + bh * S
        dk, dv = _dkdv_blocks(dk, dv, k, v, kb, vb, rn, qb, dob, lb, db, lo, full, S, KV, qk_scale,
                              True, D, DT, BLOCK_M, CHUNK)
        dk, dv = _dkdv_blocks(dk, dv, k, v, kb, vb, rn, qb, dob, lb, db, full, S, S, KV, qk_scale,
                              False, D, DT, BLOCK_M, CHUNK)
    tl.store(DK + kvo, (dk * sm_scale).to(DK.dtype.element_ty), mask=rn[:, None] < KV)
    tl.store(DV + kvo, dv.to(DV.dtype.element_ty), mask=rn[:, None] < KV)


@triton.jit
def _dq_blocks(dq, q, do, lse2, delta, qb, dob, kb, vb, rm, lo, hi, S, KV, qk_scale,
               MASK: tl.constexpr, CAUSAL: tl.constexpr, D: tl.constexpr, DT: tl.constexpr,
               BLOCK_N: tl.constexpr, CHUNK: tl.constexpr):
    rd = tl.arange(0, D)
    OFF = KV - S
    for n0 in range(lo, hi, BLOCK_N):
        rn = n0 + tl.arange(0, BLOCK_N)
        if MASK:
            kt = tl.load(kb + rn[None, :] * D + rd[:, None], mask=rn[None, :] < KV, other=0.0)  # [D, BN]
            vt = tl.load(vb + rn[None, :] * D + rd[:, None], mask=rn[None, :] < KV, other=0.0)
        else:
            kt = tl.load(kb + rn[None, :] * D + rd[:, None])
            vt = tl.load(vb + rn[None, :] * D + rd[:, None])
        if CHUNK:
            qk = _rows_dot(qb, rm, S, kb, rn, KV, D, CHUNK)
        else:
            qk = _dot(q, kt, DT)
        p = tl.exp2(qk * qk_scale - lse2[:, None])  # [BM, BN]
        if MASK:
            keep = rn[None, :] < KV
            if CAUSAL:
                keep = keep & (rn[None, :] <= rm[:, None] + OFF)
            p = tl.where(keep, p, 0.0)
        if CHUNK:
            dov = _rows_dot(dob, rm, S, vb, rn, KV, D, CHUNK)
        else:
            dov = _dot(do, vt, DT)
        ds = p * (dov - delta[:, None])
        dq = _mma(ds, tl.trans(kt), dq, DT)
    return dq


@triton.jit
def _dq_kernel(Q, K, V, DO, LSE, DELTA, DQ, H, GROUP, S, KV, qk_scale, sm_scale,
               CAUSAL: tl.constexpr, D: tl.constexpr, DT: tl.constexpr, CHUNK: tl.constexpr,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    mb = tl.program_id(0)
    if CAUSAL:  # the last query blocks see the most keys: start them first
        mb = tl.num_programs(0) - 1 - mb
    bh = tl.program_id(1).to(tl.int64)
    bkv = (bh // H) * (H // GROUP) + (bh % H) // GROUP
    rm = mb * BLOCK_M + tl.arange(0, BLOCK_M)
    rd = tl.arange(0, D)
    qo = bh * S * D + rm[:, None] * D + rd[None, :]
    q = tl.load(Q + qo, mask=rm[:, None] < S, other=0.0)
    do = tl.load(DO + qo, mask=rm[:, None] < S, other=0.0)
    lse2 = _lse2(LSE + bh * S, rm, S)
    delta = tl.load(DELTA + bh * S + rm, mask=rm < S, other=0.0)
    kb, vb = K + bkv * KV * D, V + bkv * KV * D
    dq = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    full, hi = kv_range(mb, S, KV, CAUSAL, BLOCK_M, BLOCK_N)
    qb, dob = Q + bh * S * D, DO + bh * S * D
    dq = _dq_blocks(dq, q, do, lse2, delta, qb, dob, kb, vb, rm, 0, full, S, KV, qk_scale,
                    False, CAUSAL, D, DT, BLOCK_N, CHUNK)
    dq = _dq_blocks(dq, q, do, lse2, delta, qb, dob, kb, vb, rm, full, hi, S, KV, qk_scale,
                    True, CAUSAL, D, DT, BLOCK_N, CHUNK)
    tl.store(DQ + qo, (dq * sm_scale).to(DQ.dtype.element_ty), mask=rm[:, None] < S)


_KEY = ["S", "KV", "D", "CAUSAL"]
_dkdv_tuned = triton.autotune(configs=all_configs("dkdv"), key=_KEY,
                              prune_configs_by={"early_config_prune": pruner("dkdv")})(_dkdv_kernel)
_dq_tuned = triton.autotune(configs=all_configs("dq"), key=_KEY,
                            prune_configs_by={"early_config_prune": pruner("dq")})(_dq_kernel)


def backward(q, k, v, out, lse, dout, causal: bool):
    """(dq, dk, dv) in the inputs' dtype; see attention.backward."""
    check(q, k, v)
    if out.shape != q.shape or dout.shape != q.shape or lse.shape != q.shape[:3]:
        raise ValueError(f"triton attention backward: out {tuple(out.shape)}, dout {tuple(dout.shape)}, "
                         f"lse {tuple(lse.shape)} do not match q {tuple(q.shape)}")
    q, k, v, out, dout = (t.contiguous() for t in (q, k, v, out, dout))
    lse = lse.float().contiguous()
    dout = dout.to(q.dtype)
    B, H, S, D = q.shape
    KH, KV = k.shape[1], k.shape[2]
    delta = torch.empty((B, H, S), device=q.device, dtype=torch.float32)
    dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    bm_delta = 32 if INTERPRET else max(16, min(128, 8192 // D))  # <= 8K elements a tile
    _delta_kernel[(triton.cdiv(S, bm_delta), B * H)](out, dout, delta, S, D=D, BLOCK_M=bm_delta)
    sm_scale = 1.0 / math.sqrt(D)
    common = (H, H // KH, S, KV, LOG2E * sm_scale, sm_scale)
    kw = dict(CAUSAL=bool(causal), D=D, DT=DOT_DTYPES[q.dtype], CHUNK=chunk(q.dtype, D))
    if INTERPRET:
        bm, bn = CPU_CONFIGS["dkdv"]
        _dkdv_kernel[(triton.cdiv(KV, bn), B * KH)](q, k, v, dout, lse, delta, dk, dv, *common, **kw,
                                                    BLOCK_M=bm, BLOCK_N=bn)
        bm, bn = CPU_CONFIGS["dq"]
        _dq_kernel[(triton.cdiv(S, bm), B * H)](q, k, v, dout, lse, delta, dq, *common, **kw,
                                                BLOCK_M=bm, BLOCK_N=bn)
    else:
        _dkdv_tuned[lambda m: (triton.cdiv(KV, m["BLOCK_N"]), B * KH)](q, k, v, dout, lse, delta, dk, dv,
                                                                       *common, **kw)
        _dq_tuned[lambda m: (triton.cdiv(S, m["BLOCK_M"]), B * H)](q, k, v, dout, lse, delta, dq, *common, **kw)
    return dq, dk, dv
