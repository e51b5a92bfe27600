"""Flash attention (forward here, backward in attention_bwd.py) as this
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
    registers (bf16/fp16) while the program walks the kv head's keys BLOCK_N
    at a time;
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
tl.dot need it, so D is never masked), the dot dtype, the block sizes, CHUNK.
Precision: float32 inputs use tl.dot with input_precision="ieee" (no TF32),
an FMA loop; at D > 32 its D-contracted products (q k^T here; k q^T, v do^T,
q k^T, do v^T in the backward) take D in CHUNK = 32 column steps read from
memory (_rows_dot), since whole-D register operands spilled (see
attention_cfg.py);
bf16/fp16 run the tensor-core dot with float32 accumulation, P (and in the
backward dS) rounded to the input dtype before its product, as FlashAttention
does. In the interpreter (TRITON_INTERPRET=1, set before import) the narrow
operands are rounded to their dtype and multiplied as float32 (the
interpreter's narrow-type tl.dot is unreliable, see dot.py): the same
products, since bf16/fp16 products are exact in float32.

Tuning: on a GPU @triton.autotune over the configs of attention_cfg
(BLOCK_M, BLOCK_N, num_warps, num_stages per kernel, head-dim bucket and
operand width), keyed on (S, KV, D, CAUSAL) plus the dtype. D = 256 needs
smaller tiles: one 128x256 bf16 tile is 64 KB, and K and V tiles are
double-buffered (an H100 allows 227 KB per block). The first call of a shape
benchmarks its configs (seconds), so time after a warm-up call. In the
interpreter one small config (CPU_CONFIGS), no benchmarking.
Measured: correctness in the interpreter (plugins/triton/tests/test_triton_attention.py,
float64 reference); every GPU config compiled for sm_90 without a GPU (shared
memory, spills: attention_cfg.py). Nothing has RUN on a GPU yet: GPU
correctness, the autotuner's choices and the speed are unmeasured.
"""

from __future__ import annotations

import math
import os

import torch
import triton
import triton.language as tl

from xbench_triton.attention_cfg import CPU_CONFIGS, all_configs, pruner
from xbench_triton.dot import DOT_DTYPES, DOT_NAMES
from xbench_triton.dot import _mm as _dot, _mma  # the products; attention_bwd imports them from here
from xbench_pytorch.model import torch_dtype

INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"
LOG2E = 1.4426950408889634


