"""The GEMM workload as this backend's own Triton kernel: C = op(A) @ op(B).

params (strings): m, n, k, batch (decimal), layout (nn|nt|tn|tt), dtype
(float32|tf32|bfloat16|float16|float8_e4m3). Layout letter 1 is A, letter 2
is B; 'n' = stored as is, 't' = stored transposed:
    A stored [batch, m, k] ('n') or [batch, k, m] ('t')
    B stored [batch, k, n] ('n') or [batch, n, k] ('t')
    C [batch, m, n] in the compute dtype (bfloat16 for float8_e4m3).

The kernel (written for this project from the ideas of Triton's matmul
tutorial, not copied):
  * one program per BLOCK_M x BLOCK_N tile of C, grid axis 1 = batch; the
    tile walks K in BLOCK_K steps with a float32 accumulator and tl.dot;
  * the flat tile id is mapped to (tile row, tile column) in groups of
    GROUP_M tile rows, so programs running together share A rows and B
    columns in L2;
  * every operand is addressed through its (batch, row, column) strides of
    op(X), i.e. of the transposed VIEW of a 't' operand, so all four layouts
    and any batch run without a copy (Triton specialises on which stride is
    1 and vectorises the loads along it);
  * when the tile sizes divide M, N and K (EVEN, decided at compile time)
    no load is masked; otherwise the loads are masked on M/N and on the K
    left (zeros past the edges) and the store on M and N;
  * C is cast to its dtype at the store.
Precision: float32 runs tl.dot with input_precision="ieee" (true fp32, FMA),
tf32 with "tf32" (tensor cores); bfloat16/float16 operands are multiplied
with float32 accumulation; float8_e4m3 operands (scale 1) likewise, with
bfloat16 C (sm_89+ NVIDIA only).

On a Hopper GPU, 16-bit products with batch 1 and 16-byte rows take the
persistent TMA kernel of gemm_tma instead (see there); this kernel
serves every other case. Measured on one H100 (Triton 3.6, torch 2.11,
2026-11, one batch, best of the autotuned configs): bf16 4096^3 and 8192^3
at 85-99% of cuBLAS (torch.matmul) in layouts nn/tn/tt; nt the weakest,
72-84% over three runs, 60-77% on the llm suite's projections (which is why
the TMA kernel exists); fp16 nn 4096^3 95%; fp8 (nt, 8192^3) about 90%; IEEE
fp32 about 80%. TF32 is fast only where both operands are K-contiguous
(layout nt: ~85% of cuBLAS): Hopper's tf32 wgmma takes K-major operands
only, so nn/tn/tt tf32 run at a fraction of cuBLAS; no copy is made to fix
that (the layout is the point).

Tuning: @triton.autotune over AUTOTUNE_CONFIGS (autotune_configs()), keyed on
M, N, K, the layout and the dot precision (the operand dtype is part of
Triton's key already). The first call of a new shape benchmarks every config
(a few seconds); prepare() makes that call, so the timed steps don't.
On cpu the kernel runs in Triton's interpreter (TRITON_INTERPRET=1, which
must be set before this module is imported, as backend does): no
autotuning there, one small config (CPU_CONFIG), and bfloat16/float16
operands are rounded to that dtype and multiplied as float32 (the
interpreter's narrow-type tl.dot is unreliable; see dot.py), which
is the same product since bf16/fp16 products are exact in float32.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, Callable

import numpy as np
import torch
import triton
import triton.language as tl

from xbench_pytorch import gemm as torch_gemm
from xbench_triton import gemm_tma as _tma
from xbench_py import dtypes as xd
from xbench_py.types import GEMM_LAYOUTS as LAYOUTS
from xbench_py.workloads import parse_gemm
INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"
# The interpreter has no tf32 and no float8 products, as torch's gemm has
# none on a CPU: the dtypes, operand storage and C dtypes are the pytorch
# gemm's (one definition of the spec's dtypes for both).
DTYPES = torch_gemm.DTYPES
# Dot precision code (a constexpr of the kernel and part of the autotune key)
# of each math of xbench_py.dtypes: 0 = IEEE float32, 1 = TF32, 2 = narrow
# operands (bf16/fp16/fp8), fp32 accumulation.
_PREC_CODE = {xd.IEEE: 0, xd.TF32: 1, xd.NARROW: 2}


def dot_precision(dtype: str) -> int:
    """The kernel's PREC for a gemm dtype."""
    return _PREC_CODE[xd.of(dtype).math]


