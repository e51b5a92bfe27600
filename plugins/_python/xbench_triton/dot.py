"""The matrix products every Triton kernel of this backend uses (the TTT
inner loop's, the attention's): a @ b and acc + a @ b with float32
accumulation, operands rounded to DT first; float32 operands stay IEEE
float32 (no TF32).

The interpreter's tl.dot on bfloat16 operands returns garbage (it multiplies
the raw bits), so there (EMULATE) the operands are rounded to DT and
multiplied as float32, which is the same product: bf16/fp16 products are
exact in float32.

DOT_DTYPES are the operand dtypes (DT) the products take, torch's to
triton's, resolved through xbench_py.dtypes (tl_dtype).
"""

from __future__ import annotations

import os

import triton
import triton.language as tl

from xbench_py import dtypes as xd
from xbench_pytorch.model import torch_dtype

EMULATE = tl.constexpr(os.environ.get("TRITON_INTERPRET") == "1")


def tl_dtype(name: str) -> tl.dtype:
    """The triton dtype of xbench dtype name's storage element, from
    xbench_py.dtypes. float8_e4m3 has none: triton calls that element
    float8e4nv, and the gemm passes it as a torch tensor, never by name."""
    def form(element: str):
        t = getattr(tl, element, None)
        return t if isinstance(t, tl.dtype) else None
    return xd.resolve(name, form, "triton")


# The operand dtypes of the kernels' products (DT), torch's to triton's.
DOT_NAMES = ("float32", "bfloat16", "float16")
DOT_DTYPES = {torch_dtype(n): tl_dtype(n) for n in DOT_NAMES}


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
