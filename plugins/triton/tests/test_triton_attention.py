"""The flash-attention kernels (xbench_triton/attention.py, xbench_triton/attention_bwd.py) in
Triton's interpreter (conftest sets TRITON_INTERPRET=1): out, lse, dq, dk, dv
against a float64 reference computed from the definition (explicit
bottom-right causal mask, GQA by repeating kv heads, softmax, autograd for the
gradients). Not torch's sdpa: its causal mask is top-left aligned. The sizes
are ragged for the interpreter's blocks (32x16 forward/dq, 16x32 dk/dv)."""

import math

import pytest
import torch

from xbench_triton import attention as ta
from xbench_triton import attention_cfg as cfg

# bf16 measures ~6e-3 (P, dS and the outputs rounded to 8 bits), fp16 ~3e-4.
TOL = {torch.float32: 1e-5, torch.bfloat16: 1e-2, torch.float16: 2e-3}


def _inputs(B, H, KH, S, KV, D, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(B, H, S, D, generator=g).to(dtype)
    k = torch.randn(B, KH, KV, D, generator=g).to(dtype)
    v = torch.randn(B, KH, KV, D, generator=g).to(dtype)
    dout = torch.randn(B, H, S, D, generator=g).to(dtype)
    return q, k, v, dout


def _reference(q, k, v, dout, causal):
    """float64 (out, lse, dq, dk, dv) of the definition, from the rounded inputs."""
    q, k, v = (t.double().requires_grad_() for t in (q, k, v))
    B, H, S, D = q.shape
    KH, KV = k.shape[1], k.shape[2]
    kk, vv = k.repeat_interleave(H // KH, 1), v.repeat_interleave(H // KH, 1)  # head h reads kv head h // (H/KH)
    s = q @ kk.transpose(-1, -2) / math.sqrt(D)
    if causal:
        i, j = torch.arange(S)[:, None], torch.arange(KV)[None, :]
        s = s.masked_fill(j > i + (KV - S), float("-inf"))
    lse = torch.logsumexp(s, -1)
    # Rows with no visible key (causal, S > KV): p = 0, out = 0 (the kernels' definition).
    m = s.amax(-1, keepdim=True).clamp_min(-1e300).detach()
    e = torch.exp(s - m)
    p = e / e.sum(-1, keepdim=True).clamp_min(1e-300)
    out = p @ vv
    out.backward(dout.double())
    return out.detach(), lse.detach(), q.grad, k.grad, v.grad


def _rel(x, ref):
    return float((x.double() - ref).norm() / ref.norm())


def _lse_err(lse, ref):
    finite = torch.isfinite(ref)
    assert torch.equal(torch.isfinite(lse), finite) and (lse[~finite] == float("-inf")).all()
    return float((lse.double()[finite] - ref[finite]).abs().max())


CASES = [  # B, H, KH, S, KV, D, dtype, causal
    (1, 4, 2, 37, 53, 16, torch.float32, True),    # GQA, S < KV, ragged
    (2, 4, 2, 37, 53, 32, torch.float32, False),
    (1, 2, 2, 64, 64, 32, torch.float32, True),    # MHA, S == KV, whole blocks (unmasked loops)
    (1, 2, 2, 45, 45, 16, torch.float32, False),
    (1, 3, 1, 53, 37, 16, torch.float32, True),    # MQA, S > KV: the first 16 rows see no key
    (1, 4, 2, 37, 53, 16, torch.bfloat16, True),
    (1, 2, 2, 40, 40, 32, torch.bfloat16, False),
    (1, 4, 2, 33, 50, 32, torch.float16, True),
    (1, 2, 1, 29, 29, 16, torch.float16, False),
]


@pytest.mark.parametrize("B,H,KH,S,KV,D,dtype,causal", CASES)
def test_forward_backward_match_float64(B, H, KH, S, KV, D, dtype, causal):
    q, k, v, dout = _inputs(B, H, KH, S, KV, D, dtype)
    out, lse = ta.forward(q, k, v, causal)
    assert out.shape == q.shape and out.dtype == dtype
    assert lse.shape == (B, H, S) and lse.dtype == torch.float32
    dq, dk, dv = ta.backward(q, k, v, out, lse, dout, causal)
    assert dq.shape == q.shape and dk.shape == k.shape and dv.shape == v.shape
    assert dq.dtype == dk.dtype == dv.dtype == dtype
    r_out, r_lse, r_dq, r_dk, r_dv = _reference(q, k, v, dout, causal)
    errs = {"out": _rel(out, r_out), "dq": _rel(dq, r_dq), "dk": _rel(dk, r_dk), "dv": _rel(dv, r_dv)}
    assert max(errs.values()) < TOL[dtype], errs
    assert _lse_err(lse, r_lse) < 1e-4


@pytest.mark.parametrize("D", [64, 128, 256])
def test_workload_head_dims(D):
    # The head dims the workload runs on a GPU (there with other blocks), tiny.
    q, k, v, dout = _inputs(1, 2, 1, 20, 35, D, torch.float32, seed=D)
    out, lse = ta.forward(q, k, v, True)
    dq, dk, dv = ta.backward(q, k, v, out, lse, dout, True)
    r_out, r_lse, r_dq, r_dk, r_dv = _reference(q, k, v, dout, True)
    errs = [_rel(out, r_out), _rel(dq, r_dq), _rel(dk, r_dk), _rel(dv, r_dv)]
    assert max(errs) < 1e-5, errs
    assert _lse_err(lse, r_lse) < 1e-4


def test_rows_without_keys_are_zero():
    # causal with S > KV: rows i < S - KV see no key; out 0, lse -inf, dq 0.
    q, k, v, dout = _inputs(1, 2, 2, 40, 24, 16, torch.float32, seed=3)
    out, lse = ta.forward(q, k, v, True)
    dq, dk, dv = ta.backward(q, k, v, out, lse, dout, True)
    assert (out[:, :, :16] == 0).all() and (lse[:, :, :16] == float("-inf")).all() and (dq[:, :, :16] == 0).all()
    assert torch.isfinite(lse[:, :, 16:]).all() and (out[:, :, 16:].abs().sum(-1) > 0).all()
    assert all(torch.isfinite(t).all() for t in (dq, dk, dv))


def test_wrong_causal_flag_is_caught():
    # The comparison can fail: the non-causal kernel against the causal reference.
    q, k, v, dout = _inputs(1, 4, 2, 37, 53, 16, torch.float32)
    out, lse = ta.forward(q, k, v, False)
    dq, dk, dv = ta.backward(q, k, v, out, lse, dout, False)
    r_out, r_lse, r_dq, r_dk, r_dv = _reference(q, k, v, dout, True)
    assert _rel(out, r_out) > 0.1 and _rel(dq, r_dq) > 0.1 and _rel(dk, r_dk) > 0.1 and _rel(dv, r_dv) > 0.1
    assert float((lse.double() - r_lse).abs().max()) > 0.1


def test_autograd_wrapper_and_strided_inputs():
    # attention() runs backward() through autograd; q given as a transposed view
    # ([B, S, H, D] storage) is made contiguous by the API.
    q, k, v, dout = _inputs(1, 4, 2, 37, 53, 16, torch.float32, seed=1)
    qs = q.transpose(1, 2).contiguous().transpose(1, 2).requires_grad_()
    kr, vr = k.clone().requires_grad_(), v.clone().requires_grad_()
    out = ta.attention(qs, kr, vr, True)
    out.backward(dout)
    r_out, _, r_dq, r_dk, r_dv = _reference(q, k, v, dout, True)
    assert _rel(out.detach(), r_out) < 1e-5
    assert max(_rel(qs.grad, r_dq), _rel(kr.grad, r_dk), _rel(vr.grad, r_dv)) < 1e-5


def test_check_shapes():
    ok = (2, 8, 2, 100, 100, 128, torch.bfloat16, "cpu")
    assert ta.check_shapes(*ok) == ""
    assert ta.check_shapes(2, 8, 2, 100, 100, 64, "float16", "cpu") == ""
    for d in (8, 48, 96, 512):
        assert "head dim" in ta.check_shapes(2, 8, 2, 100, 100, d, torch.float32, "cpu")
    assert "multiple" in ta.check_shapes(2, 6, 4, 100, 100, 64, torch.float32, "cpu")
    assert "grid" in ta.check_shapes(4096, 32, 8, 100, 100, 64, torch.float32, "cpu")
    assert "dtype" in ta.check_shapes(2, 8, 2, 100, 100, 64, torch.float64, "cpu")
    assert "dtype" in ta.check_shapes(2, 8, 2, 100, 100, 64, "float8_e4m3", "cpu")
    assert "interpreter" in ta.check_shapes(2, 8, 2, 100, 100, 64, torch.float32, "cuda")
    q, k, v, _ = _inputs(1, 2, 2, 8, 8, 16, torch.float32)
    with pytest.raises(ValueError):
        ta.forward(q, k.to(torch.float16), v, False)
    with pytest.raises(ValueError):
        ta.forward(torch.randn(1, 2, 8, 24), torch.randn(1, 2, 8, 24), torch.randn(1, 2, 8, 24), False)


class _Elem:  # stands in for q in the pruner's arguments
    def __init__(self, size):
        self.size = size

    def element_size(self):
        return self.size


@pytest.mark.parametrize("kind", ["fwd", "dkdv", "dq"])
def test_gpu_configs(kind):
    cfgs = cfg.all_configs(kind)
    prune = cfg.pruner(kind)
    for c in cfgs:
        for name in ("BLOCK_M", "BLOCK_N"):
            b = c.kwargs[name]
            assert b >= 16 and b & (b - 1) == 0
    for d in (16, 32, 64, 128, 256):
        for esize in (2, 4):
            kept = prune(cfgs, {"Q": _Elem(esize)}, D=d)
            want = cfg.table(kind, d, esize)
            assert kept and sorted(cfg._key(c) for c in kept) == sorted(want)  # all listed ones fit
            if esize == 2:
                assert all(cfg.smem(kind, *k[:2], k[3], d, 2) <= cfg.SMEM_LIMIT for k in want)
    # D = 256 runs smaller tiles than D = 64.
    for esize in (2, 4):
        area = {d: max(k[0] * k[1] for k in cfg.table(kind, d, esize)) for d in (64, 256)}
        assert area[256] < area[64]
    # A config over the estimate is pruned.
    huge = cfg.all_configs(kind) + [cfg.triton.Config({"BLOCK_M": 256, "BLOCK_N": 256}, num_warps=8, num_stages=4)]
    cfg.CONFIGS[kind][256].append((256, 256, 8, 4))
    try:
        assert (256, 256, 8, 4) not in [cfg._key(c) for c in prune(huge, {"Q": _Elem(2)}, D=256)]
    finally:
        cfg.CONFIGS[kind][256].pop()