def _cfg(bm: int, bn: int, bk: int, warps: int, stages: int, group: int = 8) -> triton.Config:
    return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": group},
                         num_warps=warps, num_stages=stages)


# A handful of configs, not the full product of tile sizes x warps x stages
# (108 configs would take minutes of benchmarking per shape).
AUTOTUNE_CONFIGS = [
    # Hopper (H100/H200) large-tile configs: a 128x256 or 256x128 tile with
    # BLOCK_K 64 in two warpgroups (8 warps) keeps the wgmma units busy, and 3-4
    # stages of bf16 operands fit the 228 KB of shared memory
    # ((128+256)*64*2 B = 48 KB a stage).
    _cfg(128, 256, 64, 8, 3),
    _cfg(128, 256, 64, 8, 4),
    _cfg(256, 128, 64, 8, 3),
    _cfg(256, 128, 64, 8, 4),
    # TF32 (4-byte operands): BLOCK_K 32 keeps a 128x256 tile's stages in
    # shared memory (48 KB a stage).
    _cfg(128, 256, 32, 8, 3),
    _cfg(256, 128, 32, 8, 3),
    # Mid-size tiles: Ampere-class GPUs, float32/tf32 (twice the bytes a stage),
    # and shapes with too few 128x256 tiles to fill the SMs.
    _cfg(128, 128, 64, 8, 4),
    _cfg(128, 128, 64, 4, 4),
    _cfg(128, 128, 32, 4, 4),
    _cfg(128, 64, 64, 4, 4),
    _cfg(64, 128, 64, 4, 4),
    _cfg(128, 64, 32, 4, 5),
    # Small tiles: small or skinny products, and IEEE float32, whose FMA dot
    # keeps the accumulator and operand fragments in registers.
    _cfg(64, 64, 64, 4, 4),
    _cfg(64, 64, 32, 4, 5),
]
# The interpreter's single config (tl.dot needs every dimension >= 16).
CPU_CONFIG = {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 4}


