"""The 16-bit GEMM path of gemm on Hopper-class GPUs: a persistent
kernel whose operands arrive through TMA tensor descriptors.

Why a second kernel: the pointer kernel of gemm reaches 80-89% of
cuBLAS on large square bfloat16 products but 60-77% on the `llm` suite's
projection shapes (results/h100-gemm, 2026-11-24). cuBLAS's Hopper kernels
(nvjet_sm90_tst_*, scripts/cublas_paths.py) are persistent and feed the
tensor cores through the TMA unit; this is the same structure written in
Triton from its language documentation (tl.make_tensor_descriptor,
tl.range):

  * a grid of at most one program per SM; each walks the C tiles
    pid, pid + programs, ... in the grouped order of gemm (GROUP_M
    tile rows swept column by column, so programs running together share A
    rows and B columns in L2);
  * A, B and C are 2-D tensor descriptors of the STORED matrices; a 't'
    operand is loaded as stored and transposed in registers (tl.trans), so
    the TMA boxes are always read along the contiguous dimension;
  * descriptors pad out-of-range loads with zeros and clip stores, so no
    shape needs masks (ragged M, N, K run the same code);
  * the inner loop is a plain K walk with a float32 accumulator; Triton
    pipelines the descriptor loads over num_stages buffers, and with WS
    (tl.range(..., warp_specialize=True)) gives the loads their own warps.

Eligible (eligible()): batch 1, bfloat16/float16, and every leading stride a
multiple of 16 bytes (TMA's rule), i.e. the stored row lengths of A, B and C
multiples of 8 elements. Everything else keeps gemm.py's kernel.
"""

from __future__ import annotations

from typing import Callable

import torch
import triton
import triton.language as tl

_ALLOCATOR_SET = False
# gemm.py's default path gives the loads their own warps: 0.90-1.04 of
# cuBLAS on 12 large bfloat16 shapes over two H100 runs against 0.89-1.01
# without (results/h100-triton-gemm/kernel-check*.jsonl).
DEFAULT_WS = True


def _cfg(bm: int, bn: int, bk: int, warps: int, stages: int, ws: bool, group: int = 8) -> triton.Config:
    return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": group, "WS": ws},
                         num_warps=warps, num_stages=stages)


# 16-bit operands: (bm + bn) * bk * 2 B a stage; 128x256x64 is 48 KB, so 3
# stages (208 KB with the epilogue's C tile) fit the H100's 227 KB and 4 do
# not (scripts/dev/triton/gemm_compile_check.py prints each config's shared memory).
CONFIGS = [
    _cfg(128, 256, 64, 8, 3, False),
    _cfg(256, 128, 64, 8, 3, False),
    _cfg(128, 128, 64, 8, 4, False),
    _cfg(128, 128, 64, 4, 4, False),
    _cfg(128, 64, 64, 4, 4, False),
]
WS_CONFIGS = [
    _cfg(128, 256, 64, 8, 3, True),
    _cfg(128, 128, 64, 4, 4, True),
    _cfg(128, 128, 64, 8, 4, True),
]


