"""The pytorch attention (attention.py) on cpu: every variant that runs there,
forward and both/backward, GQA and causal, odd sizes, against the float64
reference of attention_ref.py; refusals become xt.Unsupported."""

import numpy as np
import pytest
import torch

import attention
from xbench_py import types as xt
from xbench_py import workloads as xw
from attention_ref import inputs, reference, rel

TOL = {"float32": 1e-5, "bfloat16": 2e-2, "float16": 5e-3}
CPU_VARIANTS = ("", "sdpa-flash", "sdpa-math", "naive")


def _cfg(phase="forward", dtype="float32", causal=False, kv_heads=2):
    return xw.Attention(batch=2, heads=4, kv_heads=kv_heads, seq_len=13, head_dim=24, causal=causal, dtype=dtype, phase=phase)


@pytest.mark.parametrize("variant", CPU_VARIANTS)
@pytest.mark.parametrize("phase", ["forward", "backward", "both"])
@pytest.mark.parametrize("causal", [False, True])
def test_export_matches_float64(variant, phase, causal):
    cfg = _cfg(phase, causal=causal)
    x = inputs(cfg)
    got = attention.export(cfg, variant, "cpu", x)
    want = reference(x["q"], x["k"], x["v"], x.get("dout"), causal)
    assert tuple(got) == cfg.outputs()
    for name, ref in zip(("out", "dq", "dk", "dv"), want):
        if name in got:
            assert got[name].shape == ref.shape and got[name].dtype == np.float32
            assert rel(got[name], ref) < 1e-5, name


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("variant", ["", "naive"])
def test_low_precision(dtype, variant):
    cfg = _cfg("both", dtype=dtype, causal=True, kv_heads=1)
    x = inputs(cfg)
    x = {k: torch.from_numpy(a).to(attention.DTYPES[dtype]).float().numpy() for k, a in x.items()}  # exact in dtype
    got = attention.export(cfg, variant, "cpu", x)
    for name, ref in zip(("out", "dq", "dk", "dv"), reference(x["q"], x["k"], x["v"], x["dout"], True)):
        assert rel(got[name], ref) < TOL[dtype], name


def test_efficient_kernel_is_unsupported_on_cpu():
    cfg = _cfg()
    with pytest.raises(xt.Unsupported, match="EFFICIENT_ATTENTION kernel .* on cpu"):
        attention.export(cfg, "sdpa-efficient", "cpu", inputs(cfg))


def test_cudnn_kernel_is_unsupported_on_cpu():
    cfg = _cfg()
    with pytest.raises(xt.Unsupported, match="CUDNN_ATTENTION kernel .* on cpu"):
        attention.export(cfg, "sdpa-cudnn", "cpu", inputs(cfg))


def test_unknown_variant():
    with pytest.raises(ValueError, match="unknown variant 'flash3'"):
        attention.function(_cfg(), "flash3")


@pytest.mark.parametrize("phase", ["forward", "backward", "both"])
def test_prepare_step(phase):
    cfg = _cfg(phase, causal=True)
    step = attention.prepare(cfg, "", "cpu", seed=3)
    first, again = step(), step()
    if phase == "forward":
        assert first.shape == cfg.q_shape() and not first.requires_grad
        return
    grads = first[-3:]
    assert [tuple(g.shape) for g in grads] == [cfg.q_shape(), cfg.k_shape(), cfg.k_shape()]
    # the gradients are returned, not accumulated: every call does the same work
    for a, b in zip(grads, again[-3:]):
        assert torch.equal(a, b)


def test_compile_variant_matches_eager():
    cfg = _cfg("both", causal=True)
    x = inputs(cfg)
    eager, compiled = attention.export(cfg, "", "cpu", x), attention.export(cfg, "compile", "cpu", x)
    for name in cfg.outputs():
        assert rel(compiled[name], eager[name].astype(np.float64)) < 1e-6, name
