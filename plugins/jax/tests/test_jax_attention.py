"""The jax attention (jax_attention.py) on cpu: the default and xla
implementations, forward, backward and both, GQA and causal, odd sizes,
against the float64 reference the pytorch tests use; refusals (cuDNN
without a GPU, float16 on XLA:CPU) become xt.Unsupported."""

import os
import sys

import jax
import numpy as np
import pytest

import jax_attention as ja
from xbench_py import types as xt
from xbench_py import workloads as xw

# The framework-free numpy reference lives beside the pytorch backend's tests.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "pytorch", "tests"))
from attention_ref import inputs, reference, rel  # noqa: E402

CPU = jax.devices("cpu")[0]


def _cfg(phase="forward", dtype="float32", causal=False, kv_heads=2):
    return xw.Attention(batch=2, heads=4, kv_heads=kv_heads, seq_len=13, head_dim=24, causal=causal, dtype=dtype, phase=phase)


@pytest.mark.parametrize("variant", ["", "xla"])
@pytest.mark.parametrize("phase", ["forward", "backward", "both"])
@pytest.mark.parametrize("causal", [False, True])
def test_export_matches_float64(variant, phase, causal):
    cfg = _cfg(phase, causal=causal)
    x = inputs(cfg)
    got = ja.export(cfg, variant, CPU, x)
    assert tuple(got) == cfg.outputs()
    for name, ref in zip(("out", "dq", "dk", "dv"), reference(x["q"], x["k"], x["v"], x.get("dout"), causal)):
        if name in got:
            assert got[name].shape == ref.shape and got[name].dtype == np.float32
            assert rel(got[name], ref) < 1e-5, name


def test_bfloat16():
    cfg = _cfg("both", dtype="bfloat16", causal=True, kv_heads=1)
    x = {k: np.asarray(jax.numpy.asarray(a, jax.numpy.bfloat16).astype(np.float32)) for k, a in inputs(cfg).items()}
    got = ja.export(cfg, "", CPU, x)
    for name, ref in zip(("out", "dq", "dk", "dv"), reference(x["q"], x["k"], x["v"], x["dout"], True)):
        assert rel(got[name], ref) < 2e-2, name


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
