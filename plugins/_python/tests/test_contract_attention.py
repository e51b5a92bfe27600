"""The attention view of the contract (xbench_py.workloads.Attention): params
from the harness's canonical strings, the 0 defaults, the spec's rules for a
module called outside the harness, the export tensors, the capability entry."""

import numpy as np
import pytest

from xbench_py import types as xt
from xbench_py import workloads as xw


def _cfg(phase="forward", **params):
    base = {"batch": "2", "heads": "8", "kv_heads": "2", "seq_len": "5", "kv_len": "0", "head_dim": "3",
            "causal": "true", "dtype": "bfloat16"}
    base.update(params)
    return xt.Config(workload="attention", phase=phase, params=base)


def test_view_converts_and_round_trips():
    v = xw.VIEWS["attention"].from_config(_cfg())
    assert isinstance(v, xw.Attention)
    assert (v.batch, v.heads, v.kvh, v.seq_len, v.kv, v.head_dim, v.causal) == (2, 8, 2, 5, 5, 3, True)
    assert v.group == 4 and v.q_shape() == (2, 8, 5, 3) and v.k_shape() == (2, 2, 5, 3)
    assert v.scale == pytest.approx(3 ** -0.5)
    # "true", not Python's "True": the harness's canonical spelling
    assert v.config().params == _cfg().params


def test_zero_means_the_other_param():
    v = xw.Attention(heads=6, kv_heads=0, seq_len=7, kv_len=0)
    assert v.kvh == 6 and v.kv == 7 and v.group == 1
    w = xw.Attention(seq_len=7, kv_len=9)
    assert w.kv == 9 and w.k_shape()[2] == 9


@pytest.mark.parametrize("bad", ["True", "1", "yes", ""])
def test_bool_must_be_canonical(bad):
    with pytest.raises(xt.ConfigError, match="causal"):
        xw.VIEWS["attention"].from_config(_cfg(causal=bad))


def test_outputs_and_tensors_by_phase():
    fwd = xw.Attention.from_config(_cfg())
    bwd = xw.Attention.from_config(_cfg("backward"))
    assert fwd.outputs() == ("out",) and not fwd.backward
    assert bwd.outputs() == ("out", "dq", "dk", "dv") and bwd.backward and xw.Attention(phase="both").backward
    q, k = np.zeros(fwd.q_shape()), np.zeros(fwd.k_shape())
    fwd.check_tensors({}, {"q": q, "k": k, "v": k})
    with pytest.raises(ValueError, match="dout"):
        bwd.check_tensors({}, {"q": q, "k": k, "v": k})
    with pytest.raises(ValueError, match="'k' has shape"):
        fwd.check_tensors({}, {"q": q, "k": q, "v": k})


@pytest.mark.parametrize("params,match", [
    ({"heads": 8, "kv_heads": 3}, "does not divide"),
    ({"causal": True, "seq_len": 4, "kv_len": 6}, "causal needs kv_len = seq_len"),
    ({"head_dim": 0}, ">= 1"),
    ({"dtype": "tf32"}, "dtype"),
])
def test_check_refuses_what_the_spec_forbids(params, match):
    with pytest.raises(ValueError, match=match):
        xw.Attention(**params).check()
    xw.Attention(heads=8, kv_heads=4, causal=True, seq_len=4, kv_len=4).check()


def test_attention_caps():
    caps = xt.attention_caps(("cpu", "cuda"))
    assert caps.to_json() == {"workload": "attention", "phases": ["forward", "backward", "both"],
                              "devices": ["cpu", "cuda"], "values": {"dtype": ["float32", "bfloat16", "float16"]}}
    assert caps.refusal(_cfg(dtype="float16"), "cpu", "x") is None
    assert "phase inner_only" in caps.refusal(_cfg("inner_only"), "cpu", "x")
