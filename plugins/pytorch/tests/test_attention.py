"""The pytorch attention (xbench_pytorch.attention) on cpu beyond the conformance suite
(plugins/_python/tests/test_conformance.py, which checks every variant and
phase against the float64 reference): refusals become xt.Unsupported, the
prepared step, and the compile variant against eager."""

import numpy as np
import pytest
import torch

from xbench_pytorch import attention
from xbench_py import types as xt
from xbench_py import workloads as xw
from xbench_py.attention_ref import inputs, rel



def _cfg(phase="forward", dtype="float32", causal=False, kv_heads=2):
    return xw.Attention(batch=2, heads=4, kv_heads=kv_heads, seq_len=13, head_dim=24, causal=causal, dtype=dtype, phase=phase)


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