@triton.jit
def _rows_dot(A, ra, a_lim, B, rb, b_lim, D: tl.constexpr, DK: tl.constexpr):
    # A[ra, :] @ B[rb, :]^T of float32 rows (rows >= the limits read as 0), D
    # contracted DK columns at a time, the operands re-read from memory (L1/L2)
    # per chunk. IEEE float32 tl.dot is an FMA loop in which each thread holds
    # its rows and columns over the whole contraction: with K = D >= 128 that
    # spilled kilobytes of stack at every tile size (ptxas, sm_90).
    rk = tl.arange(0, DK)
    acc = tl.zeros((ra.shape[0], rb.shape[0]), dtype=tl.float32)
    for c in tl.static_range(D // DK):
        a = tl.load(A + ra[:, None] * D + c * DK + rk[None, :], mask=ra[:, None] < a_lim, other=0.0)
        bt = tl.load(B + rb[None, :] * D + c * DK + rk[:, None], mask=rb[None, :] < b_lim, other=0.0)
        acc = tl.dot(a, bt, acc, input_precision="ieee")
    return acc


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
def _fwd_blocks(acc, l_i, m_i, q, qb, kb, vb, rm, lo, hi, S, KV, qk_scale,
                MASK: tl.constexpr, CAUSAL: tl.constexpr, D: tl.constexpr, DT: tl.constexpr,
                BLOCK_N: tl.constexpr, CHUNK: tl.constexpr):
    # (an operand a branch leaves unused, q or kt, is dropped by the compiler)
    OFF = KV - S
    rd = tl.arange(0, D)
    for n0 in range(lo, hi, BLOCK_N):
        rn = n0 + tl.arange(0, BLOCK_N)
        if MASK:
            kt = tl.load(kb + rn[None, :] * D + rd[:, None], mask=rn[None, :] < KV, other=0.0)  # [D, BN]
            v = tl.load(vb + rn[:, None] * D + rd[None, :], mask=rn[:, None] < KV, other=0.0)
        else:
            kt = tl.load(kb + rn[None, :] * D + rd[:, None])
            v = tl.load(vb + rn[:, None] * D + rd[None, :])
        if CHUNK:
            s = _rows_dot(qb, rm, S, kb, rn, KV, D, CHUNK) * qk_scale  # log2 units
        else:
            s = _dot(q, kt, DT) * qk_scale
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
                CAUSAL: tl.constexpr, D: tl.constexpr, DT: tl.constexpr, CHUNK: tl.constexpr,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    mb = tl.program_id(0)
    if CAUSAL:  # the last query blocks see the most keys: start them first
        mb = tl.num_programs(0) - 1 - mb
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
    qb = Q + bh * S * D
    acc, l_i, m_i = _fwd_blocks(acc, l_i, m_i, q, qb, kb, vb, rm, 0, full, S, KV, qk_scale,
                                False, CAUSAL, D, DT, BLOCK_N, CHUNK)
    acc, l_i, m_i = _fwd_blocks(acc, l_i, m_i, q, qb, kb, vb, rm, full, hi, S, KV, qk_scale,
                                True, CAUSAL, D, DT, BLOCK_N, CHUNK)
    l_safe = tl.where(l_i == 0.0, 1.0, l_i)  # a row with no visible key: out 0, lse -inf
    tl.store(O + qo, (acc / l_safe[:, None]).to(O.dtype.element_ty), mask=rm[:, None] < S)
    # (m_i of such a row is the 0 that _fwd_blocks put in for -inf)
    lse = tl.where(l_i == 0.0, float("-inf"), (m_i + tl.log2(l_safe)) * 0.6931471805599453)  # * ln 2
    tl.store(LSE + bh * S + rm, lse, mask=rm < S)


_fwd_tuned = triton.autotune(configs=all_configs("fwd"), key=["S", "KV", "D", "CAUSAL"],
                             prune_configs_by={"early_config_prune": pruner("fwd")})(_fwd_kernel)


def chunk(dtype: torch.dtype, d: int) -> int:
    """The CHUNK constexpr: 0 (D-contracted dots on whole register tiles), or
    the columns per step of _rows_dot for float32 at D > 32 (in the
    interpreter too, so the tests run that path)."""
    return 32 if dtype == torch.float32 and d > 32 else 0


def check_shapes(B: int, H: int, KH: int, S: int, KV: int, D: int, dtype, device) -> str:
    """'' if the kernels run this problem, else why not."""
    dt = torch_dtype(dtype) if dtype in DOT_NAMES else dtype
    if dt not in DOT_DTYPES:
        return f"triton attention: dtype {dtype} is not one of {', '.join(DOT_NAMES)}"
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
    kw = dict(CAUSAL=bool(causal), D=D, DT=DOT_DTYPES[q.dtype], CHUNK=chunk(q.dtype, D))
    if INTERPRET:
        bm, bn = CPU_CONFIGS["fwd"]
        _fwd_kernel[(triton.cdiv(S, bm), B * H)](*args, **kw, BLOCK_M=bm, BLOCK_N=bn)
    else:
        _fwd_tuned[lambda m: (triton.cdiv(S, m["BLOCK_M"]), B * H)](*args, **kw)
    return out, lse


def backward(q, k, v, out, lse, dout, causal: bool):
    """(dq, dk, dv) of sum(out * dout); dk, dv summed over each kv head's query heads."""
    from xbench_triton.attention_bwd import backward as _bwd  # the kernels live there (file size)
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