def _prune(configs: list, named_args: dict, **kwargs) -> list:
    """IEEE float32 (PREC 0) is tuned over the 4-warp tiles of at most
    128x128 only: its FMA dot keeps operand fragments in registers, so the
    8-warp 128x256/256x128 tiles spill, compile for up to a minute on the
    H100 and never won there (47 of 47 shapes of the square and llm suites,
    2026-11-26, chose 64x64 or 64x128). Every other precision keeps all."""
    if kwargs.get("PREC") != 0:
        return configs
    return [c for c in configs if c.num_warps == 4 and c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"] <= 128 * 128]


def autotune_configs() -> list:
    """The configs @triton.autotune chooses among on a GPU."""
    return list(AUTOTUNE_CONFIGS)


@triton.jit
def _gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                 s_ab, s_am, s_ak, s_bb, s_bk, s_bn, s_cb, s_cm, s_cn,
                 LAYOUT: tl.constexpr, PREC: tl.constexpr, EMULATE: tl.constexpr,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                 GROUP_M: tl.constexpr, EVEN: tl.constexpr):
    # LAYOUT only separates the autotune cache entries (the strides carry the layout).
    pid = tl.program_id(0)
    bat = tl.program_id(1).to(tl.int64)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    # Grouped order: GROUP_M tile rows are swept column by column.
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    rows_here = tl.minimum(tiles_m - first_m, GROUP_M)
    tm = first_m + (pid % per_group) % rows_here
    tn = (pid % per_group) // rows_here

    rm = tm * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tn * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    pa = a_ptr + bat * s_ab + rm[:, None] * s_am + rk[None, :] * s_ak
    pb = b_ptr + bat * s_bb + rk[:, None] * s_bk + rn[None, :] * s_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kk in range(0, tl.cdiv(K, BLOCK_K)):
        if EVEN:
            a = tl.load(pa)
            b = tl.load(pb)
        else:
            left = K - kk * BLOCK_K
            a = tl.load(pa, mask=(rm[:, None] < M) & (rk[None, :] < left), other=0.0)
            b = tl.load(pb, mask=(rk[:, None] < left) & (rn[None, :] < N), other=0.0)
        if PREC == 0:
            acc = tl.dot(a, b, acc, input_precision="ieee")
        elif PREC == 1:
            acc = tl.dot(a, b, acc, input_precision="tf32")
        elif EMULATE:
            acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc, input_precision="ieee")
        else:
            acc = tl.dot(a, b, acc)
        pa += BLOCK_K * s_ak
        pb += BLOCK_K * s_bk

    pc = c_ptr + bat * s_cb + rm[:, None] * s_cm + rn[None, :] * s_cn
    tl.store(pc, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


# EVEN: the tile sizes divide M, N and K, so no load needs a mask.
_even_k = triton.heuristics({"EVEN": lambda args: args["M"] % args["BLOCK_M"] == 0
                             and args["N"] % args["BLOCK_N"] == 0 and args["K"] % args["BLOCK_K"] == 0})
# GPU: autotuned (the configs set BLOCK_*/GROUP_M and warps/stages; EVEN_K follows).
_gemm_tuned = triton.autotune(configs=AUTOTUNE_CONFIGS, key=["M", "N", "K", "LAYOUT", "PREC"],
                              prune_configs_by={"early_config_prune": _prune})(_even_k(_gemm_kernel))
# Interpreter: one config, no benchmarking.
_gemm_plain = _even_k(_gemm_kernel)


def parse(params: dict[str, str]) -> tuple[int, int, int, int, str, str]:
    """(m, n, k, batch, layout, dtype), checked (the contract's one parser)."""
    return parse_gemm(params)


def _check(device: str, dtype: str) -> None:
    kind = "cuda" if device.startswith("cuda") else device
    if kind == "cpu" and not INTERPRET:
        raise ValueError("triton gemm on cpu needs TRITON_INTERPRET=1 set before gemm is imported")
    if kind == "cuda" and INTERPRET:
        raise ValueError("triton gemm: this process runs Triton's interpreter (TRITON_INTERPRET=1); cuda needs it unset")
    if dtype not in DTYPES.get(kind, ()):
        raise ValueError(f"triton gemm: dtype {dtype} is not supported on {kind} (supported: {DTYPES.get(kind, ())})")
    if dtype == "float8_e4m3":
        if torch.version.hip is not None:
            raise ValueError("triton gemm: float8_e4m3 runs on NVIDIA GPUs only (tl.float8e4nv)")
        torch_gemm.store_dtype(dtype)  # a torch without float8_e4m3fn: ValueError naming it
        cap = torch.cuda.get_device_capability(torch.device(device))
        if cap < (8, 9):
            raise ValueError(f"triton gemm: float8_e4m3 needs compute capability >= 8.9, this GPU is {cap}")


def _launcher(a: torch.Tensor, b: torch.Tensor, layout: str, dtype: str,
              tma: bool = True) -> Callable[[], torch.Tensor]:
    """step() computing C from the stored a, b; on a GPU 16-bit products
    TMA can read (gemm_tma.eligible) take the persistent TMA kernel
    unless tma is False."""
    opa = a if layout[0] == "n" else a.mT  # views: the strides carry the layout
    opb = b if layout[1] == "n" else b.mT
    batch, m, k = opa.shape
    n = opb.shape[2]
    c = torch.empty((batch, m, n), device=a.device, dtype=torch_gemm.out_dtype(dtype))
    lay, prec = LAYOUTS.index(layout), dot_precision(dtype)
    args = (opa, opb, c, m, n, k, *opa.stride(), *opb.stride(), *c.stride())

    if INTERPRET:
        grid1 = (triton.cdiv(m, CPU_CONFIG["BLOCK_M"]) * triton.cdiv(n, CPU_CONFIG["BLOCK_N"]), batch)

        def step_cpu() -> torch.Tensor:
            _gemm_plain[grid1](*args, LAYOUT=lay, PREC=prec, EMULATE=True, **CPU_CONFIG)
            return c
        return step_cpu

    if tma and torch.version.hip is None and _tma.eligible(a, b, c) \
            and torch.cuda.get_device_capability(a.device) >= (9, 0):
        return _tma.launcher(a, b, c, m, n, k, layout, False, ws=_tma.DEFAULT_WS)

    def grid(meta):
        return (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]), batch)

    def step() -> torch.Tensor:
        _gemm_tuned[grid](*args, LAYOUT=lay, PREC=prec, EMULATE=False)
        return c

    def with_config(cfg: triton.Config) -> Callable[[], torch.Tensor]:
        def step_fixed() -> torch.Tensor:  # the launch the autotuner makes, with cfg, untuned
            _gemm_plain[grid](*args, LAYOUT=lay, PREC=prec, EMULATE=False, **cfg.all_kwargs())
            return c
        return step_fixed
    step.tuner, step.with_config = _gemm_tuned, with_config
    return step


