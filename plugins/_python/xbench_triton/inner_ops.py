"""Row-wise pieces shared by the inner loop's backward kernels
(inner_bwd.py, inner_bwd_mlp.py), written from
docs/ttt-backward.md. Every row is one token's f (or 4f) entries; all math
in float32, tl.* only (portable, and runs in the interpreter)."""

from __future__ import annotations

import triton
import triton.language as tl

from xbench_triton.model import _mma, _tanh


@triton.jit
def row_stats(z, F: tl.constexpr):
    """LayerNorm statistics of each row of z [K, F]: (x̂, 1/s), s = sqrt(var + eps)."""
    mu = tl.sum(z, axis=1) / F
    zc = z - mu[:, None]
    rs = 1.0 / tl.sqrt(tl.sum(zc * zc, axis=1) / F + 1e-6)
    return zc * rs[:, None], rs


@triton.jit
def ln_back(xh, rs, d, F: tl.constexpr):
    """LNback(x̂, s, d) = (d - mean(d) - x̂·mean(d ⊙ x̂)) / s, per row."""
    md = tl.sum(d, axis=1) / F
    mdx = tl.sum(d * xh, axis=1) / F
    return (d - md[:, None] - xh * mdx[:, None]) * rs[:, None]


@triton.jit
def ln_l2_fwd(z, tgt, lnw, lnb, F: tl.constexpr):
    """ℓ(Z, T) (spec step 5) with what its backward needs: (G, x̂, 1/s, r, c)."""
    xh, rs = row_stats(z, F)
    r = (lnw * xh + lnb - tgt) * lnw
    c = tl.sum(r * xh, axis=1) / F
    G = (r - (tl.sum(r, axis=1) / F)[:, None] - xh * c[:, None]) * rs[:, None]
    return G, xh, rs, r, c


@triton.jit
def ln_l2_back(dG, G, xh, rs, r, c, tgt, lnw, lnb, F: tl.constexpr):
    """The backward of ℓ (docs/ttt-backward.md, "The backward of ℓ"), per row:
    returns dZ, dT and this block's sums over rows of dγ and dβ [F]."""
    u = dG * rs[:, None]
    mux = tl.sum(u * xh, axis=1) / F
    # ℓ is itself the LayerNorm backward of r, so u -> dr is ln_back's operator
    dr = u - (tl.sum(u, axis=1) / F)[:, None] - xh * mux[:, None]
    dxh = lnw * lnw * dr - c[:, None] * u - mux[:, None] * r
    ds = -tl.sum(u * G, axis=1)  # G's own dependence on s
    dz = ln_back(xh, rs, dxh, F) + (ds / F)[:, None] * xh
    dlnw = tl.sum(dr * (2.0 * lnw * xh + lnb - tgt), axis=0)
    dlnb = tl.sum(dr * lnw, axis=0)
    return dz, -dr * lnw, dlnw, dlnb


@triton.jit
def gelu_fwd(x, C: tl.constexpr):
    """gelu_tanh(x) and its first two derivatives (docs/ttt-backward.md, mlp)."""
    u1 = C * (1.0 + 3 * 0.044715 * x * x)
    t = _tanh(C * (x + 0.044715 * x * x * x))
    sech2 = 1.0 - t * t
    d1 = 0.5 * (1.0 + t) + 0.5 * x * sech2 * u1
    d2 = sech2 * (u1 - x * t * u1 * u1 + 0.5 * x * (6 * 0.044715 * C * x))
    return 0.5 * x * (1.0 + t), d1, d2


@triton.jit
def mm_rows(A, arow, B, bcol, stride, acc, F: tl.constexpr, BC: tl.constexpr, DT: tl.constexpr):
    """acc + A[arow, :F] @ Bm with Bm[r, j] = B[r·stride + bcol[j]], both read
    from global memory (L1/L2) BC entries of the contraction at a time: an
    IEEE float32 tl.dot is FMA-based and holds each thread's rows of A and
    columns of B over the whole contraction, so a contraction of f=64 in
    registers spilled (ptxas, sm_90). arow: the rows' offsets (their f entries
    contiguous)."""
    rc = tl.arange(0, BC)
    for c in tl.static_range(F // BC):
        col = c * BC + rc
        a = tl.load(A + arow[:, None] + col[None, :]).to(tl.float32)
        acc = _mma(a, tl.load(B + col[:, None] * stride + bcol[None, :]).to(tl.float32), acc, DT)
    return acc
