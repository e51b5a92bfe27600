"""The jax attention (xbench_jax/attention.py) on cpu beyond the conformance suite
(plugins/_python/tests/test_conformance.py, which checks every phase and
variant against the float64 reference): refusals (cuDNN without a GPU,
float16 on XLA:CPU) become xt.Unsupported, and the prepared step."""

import jax
import numpy as np
import pytest

from xbench_jax import attention as ja
from xbench_py import types as xt
from xbench_py import workloads as xw

CPU = jax.devices("cpu")[0]


def _cfg(phase="forward", dtype="float32", causal=False, kv_heads=2):
    return xw.Attention(batch=2, heads=4, kv_heads=kv_heads, seq_len=13, head_dim=24, causal=causal, dtype=dtype, phase=phase)


@pytest.mark.parametrize("variant,dtype,match", [
    ("cudnn", "bfloat16", "implementation cudnn"),
    ("", "float16", "float16 head_dim 24 on cpu"),
])
def test_refusals_are_unsupported(variant, dtype, match):
    cfg = _cfg(dtype=dtype)
    with pytest.raises(xt.Unsupported, match=match):
        ja.prepare(cfg, variant, CPU, seed=0)


def test_unknown_variant():
    with pytest.raises(ValueError, match="unknown variant 'flash'"):
        ja.function(_cfg(), "flash")


@pytest.mark.parametrize("phase", ["forward", "backward", "both"])
def test_prepare_step(phase):
    cfg = _cfg(phase, causal=True)
    step = ja.prepare(cfg, "", CPU, seed=3)
    first, again = step(), step()
    btnh = lambda s: (s[0], s[2], s[1], s[3])  # noqa: E731  the timed call's layout is JAX's own
    if phase == "forward":
        assert first.shape == btnh(cfg.q_shape())
        return
    shapes = [tuple(g.shape) for g in first[-3:]]
    assert shapes == [btnh(cfg.q_shape()), btnh(cfg.k_shape()), btnh(cfg.k_shape())]
    for a, b in zip(first, again):
        assert np.array_equal(np.asarray(a), np.asarray(b))