# Tuning per bucket of shapes (the variant triton/bucket-tuned, issue 29):
# the first shape of a bucket is autotuned as always, and its config is then
# launched untuned for every later shape of the bucket, which saves the
# ~0.1 s per config the autotuner spends timing candidates on the GPU. The
# result names the config and says whether it was tuned at this shape or
# reused from another (LAST_CHOICE), never silently. With a compile cache
# (XBENCH_COMPILE_CACHE) the bucket's choice is shared by every process that
# reads the cache, so sweep --compile-ahead's helpers and the timing process
# launch one config per bucket (the first process to tune it wins), not one
# per process.
_BUCKETS: dict = {}  # (kernel, layout, dtype, bucket) -> (config, (m, n, k) it was tuned at)


def bucket_of(m: int, n: int, k: int) -> tuple:
    """The bucket of a shape: each dimension rounded up to a power of two
    (at least 16)."""
    return tuple(max(16, 1 << (x - 1).bit_length()) for x in (m, n, k))


def _config_kwargs(cfg: Any) -> Any:
    return cfg.all_kwargs() if hasattr(cfg, "all_kwargs") else str(cfg)


def _bucket_file(key: tuple) -> str:
    base = os.environ.get("XBENCH_COMPILE_CACHE", "")
    if not base:
        return ""
    kernel, layout, dtype, (bm, bn, bk) = key
    return os.path.join(base, "triton-buckets", f"{kernel}_{layout}_{dtype}_{bm}x{bn}x{bk}.json")


def _shared_choice(key: tuple, configs: list) -> tuple | None:
    """The bucket's config and tuning shape from the compile cache, or None
    when no process has tuned it (or the config is not among configs)."""
    path = _bucket_file(key)
    try:
        with open(path) as f:
            rec = json.load(f)
    except (OSError, ValueError):
        return None
    for cfg in configs:
        if _config_kwargs(cfg) == rec["config"]:
            return cfg, tuple(rec["at"])
    return None


def _share_choice(key: tuple, cfg: Any, at: tuple) -> None:
    """Writes the bucket's choice to the compile cache unless another
    process got there first (a hard link is atomic and fails if it exists)."""
    path = _bucket_file(key)
    if not path:
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump({"config": _config_kwargs(cfg), "at": list(at), "label": str(cfg)}, f)
    try:
        os.link(tmp, path)
    except OSError:  # another process shared first, or no hard links here: this process keeps its own
        pass
    finally:
        os.unlink(tmp)


