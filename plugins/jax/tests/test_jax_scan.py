"""The jax scan (xbench_jax.scan) on cpu against the pytorch scan's autograd
(gradients of log and max), K from 1 to 5, odd C, variable lengths; the
forward against the spec is in the conformance suite (plugins/_python/tests/test_conformance.py)."""

import jax
import numpy as np
import pytest

from xbench_jax import scan
from xbench_pytorch import scan as torch_scan  # the pytorch backend's scan: the gradient reference
from xbench_py import workloads as xw
from xbench_py import scan_ref as ref

SHAPES = [(9, 1, 2, 3), (12, 2, 3, 2), (17, 4, 3, 3), (20, 5, 5, 2)]  # T, K, C, batch
CPU = jax.devices("cpu")[0]


def _inputs(cfg):
    return {k: (v if k == "lengths" else v.astype(np.float32)) for k, v in ref.fixtures(cfg, 1).items()}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("semiring", ["log", "max"])
@pytest.mark.parametrize("phase", ["backward", "both"])
def test_gradients_match_autograd(shape, semiring, phase):
    T, K, C, B = shape
    cfg = xw.Scan(T=T, K=K, C=C, batch=B, semiring=semiring, phase=phase)
    x = _inputs(cfg)
    got = scan.export(cfg, CPU, x)
    want = torch_scan.export(xw.Scan(T=T, K=K, C=C, batch=B, semiring=semiring, phase=phase, dtype="float64"), "cpu",
                       {k: (v if k == "lengths" else v.astype(np.float64)) for k, v in x.items()}, torch_scan.forward_fn(""))
    assert tuple(got) == cfg.outputs()
    for name in cfg.outputs():
        assert not np.isnan(got[name]).any(), name
        assert np.allclose(got[name], want[name], rtol=1e-4, atol=1e-4), name


def test_prepare_counts_memory():
    cfg = xw.Scan(T=10, K=3, C=2, batch=2, phase="both")
    p = scan.prepare(cfg, CPU, 0)
    out = p.step()
    assert len(out) == 4 and out[1].shape == (2, 11, 2)
    assert p.memory["state"] == 3 * 2 * 2 * 4 * 10 and p.memory["workspace"] > 0
