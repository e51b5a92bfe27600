"""The matrix products every Triton kernel of this backend uses (the TTT
inner loop's, the attention's): a @ b and acc + a @ b with float32
accumulation, operands rounded to DT first; float32 operands stay IEEE
float32 (no TF32).

The interpreter's tl.dot on bfloat16 operands returns garbage (it multiplies
the raw bits), so there (EMULATE) the operands are rounded to DT and
multiplied as float32, which is the same product: bf16/fp16 products are
exact in float32.
"""

from __future__ import annotations

import os

import triton
import triton.language as tl

EMULATE = tl.constexpr(os.environ.get("TRITON_INTERPRET") == "1")


@triton.jit
def _mm(a, b, DT: tl.constexpr):
    # a @ b, float32 accumulation.
    if DT == tl.float32:
        return tl.dot(a, b, input_precision="ieee")
    elif EMULATE:
        return tl.dot(a.to(DT).to(tl.float32), b.to(DT).to(tl.float32), input_precision="ieee")
    else:
        return tl.dot(a.to(DT), b.to(DT))


@triton.jit
def _mma(a, b, acc, DT: tl.constexpr):
    # acc + a @ b (see _mm).
    if DT == tl.float32:
        return tl.dot(a, b, acc, input_precision="ieee")
    elif EMULATE:
        return tl.dot(a.to(DT).to(tl.float32), b.to(DT).to(tl.float32), acc, input_precision="ieee")
    else:
        return tl.dot(a.to(DT), b.to(DT), acc)