def bucket_tuned(step: Callable[[], Any], m: int, n: int, k: int, layout: str, dtype: str) -> Callable[[], Any]:
    """A step launching the config of (m, n, k)'s bucket: tuned here at this
    shape when the bucket is new (the first call autotunes), else the one
    tuned at the bucket's first shape. step.choice records which."""
    bucket = bucket_of(m, n, k)
    key = (getattr(step, "kernel_name", "gemm"), layout, dtype, bucket)
    if key not in _BUCKETS:
        shared = _shared_choice(key, list(getattr(step.tuner, "configs", [])))
        if shared is None:
            step()  # autotunes this exact shape
            _share_choice(key, step.tuner.best_config, (m, n, k))
            # another process may have shared its choice meanwhile: launch that one
            shared = _shared_choice(key, list(getattr(step.tuner, "configs", []))) \
                or (step.tuner.best_config, (m, n, k))
        _BUCKETS[key] = shared
    cfg, at = _BUCKETS[key]
    how = ("tuned at this shape, {}x{}x{}" if at == (m, n, k)
           else "reused from {}x{}x{}; not tuned for this shape").format(*at)
    fixed = step.with_config(cfg)
    fixed.choice = f"{key[0]}: {cfg} (chosen for the bucket m<={bucket[0]},n<={bucket[1]},k<={bucket[2]}, {how})"
    return fixed


def chosen_config(step: Callable[[], Any]) -> str:
    """The config the autotuner chose for step's shape after its first call
    ("" where nothing was tuned: the interpreter): autotuning is keyed on the
    exact shape, layout and precision, so this is the shape's own choice,
    whether benchmarked now or read from Triton's autotuning cache
    (TRITON_CACHE_AUTOTUNING, which --compile-cache turns on)."""
    tuner = getattr(step, "tuner", None)
    best = getattr(tuner, "best_config", None)
    return "" if best is None else f"{getattr(step, 'kernel_name', 'gemm')}: {best}"


def prepare(params: dict[str, str], device: str, seed: int, tune: str = "shape") -> Callable[[], Any]:
    """Seeded normal A and B on the device in the stored layout and dtype (the
    same values as the pytorch gemm for the same seed); returns step(), one
    product per call, C [batch, m, n] (not synced). The first product, which
    autotunes on a GPU, runs here. tune "bucket": a GPU step launches its
    shape bucket's config (bucket_tuned) instead of tuning every shape."""
    m, n, k, batch, layout, dtype = parse(params)
    _check(device, dtype)
    a, b = torch_gemm.seeded_operands(m, n, k, batch, layout, dtype, device, seed)
    step = _launcher(a, b, layout, dtype)
    t0 = time.perf_counter()
    if tune == "bucket" and hasattr(step, "with_config"):
        step = bucket_tuned(step, m, n, k, layout, dtype)
    step()  # compiles and, on a GPU, autotunes this shape (or its bucket's first)
    if device != "cpu":
        torch.cuda.synchronize(device)
    step.compile_ms = (time.perf_counter() - t0) * 1e3  # the result's compile_ms (Prepared.compile_ms)
    global LAST_CHOICE
    LAST_CHOICE = getattr(step, "choice", "") or chosen_config(step)
    return step


# The autotuner's choice for the configuration prepare() last made (a
# setting of its result), "" when nothing was tuned.
LAST_CHOICE = ""


def export(params: dict[str, str], device: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """One product of the given float32 a, b (stored shapes), cast to the dtype
    on the device; C as float32 numpy [batch, m, n]."""
    m, n, k, batch, layout, dtype = parse(params)
    _check(device, dtype)
    ta, tb = torch_gemm.export_operands(a, b, m, n, k, batch, layout, dtype, device)
    c = _launcher(ta, tb, layout, dtype)()
    return c.float().cpu().numpy().reshape(batch, m, n)
