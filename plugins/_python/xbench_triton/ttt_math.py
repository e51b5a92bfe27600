"""Shared pieces of the TTT inner-loop kernels (model.py's linear
kernels, ttt_mlp.py's mlp kernels): products, the LayerNorm and its
fused L2 gradient (spec step 5), gelu, and the masked loads that pad a head
dim f to FP, the power of two tl.arange and tl.dot need.

Padding contract: every [*, FP] row holds f true lanes and FP - f lanes that
are exactly zero: inputs are loaded with other=0, the state's scratch is
zero-filled there, and the LayerNorm pieces below take their statistics over
the f true lanes and return zero in the others, so every product (zero times
anything) and every state update keeps them zero. PAD (f != FP) is a
constexpr: at a power-of-two f no mask is computed or applied, and the code is
the unpadded kernel's.

Portability: only tl.* operations, all elementwise math in float32, so the
same source builds for NVIDIA and AMD and runs in the interpreter.
"""

from __future__ import annotations

import math

import triton
import triton.language as tl

# The products (and the interpreter's emulation of narrow ones) are triton_dot's.
from xbench_triton.dot import EMULATE, _mm, _mma  # noqa: F401

GELU_C = math.sqrt(2.0 / math.pi)


@triton.jit
def _load(ptrs, mask, PAD: tl.constexpr):
    # float32 values at ptrs; with PAD, zero where mask is false (the padded
    # lanes, whose addresses belong to the next row or past the tensor).
    if PAD:
        return tl.load(ptrs, mask=mask, other=0.0).to(tl.float32)
    else:
        return tl.load(ptrs).to(tl.float32)


@triton.jit
def _store(ptrs, x, mask, PAD: tl.constexpr):
    if PAD:
        tl.store(ptrs, x, mask=mask)
    else:
        tl.store(ptrs, x)


@triton.jit
def _centered(z, F: tl.constexpr, cm, PAD: tl.constexpr):
    # z - mean over the f true lanes, and 1/sqrt(var + eps) per row. The
    # padded lanes of z are zero, so the sums need no mask; z - mu does.
    mu = tl.sum(z, axis=1) / F
    zc = z - mu[:, None]
    if PAD:
        zc = tl.where(cm, zc, 0.0)
    rs = 1.0 / tl.sqrt(tl.sum(zc * zc, axis=1) / F + 1e-6)
    return zc, rs


@triton.jit
def _ln_grad(z, tgt, lnw, lnb, F: tl.constexpr, cm, PAD: tl.constexpr):
    # Spec step 5, per row of z [K, FP]; zero in the padded lanes (lnw is zero
    # there, so g is, but F * g - sum(g) is not).
    zc, rs = _centered(z, F, cm, PAD)
    xh = zc * rs[:, None]
    g = (lnw * xh + lnb - tgt) * lnw
    G = (F * g - tl.sum(g, axis=1)[:, None] - xh * tl.sum(g * xh, axis=1)[:, None]) * (rs / F)[:, None]
    if PAD:
        G = tl.where(cm, G, 0.0)
    return G


@triton.jit
def _ln(z, lnw, lnb, F: tl.constexpr, cm, PAD: tl.constexpr):
    zc, rs = _centered(z, F, cm, PAD)
    return zc * rs[:, None] * lnw + lnb


@triton.jit
def _tanh(u):
    return 2.0 * tl.sigmoid(2.0 * u) - 1.0  # tl.tanh is not portable across backends/versions


@triton.jit
def _gelu(x, C: tl.constexpr):
    return 0.5 * x * (1.0 + _tanh(C * (x + 0.044715 * x * x * x)))


@triton.jit
def _gelu_and_prime(x, C: tl.constexpr):
    t = _tanh(C * (x + 0.044715 * x * x * x))
    return 0.5 * x * (1.0 + t), 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * C * (1.0 + 3 * 0.044715 * x * x)