@triton.jit
def _gemm_tma_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                     A_T: tl.constexpr, B_T: tl.constexpr, EMULATE: tl.constexpr,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                     GROUP_M: tl.constexpr, WS: tl.constexpr):
    if A_T:  # A stored [K, M]
        a_desc = tl.make_tensor_descriptor(a_ptr, shape=[K, M], strides=[M, 1], block_shape=[BLOCK_K, BLOCK_M])
    else:
        a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
    if B_T:  # B stored [N, K]
        b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1], block_shape=[BLOCK_N, BLOCK_K])
    else:
        b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])

    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    k_steps = tl.cdiv(K, BLOCK_K)
    for tile in tl.range(tl.program_id(0), tiles_m * tiles_n, tl.num_programs(0), flatten=True, warp_specialize=WS):
        first_m = (tile // per_group) * GROUP_M
        rows_here = tl.minimum(tiles_m - first_m, GROUP_M)
        om = (first_m + (tile % per_group) % rows_here) * BLOCK_M
        on = ((tile % per_group) // rows_here) * BLOCK_N
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for kk in range(k_steps):
            ok = kk * BLOCK_K
            if A_T:
                a = tl.trans(a_desc.load([ok, om]))
            else:
                a = a_desc.load([om, ok])
            if B_T:
                b = tl.trans(b_desc.load([on, ok]))
            else:
                b = b_desc.load([ok, on])
            if EMULATE:  # the interpreter: exact products of the 16-bit values in float32
                acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc, input_precision="ieee")
            else:
                acc = tl.dot(a, b, acc)
        c_desc.store([om, on], acc.to(c_desc.dtype))


_tuned = triton.autotune(configs=CONFIGS, key=["M", "N", "K", "A_T", "B_T"])(_gemm_tma_kernel)
_tuned_ws = triton.autotune(configs=WS_CONFIGS, key=["M", "N", "K", "A_T", "B_T"])(_gemm_tma_kernel)
# The interpreter's one config (tl.dot needs every dimension >= 16).
CPU_CONFIG = {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 4, "WS": False}


def eligible(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> bool:
    """Whether stored A [1, *, *], B and C [1, m, n] can go through TMA: batch
    1, 16-bit operands, contiguous, 16-byte aligned, every row a multiple of
    16 bytes."""
    if a.shape[0] != 1 or a.dtype not in (torch.bfloat16, torch.float16) or b.dtype != a.dtype:
        return False
    if not (a.is_contiguous() and b.is_contiguous() and c.is_contiguous()):
        return False
    return all(t.shape[-1] * t.element_size() % 16 == 0 and t.data_ptr() % 16 == 0 for t in (a, b, c))


def _allocator(size: int, alignment: int, stream) -> torch.Tensor:
    # Device-side descriptors are written to a global scratch buffer per launch.
    return torch.empty(size, device="cuda", dtype=torch.int8)


def launcher(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, m: int, n: int, k: int, layout: str,
             interpret: bool, ws: bool = False) -> Callable[[], torch.Tensor]:
    """step() computing c[0] = op(a[0]) @ op(b[0]) from the STORED a, b (see
    eligible()); the first call on a GPU autotunes the shape."""
    global _ALLOCATOR_SET
    a2, b2, c2 = a[0], b[0], c[0]
    a_t, b_t = layout[0] == "t", layout[1] == "t"
    if interpret:
        grid1 = (min(4, triton.cdiv(m, 32) * triton.cdiv(n, 32)),)

        def step_cpu() -> torch.Tensor:
            _gemm_tma_kernel[grid1](a2, b2, c2, m, n, k, A_T=a_t, B_T=b_t, EMULATE=True, **CPU_CONFIG)
            return c
        return step_cpu
    if not _ALLOCATOR_SET:
        triton.set_allocator(_allocator)
        _ALLOCATOR_SET = True
    sms = torch.cuda.get_device_properties(a.device).multi_processor_count
    kernel = _tuned_ws if ws else _tuned

    def grid(meta):
        return (min(sms, triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"])),)

    def step() -> torch.Tensor:
        kernel[grid](a2, b2, c2, m, n, k, A_T=a_t, B_T=b_t, EMULATE=False)
        return c

    def with_config(cfg: triton.Config) -> Callable[[], torch.Tensor]:
        def step_fixed() -> torch.Tensor:  # the launch the autotuner makes, with cfg, untuned
            _gemm_tma_kernel[grid](a2, b2, c2, m, n, k, A_T=a_t, B_T=b_t, EMULATE=False, **cfg.all_kwargs())
            return c
        return step_fixed
    step.tuner, step.kernel_name, step.with_config = kernel, "tma-ws" if ws else "tma", with_config
    return step
