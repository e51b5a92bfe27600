"""Flash attention (forward here, backward in triton_attention_bwd.py) as this
backend's own Triton kernels, for the attention workload (issue 13).

Definition: q [B, H, S, D], k and v [B, KH, KV, D], contiguous, bfloat16,
float16 or float32; H % KH == 0 and query head h reads kv head h // (H // KH)
(GQA; KH == H is MHA). s = q k^T / sqrt(D); with causal, key j is masked for
query i when j > i + (KV - S) (bottom-right aligned, as FlashAttention-2);
softmax over keys in float32; out = P v (float32 accumulation, stored in the
input dtype); lse [B, H, S] float32 = the natural-log logsumexp of each row of
s. With causal and S > KV the first S - KV rows see no key: their out is 0 and
their lse is -inf (the backward gives them zero gradients).

Forward (written from the FlashAttention-2 paper, Dao 2023, Algorithm 1):
  * one program per (BLOCK_M query rows, batch*head); the q tile stays in
    registers while the program walks the kv head's keys BLOCK_N at a time;
  * online softmax in base 2 (scale*log2(e) folded into one multiply, exp2 is
    the hardware's native exponential): running row max m and sum l, the
    accumulator is rescaled by 2^(m_old - m_new) when the max grows, and
    divided by l once at the end; lse = (m + log2 l) * ln 2;
  * the kv range is split in two loops: blocks every row of the tile sees
    whole (no mask arithmetic: below the causal diagonal and inside KV), then
    the few blocks that need the causal / KV-edge mask; blocks entirely above
    the diagonal are never visited;
  * masked scores are -inf; a row whose max is still -inf (all its keys so far
    masked) uses 0 as its max so that exp2 gives 0 instead of NaN.
Specialised at compile time: CAUSAL, D (a power of two >= 16: tl.arange and
tl.dot need it, so D is never masked), the dot dtype, the block sizes.
Precision: float32 inputs use tl.dot with input_precision="ieee" (no TF32);
bf16/fp16 run the tensor-core dot with float32 accumulation, P (and in the
backward dS) rounded to the input dtype before its product, as FlashAttention
does. In the interpreter (TRITON_INTERPRET=1, set before import) the narrow
operands are rounded to their dtype and multiplied as float32 (the
interpreter's narrow-type tl.dot is unreliable, see triton_model.py): the same
products, since bf16/fp16 products are exact in float32.

Tuning: on a GPU @triton.autotune over the configs of CONFIGS[head-dim bucket]
(BLOCK_M, BLOCK_N, num_warps, num_stages), keyed on (S, KV, D, CAUSAL) plus
the dtype, pruned by a shared-memory estimate (_smem) below ~200 KB (an H100
allows 227 KB per block). D = 256 needs smaller tiles: one 128x256 bf16 tile
is 64 KB, and K and V tiles are double-buffered. In the interpreter one small
config (CPU_*), no benchmarking.
Measured: correctness only, in the interpreter (tests/test_triton_attention.py,
float64 reference). Nothing has run on a GPU yet: the configs, the shared
memory estimates and the speed are unmeasured.
"""

from __future__ import annotations

import math
import os

import torch
import triton
import triton.language as tl

INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"
EMULATE = tl.constexpr(INTERPRET)
DOT_DTYPES = {torch.float32: tl.float32, torch.bfloat16: tl.bfloat16, torch.float16: tl.float16}
_DTYPE_NAMES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
LOG2E = 1.4426950408889634


@triton.jit
def _dot(a, b, DT: tl.constexpr):
    # a @ b with float32 accumulation (see the module docstring on precision).
    if DT == tl.float32:
        return tl.dot(a, b, input_precision="ieee")
    elif EMULATE:
        return tl.dot(a.to(DT).to(tl.float32), b.to(DT).to(tl.float32), input_precision="ieee")
    else:
        return tl.dot(a.to(DT), b.to(DT))


@triton.jit
def _mma(a, b, acc, DT: tl.constexpr):
    # acc + a @ b (see _dot).
    if DT == tl.float32:
        return tl.dot(a, b, acc, input_precision="ieee")
    elif EMULATE:
        return tl.dot(a.to(DT).to(tl.float32), b.to(DT).to(tl.float32), acc, input_precision="ieee")
    else:
        return tl.dot(a.to(DT), b.to(DT), acc)


