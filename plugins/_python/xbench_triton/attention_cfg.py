"""GPU launch configs of the flash-attention kernels (attention.py,
attention_bwd.py): (BLOCK_M, BLOCK_N, num_warps, num_stages) per kernel,
head-dim bucket (64 holds D <= 64) and operand width, for @triton.autotune.

How they were chosen (no GPU run yet): every entry was compiled for sm_90
(an H100) without a GPU (scripts/dev/triton/attention_compile_check.py: triton.compile with a
GPUTarget("cuda", 90, 32) and 16-byte-aligned pointers as at run time; Triton
3.9, 2026-11; causal, and non-causal/fp16 at D128 alike), and kept only
if its shared memory is under SMEM_LIMIT and ptxas reported no stack frame
(no register spills) or a small one (<= 56 bytes: dkdv D128 32x128 and
16x64, dq D256 32x64, float32 fwd D256); their speed is unmeasured, and the
autotuner picks among them per (S, KV, D, causal, dtype).
  bf16/fp16, shared memory per block (KB) as compiled:
    fwd  D64 32-112, D128 48-160, D256 50-192 (128x64: q tile 64 KB + two
         stages of K and V tiles, 128 KB);
    dkdv D64 14-81, D128 26-113, D256 36-68;  dq D64 32-80, D128 34-128,
    D256 68-128.
  Dropped for spilling (80 B to 1.3 KB of stack): fwd D128 128x64/4 warps,
  fwd D256 64x64 and 64x32 at 4 warps, dkdv D128 64x64 and 64x128, dkdv
  D256 32x64 and 16x64, dq D256 64x64; 4-warp variants of dkdv D64 32x128
  and 64x64 and of dq D64 128x64 run at 8 warps instead.
  Before CHUNK, every float32 config spilled (1-20 KB of stack at D >= 128).
  float32 (IEEE FMA dot, CHUNK=32 columns a step): fwd D64 40-64, D128 52-72,
  D256 100; dkdv D64 68-104, D128 98-164, D256 194 (the one float32 dk/dv
  config at D = 256 that compiled without spilling and under 227 KB);
  dq D64 64, D128 84-120, D256 114-164.
"""

from __future__ import annotations

import triton

CONFIGS = {  # 2-byte operands
    "fwd": {64: [(128, 64, 4, 3), (128, 128, 8, 3), (64, 64, 4, 4), (128, 64, 4, 4), (64, 32, 4, 3)],
            128: [(128, 64, 8, 3), (128, 128, 8, 2), (64, 64, 4, 3), (128, 32, 4, 3), (64, 32, 4, 2)],
            256: [(64, 64, 8, 2), (128, 64, 8, 2), (64, 32, 8, 2), (128, 32, 8, 2), (32, 32, 4, 2)]},
    # dk/dv: BLOCK_N kv rows stay (k, v, dk, dv), BLOCK_M q rows stream.
    "dkdv": {64: [(32, 128, 8, 3), (64, 128, 8, 3), (32, 64, 4, 3), (64, 64, 8, 2), (16, 32, 4, 2)],
             128: [(32, 64, 8, 3), (32, 128, 8, 3), (16, 64, 4, 2), (16, 32, 4, 2)],
             256: [(32, 32, 8, 2), (16, 32, 8, 2), (16, 16, 4, 2)]},
    # dq: BLOCK_M q rows stay (q, do, dq), BLOCK_N kv rows stream.
    "dq": {64: [(128, 64, 8, 3), (64, 64, 4, 3), (128, 32, 4, 3), (64, 32, 4, 2)],
           128: [(128, 64, 8, 2), (64, 64, 4, 3), (64, 32, 4, 3), (32, 32, 4, 2)],
           256: [(64, 32, 8, 2), (32, 64, 4, 2), (32, 32, 4, 2)]},
}
CONFIGS_F32 = {  # 4-byte operands: small tiles, 8 warps (the FMA dot's per-thread fragments)
    "fwd": {64: [(64, 32, 8, 2), (64, 64, 8, 2)], 128: [(32, 32, 4, 2), (64, 32, 8, 2)], 256: [(32, 32, 8, 2)]},
    "dkdv": {64: [(32, 64, 8, 2), (16, 64, 4, 2), (32, 32, 4, 2)],
             128: [(16, 32, 4, 2), (16, 64, 8, 2), (32, 32, 8, 2)], 256: [(16, 32, 8, 2)]},
    "dq": {64: [(64, 32, 8, 2)], 128: [(32, 32, 4, 2), (64, 32, 8, 2)], 256: [(32, 32, 8, 2), (32, 16, 4, 2)]},
}
# The interpreter's configs (tl.dot needs every dimension >= 16; BM != BN so a
# mix-up of the two shows in the tests).
CPU_CONFIGS = {"fwd": (32, 16), "dkdv": (16, 32), "dq": (32, 16)}
SMEM_LIMIT = 200 * 1024  # of an H100's 227 KB per block, leaving room for layout-conversion scratch


def bucket(d: int) -> int:
    return 64 if d <= 64 else d


def table(kind: str, d: int, esize: int) -> list:
    return (CONFIGS_F32 if esize == 4 else CONFIGS)[kind][bucket(d)]


def smem(kind: str, bm: int, bn: int, stages: int, d: int, esize: int) -> int:
    """Bytes of shared memory a 2-byte config needs: the resident tiles once,
    the streamed tiles once per pipeline stage (it matched the compiled sizes
    of the bf16 entries within 1 KB; it does not model float32's CHUNK path)."""
    if kind == "fwd":  # q resident; k, v streamed
        return esize * d * (bm + 2 * bn * max(stages, 1))
    if kind == "dq":  # q, do resident; k, v streamed
        return esize * d * (2 * bm + 2 * bn * max(stages, 1))
    return esize * d * (2 * bn + 2 * bm * max(stages, 1))  # dkdv: k, v resident; q, do streamed


def _key(c: triton.Config) -> tuple:
    return (c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.num_warps, c.num_stages)


def all_configs(kind: str) -> list:
    seen = dict.fromkeys(c for t in (CONFIGS, CONFIGS_F32) for cs in t[kind].values() for c in cs)
    return [triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=w, num_stages=s) for bm, bn, w, s in seen]


def pruner(kind: str):
    """early_config_prune for @triton.autotune: the configs of the call's
    table (kernel, head-dim bucket, operand width); 2-byte ones also by the
    shared-memory estimate (a guard for edits: the listed ones all fit)."""
    def prune(configs, named_args, **kw):
        args = {**named_args, **kw}
        d, esize = args["D"], args["Q"].element_size()
        want = table(kind, d, esize)
        mine = [c for c in configs if _key(c) in want]
        if esize == 4:
            return mine
        fit = [c for c in mine if smem(kind, c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.num_stages, d, esize)
               <= SMEM_LIMIT]
        return fit or [min(mine, key=lambda c: c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"] * c.num_stages)]
    return prune
