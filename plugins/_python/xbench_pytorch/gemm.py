"""The GEMM workload in PyTorch: C = op(A) @ op(B), batched.

params (strings): m, n, k, batch (decimal), layout (nn|nt|tn|tt), dtype
(float32|tf32|bfloat16|float16|float8_e4m3). Layout letter 1 is A, letter 2
is B; 'n' = stored as is, 't' = stored transposed:
    A stored [batch, m, k] ('n') or [batch, k, m] ('t')
    B stored [batch, k, n] ('n') or [batch, n, k] ('t')
    C [batch, m, n] in the compute dtype (bfloat16 for float8_e4m3).
op() of a 't' operand is the transposed VIEW (.mT, no copy), so the kernel
sees the layout: torch.matmul on 3-D operands goes to at::bmm, which on CUDA
hands a view whose last-but-one stride is 1 to cuBLAS (cublasGemmStridedBatchedEx
or cublasLt) as a transpose flag, no copy (batch 1 is folded to one 2-D gemm).
On cpu it is at::bmm's CPU path (MKL/oneDNN or ATen's own blocked gemm for
bfloat16/float16), likewise without a copy of a transposed view.

Precision: the matmul flags are global, and the TTT backend (backend.py
set_precision) sets every one of them at the start of each of its runs, so
here step() sets the ones this dtype needs on every call (a few attribute
writes, negligible next to a product) and restores nothing:
  float32   IEEE float32: torch.backends.cuda.matmul.allow_tf32 = False
            (with set_float32_matmul_precision("highest"); the same legacy
            API as backend.py, so the two never mix the legacy and the
            fp32_precision API, which torch refuses to read back once mixed)
  tf32      float32 storage, TF32 allowed (allow_tf32 = True, "high")
  bfloat16/float16  operands and C in that dtype, float32 accumulation
            (allow_*_reduced_precision_reduction = False, so cuBLAS does not
            reduce split-K partial sums in the narrow type)
  float8_e4m3  e4m3fn operands with scale 1, bfloat16 C, through
            torch._scaled_mm (cuBLASLt fp8, compute capability >= 8.9 only).
            cuBLASLt's fp8 gemm takes A row-major and B column-major only,
            i.e. layout "nt" here; other layouts would need a copy, so they
            are refused (ValueError), and so are m, n, k that are not
            multiples of 16 (_scaled_mm's rule). _scaled_mm is 2-D: a batch is a loop of
            products written into slices of one preallocated C.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch

from xbench_py import dtypes as xd
from xbench_py.workloads import gemm_stored_shapes as stored_shapes, parse_gemm
from xbench_pytorch.model import torch_dtype

DTYPES: dict[str, tuple[str, ...]] = {
    "cpu": ("float32", "bfloat16", "float16"),
    "cuda": ("float32", "tf32", "bfloat16", "float16", "float8_e4m3"),
}


def store_dtype(dtype: str) -> torch.dtype:
    """The operands' storage dtype: the spec's, for every torch-based gemm
    (the triton gemm's too), from xbench_py.dtypes."""
    return torch_dtype(dtype)


def out_dtype(dtype: str) -> torch.dtype:
    """C's dtype (bfloat16 for float8_e4m3), from xbench_py.dtypes."""
    return torch_dtype(dtype, result=True)


def parse(params: dict[str, str]) -> tuple[int, int, int, int, str, str]:
    """(m, n, k, batch, layout, dtype), checked (the contract's one parser)."""
    return parse_gemm(params)


def _kind(device: str) -> str:
    return "cuda" if device.startswith("cuda") else device


def _check(device: str, layout: str, dtype: str, sizes: tuple[int, int, int] = (16, 16, 16)) -> None:
    kind = _kind(device)
    if dtype not in DTYPES.get(kind, ()):
        raise ValueError(f"torch gemm: dtype {dtype} is not supported on {kind} (supported: {DTYPES.get(kind, ())})")
    if dtype == "float8_e4m3":
        store_dtype(dtype)  # a torch without float8_e4m3fn: ValueError naming it
        if not hasattr(torch, "_scaled_mm"):
            raise ValueError("torch gemm: this torch has no _scaled_mm")
        cap = torch.cuda.get_device_capability(torch.device(device))
        if torch.version.hip is None and cap < (8, 9):
            raise ValueError(f"torch gemm: float8_e4m3 needs compute capability >= 8.9, this GPU is {cap}")
        if layout != "nt":
            raise ValueError("torch gemm: float8_e4m3 runs only layout nt (cuBLASLt fp8 takes A row-major, "
                             "B column-major; other layouts would need a copy)")
        if any(x % 16 for x in sizes):
            raise ValueError(f"torch gemm: float8_e4m3 (torch._scaled_mm) needs m, n, k divisible by 16, got {sizes}")


def _set_flags(dtype: str) -> None:
    tf32 = xd.of(dtype).tf32
    # set_float32_matmul_precision also moves allow_tf32, so it goes first.
    torch.set_float32_matmul_precision("high" if tf32 else "highest")
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False


def _product(a: torch.Tensor, b: torch.Tensor, layout: str, dtype: str) -> Callable[[], torch.Tensor]:
    """The step over stored a, b: one product, C [batch, m, n]."""
    opa = a if layout[0] == "n" else a.mT  # views, no copy
    opb = b if layout[1] == "n" else b.mT
    if dtype != "float8_e4m3":
        def step() -> torch.Tensor:
            _set_flags(dtype)
            return torch.matmul(opa, opb)
        return step
    batch, m, n, c_dtype = opa.shape[0], opa.shape[1], opb.shape[2], out_dtype(dtype)
    one = torch.ones((), device=a.device, dtype=torch.float32)
    out = torch.empty((batch, m, n), device=a.device, dtype=c_dtype)

    def step8() -> torch.Tensor:
        for i in range(batch):
            torch._scaled_mm(opa[i], opb[i], scale_a=one, scale_b=one, out_dtype=c_dtype, out=out[i])
        return out
    return step8


def seeded_operands(m: int, n: int, k: int, batch: int, layout: str, dtype: str,
                    device: str, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Seeded normal A and B on the device in the stored layout and dtype:
    the same values in every torch-based gemm (this one, triton's) for the
    same seed."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    return tuple(torch.randn(shape, generator=gen, device=device, dtype=torch.float32).to(store_dtype(dtype))
                 for shape in stored_shapes(m, n, k, batch, layout))


def export_operands(a: np.ndarray, b: np.ndarray, m: int, n: int, k: int, batch: int, layout: str,
                    dtype: str, device: str) -> tuple[torch.Tensor, torch.Tensor]:
    """The given float32 a, b (checked to be the stored shapes) cast to the
    dtype on the device."""
    sa, sb = stored_shapes(m, n, k, batch, layout)
    if tuple(a.shape) != sa or tuple(b.shape) != sb:
        raise ValueError(f"gemm export: a {a.shape} / b {b.shape} are not the stored shapes {sa} / {sb}")
    return tuple(torch.as_tensor(np.ascontiguousarray(x, np.float32)).to(device=device, dtype=store_dtype(dtype))
                 for x in (a, b))


def prepare(params: dict[str, str], device: str, seed: int) -> Callable[[], Any]:
    """Seeded normal A and B on the device in the stored layout and dtype;
    returns step(), one product per call, C [batch, m, n] (not synced)."""
    m, n, k, batch, layout, dtype = parse(params)
    _check(device, layout, dtype, (m, n, k))
    a, b = seeded_operands(m, n, k, batch, layout, dtype, device, seed)
    _set_flags(dtype)
    return _product(a, b, layout, dtype)


def export(params: dict[str, str], device: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One product of the given float32 a, b (stored shapes), cast to the dtype
    on the device; C as float32 numpy [batch, m, n]."""
    m, n, k, batch, layout, dtype = parse(params)
    _check(device, layout, dtype, (m, n, k))
    ta, tb = export_operands(a, b, m, n, k, batch, layout, dtype, device)
    c = _product(ta, tb, layout, dtype)()
    return c.float().cpu().numpy().reshape(batch, m, n)