@triton.jit
def kv_range(mb, S, KV, CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """(full, hi) for query block mb: keys [0, full) are seen whole by every
    row of the block (a multiple of BLOCK_N, inside KV); [full, hi) need the
    mask; keys >= hi are masked for every real row of the block."""
    if CAUSAL:
        off = KV - S
        # The last real row sees keys <= its index + off, the first row keys <= m0 + off.
        hi = tl.maximum(tl.minimum(KV, tl.minimum(mb * BLOCK_M + BLOCK_M, S) + off), 0)
        full = tl.maximum(tl.minimum(KV, mb * BLOCK_M + off + 1), 0) // BLOCK_N * BLOCK_N
    else:
        hi = KV
        full = KV // BLOCK_N * BLOCK_N
    return full, hi


@triton.jit
def _fwd_blocks(acc, l_i, m_i, q, kb, vb, rm, lo, hi, KV, OFF, qk_scale,
                MASK: tl.constexpr, CAUSAL: tl.constexpr, D: tl.constexpr, DT: tl.constexpr,
                BLOCK_N: tl.constexpr):
    rd = tl.arange(0, D)
    for n0 in range(lo, hi, BLOCK_N):
        rn = n0 + tl.arange(0, BLOCK_N)
        if MASK:
            kt = tl.load(kb + rn[None, :] * D + rd[:, None], mask=rn[None, :] < KV, other=0.0)  # [D, BN]
            v = tl.load(vb + rn[:, None] * D + rd[None, :], mask=rn[:, None] < KV, other=0.0)
        else:
            kt = tl.load(kb + rn[None, :] * D + rd[:, None])
            v = tl.load(vb + rn[:, None] * D + rd[None, :])
        s = _dot(q, kt, DT) * qk_scale  # log2 units
        if MASK:
            keep = rn[None, :] < KV
            if CAUSAL:
                keep = keep & (rn[None, :] <= rm[:, None] + OFF)
            s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        if MASK:
            m_new = tl.where(m_new == float("-inf"), 0.0, m_new)  # no key seen yet: exp2 -> 0, not NaN
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = _mma(p, v, acc * alpha[:, None], DT)
        m_i = m_new
    return acc, l_i, m_i


@triton.jit
def _fwd_kernel(Q, K, V, O, LSE, H, GROUP, S, KV, qk_scale,
                CAUSAL: tl.constexpr, D: tl.constexpr, DT: tl.constexpr,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    mb = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)  # b * H + h; int64: B*H*S*D may pass 2^31
    bkv = (bh // H) * (H // GROUP) + (bh % H) // GROUP  # b * KH + h // GROUP
    rm = mb * BLOCK_M + tl.arange(0, BLOCK_M)
    rd = tl.arange(0, D)
    qo = bh * S * D + rm[:, None] * D + rd[None, :]
    q = tl.load(Q + qo, mask=rm[:, None] < S, other=0.0)
    kb = K + bkv * KV * D
    vb = V + bkv * KV * D
    acc = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    full, hi = kv_range(mb, S, KV, CAUSAL, BLOCK_M, BLOCK_N)
    acc, l_i, m_i = _fwd_blocks(acc, l_i, m_i, q, kb, vb, rm, 0, full, KV, KV - S, qk_scale,
                                False, CAUSAL, D, DT, BLOCK_N)
    acc, l_i, m_i = _fwd_blocks(acc, l_i, m_i, q, kb, vb, rm, full, hi, KV, KV - S, qk_scale,
                                True, CAUSAL, D, DT, BLOCK_N)
    l_safe = tl.where(l_i == 0.0, 1.0, l_i)  # a row with no visible key: out 0, lse -inf
    tl.store(O + qo, (acc / l_safe[:, None]).to(O.dtype.element_ty), mask=rm[:, None] < S)
    # (m_i of such a row is the 0 that _fwd_blocks put in for -inf)
    lse = tl.where(l_i == 0.0, float("-inf"), (m_i + tl.log2(l_safe)) * 0.6931471805599453)  # * ln 2
    tl.store(LSE + bh * S + rm, lse, mask=rm < S)


def _cfg(bm: int, bn: int, warps: int, stages: int) -> triton.Config:
    return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=warps, num_stages=stages)


# (BLOCK_M, BLOCK_N, num_warps, num_stages) per head-dim bucket (64: D <= 64) and
# kernel. Unmeasured guesses from the tile arithmetic: at D <= 128 a 128-row q
# tile with 64-128 keys a step keeps the tensor cores busy; at D = 256 the q tile
# (BM x 256) and two-three stages of K and V tiles must fit shared memory, so
# BM <= 128 and BN <= 64. The float32 (FMA dot) entries are the small ones.
CONFIGS = {
    "fwd": {64: [(128, 64, 4, 3), (128, 128, 8, 3), (64, 64, 4, 4), (128, 64, 4, 4), (64, 32, 4, 3)],
            128: [(128, 64, 8, 3), (128, 128, 8, 2), (64, 64, 4, 3), (128, 64, 4, 2), (64, 32, 4, 2)],
            256: [(64, 64, 4, 2), (128, 64, 8, 2), (64, 32, 4, 2), (128, 32, 8, 2), (32, 32, 4, 2)]},
    # dk/dv: BLOCK_N kv rows stay (k, v, dk, dv), BLOCK_M q rows stream.
    "dkdv": {64: [(32, 128, 4, 3), (64, 128, 8, 3), (32, 64, 4, 3), (64, 64, 4, 2), (16, 32, 4, 2)],
             128: [(32, 128, 8, 2), (32, 64, 4, 3), (64, 64, 4, 2), (64, 128, 8, 2), (16, 32, 4, 2)],
             256: [(16, 64, 4, 2), (32, 64, 8, 2), (32, 32, 4, 2), (16, 32, 4, 2), (16, 16, 4, 2)]},
    # dq: BLOCK_M q rows stay (q, do, dq), BLOCK_N kv rows stream.
    "dq": {64: [(128, 64, 4, 3), (64, 64, 4, 3), (128, 32, 4, 3), (64, 32, 4, 2)],
           128: [(128, 64, 8, 2), (64, 64, 4, 3), (64, 32, 4, 3), (32, 32, 4, 2)],
           256: [(64, 32, 4, 2), (32, 64, 4, 2), (64, 64, 8, 1), (32, 32, 4, 2)]},
}
# The interpreter's configs (tl.dot needs every dimension >= 16; BM != BN so a
# mix-up of the two shows in the tests).
CPU_CONFIGS = {"fwd": (32, 16), "dkdv": (16, 32), "dq": (32, 16)}
SMEM_LIMIT = 200 * 1024  # of an H100's 227 KB per block, leaving room for layout-conversion scratch


def _bucket(d: int) -> int:
    return 64 if d <= 64 else d


def _smem(kind: str, bm: int, bn: int, stages: int, d: int, esize: int) -> int:
    """Bytes of shared memory a config needs, roughly: the resident tiles once,
    the streamed tiles once per pipeline stage (plus the tile being read)."""
    if kind == "fwd":  # q resident; k, v streamed
        return esize * d * (bm + 2 * bn * max(stages, 1))
    if kind == "dq":  # q, do resident; k, v streamed
        return esize * d * (2 * bm + 2 * bn * max(stages, 1))
    return esize * d * (2 * bn + 2 * bm * max(stages, 1))  # dkdv: k, v resident; q, do streamed


def all_configs(kind: str) -> list:
    seen = dict.fromkeys(c for cs in CONFIGS[kind].values() for c in cs)
    return [_cfg(*c) for c in seen]


def pruner(kind: str):
    """early_config_prune for @triton.autotune: the configs of the call's
    head-dim bucket that fit shared memory (at least the smallest one)."""
    def prune(configs, named_args, **kw):
        args = {**named_args, **kw}
        d, esize = args["D"], args["Q"].element_size()
        want = CONFIGS[kind][_bucket(d)]
        mine = [c for c in configs if (c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.num_warps, c.num_stages) in want]
        fit = [c for c in mine if _smem(kind, c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.num_stages, d, esize)
               <= SMEM_LIMIT]
        return fit or [min(mine, key=lambda c: c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"] * c.num_stages)]
    return prune


_fwd_tuned = triton.autotune(configs=all_configs("fwd"), key=["S", "KV", "D", "CAUSAL"],
                             prune_configs_by={"early_config_prune": pruner("fwd")})(_fwd_kernel)


def check_shapes(B: int, H: int, KH: int, S: int, KV: int, D: int, dtype, device) -> str:
    """'' if the kernels run this problem, else why not."""
    dt = _DTYPE_NAMES.get(dtype, dtype) if isinstance(dtype, str) else dtype
    if dt not in DOT_DTYPES:
        return f"triton attention: dtype {dtype} is not one of float32, bfloat16, float16"
    if min(B, H, KH, S, KV) < 1:
        return f"triton attention: sizes must be >= 1 (B={B} H={H} KH={KH} S={S} KV={KV})"
    if B * H > 65535:  # grid axis 1 is batch*head; CUDA allows 65535 blocks on axis 1
        return f"triton attention: B*H = {B * H} is over the grid's 65535"
    if H % KH:
        return f"triton attention: H={H} is not a multiple of KH={KH}"
    if D < 16 or D > 256 or D & (D - 1):
        return f"triton attention: head dim D={D} must be a power of two in [16, 256] (tl.arange / tl.dot tiles)"
    kind = str(device).split(":")[0]
    if kind == "cpu" and not INTERPRET:
        return "triton attention on cpu needs TRITON_INTERPRET=1 set before triton is imported"
    if kind == "cuda" and INTERPRET:
        return "triton attention: this process runs Triton's interpreter (TRITON_INTERPRET=1); cuda needs it unset"
    if kind not in ("cpu", "cuda"):
        return f"triton attention: device {device} is not cpu or cuda"
    return ""


def check(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
    """Raises ValueError unless q, k, v form a supported problem."""
    if q.dim() != 4 or k.shape != v.shape or k.dim() != 4 or q.shape[0] != k.shape[0] or q.shape[3] != k.shape[3]:
        raise ValueError(f"triton attention: q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)} "
                         "are not [B, H, S, D], [B, KH, KV, D], [B, KH, KV, D]")
    if not (q.dtype == k.dtype == v.dtype):
        raise ValueError(f"triton attention: dtypes differ ({q.dtype}, {k.dtype}, {v.dtype})")
    B, H, S, D = q.shape
    why = check_shapes(B, H, k.shape[1], S, k.shape[2], D, q.dtype, q.device.type)
    if why:
        raise ValueError(why)


def forward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool):
    """(out [B, H, S, D] in q's dtype, lse [B, H, S] float32)."""
    check(q, k, v)
    q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
    B, H, S, D = q.shape
    KH, KV = k.shape[1], k.shape[2]
    out = torch.empty_like(q)
    lse = torch.empty((B, H, S), device=q.device, dtype=torch.float32)
    args = (q, k, v, out, lse, H, H // KH, S, KV, LOG2E / math.sqrt(D))
    kw = dict(CAUSAL=bool(causal), D=D, DT=DOT_DTYPES[q.dtype])
    if INTERPRET:
        bm, bn = CPU_CONFIGS["fwd"]
        _fwd_kernel[(triton.cdiv(S, bm), B * H)](*args, **kw, BLOCK_M=bm, BLOCK_N=bn)
    else:
        _fwd_tuned[lambda m: (triton.cdiv(S, m["BLOCK_M"]), B * H)](*args, **kw)
    return out, lse


def backward(q, k, v, out, lse, dout, causal: bool):
    """(dq, dk, dv) of sum(out * dout); dk, dv summed over each kv head's query heads."""
    from triton_attention_bwd import backward as _bwd  # the kernels live there (file size)
    return _bwd(q, k, v, out, lse, dout, causal)


class _Attention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, causal):
        out, lse = forward(q, k, v, causal)
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.causal = causal
        return out

    @staticmethod
    def backward(ctx, dout):
        dq, dk, dv = backward(*ctx.saved_tensors, dout, ctx.causal)
        return dq, dk, dv, None


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> torch.Tensor:
    """out of forward(), differentiable in q, k, v through backward()."""
    return _Attention.apply(q, k, v, causal)
