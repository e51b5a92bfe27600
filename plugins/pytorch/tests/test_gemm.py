"""The pytorch GEMM module (gemm.py) on cpu beyond the conformance suite (plugins/_python/tests/test_conformance.py),
which checks every layout and dtype against a float64 product: its dtypes,
the prepared step's shape, dtype and seed, TF32 off for float32, and bad
params."""

import numpy as np
import pytest

from xbench_pytorch import gemm

M, N, K = 17, 33, 40
TOL = {"float32": 1e-5, "bfloat16": 2e-2, "float16": 2e-3}


def _inputs(layout, batch, seed=0):
    rng = np.random.default_rng(seed)
    sa, sb = gemm.stored_shapes(M, N, K, batch, layout)
    return rng.standard_normal(sa).astype(np.float32), rng.standard_normal(sb).astype(np.float32)


def _reference(layout, a, b):
    opa = a if layout[0] == "n" else np.swapaxes(a, 1, 2)
    opb = b if layout[1] == "n" else np.swapaxes(b, 1, 2)
    return np.matmul(opa.astype(np.float64), opb.astype(np.float64))


def _rel(x, ref):
    return float(np.linalg.norm(x.astype(np.float64) - ref) / np.linalg.norm(ref))


def _params(layout, batch, dtype):
    return {"m": str(M), "n": str(N), "k": str(K), "batch": str(batch), "layout": layout, "dtype": dtype}


def test_bfloat16_listed_on_cpu():
    assert "bfloat16" in gemm.DTYPES["cpu"] and "float32" in gemm.DTYPES["cpu"]


def test_stored_shapes_follow_layout():
    assert gemm.stored_shapes(2, 3, 5, 1, "tn") == ((1, 5, 2), (1, 5, 3))
    assert gemm.stored_shapes(2, 3, 5, 4, "nt") == ((4, 2, 5), (4, 3, 5))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("layout,batch", [("nn", 1), ("tt", 3), ("nt", 3), ("tn", 1)])
def test_prepare_step_shape_dtype_and_seed(layout, batch, dtype):
    import torch

    p = _params(layout, batch, dtype)
    step = gemm.prepare(p, "cpu", seed=7)
    c = step()
    assert tuple(c.shape) == (batch, M, N)
    assert c.dtype == {"float32": torch.float32, "bfloat16": torch.bfloat16}[dtype]
    assert torch.isfinite(c.float()).all()
    # Same seed, same inputs, same C; another seed, another C.
    assert torch.equal(gemm.prepare(p, "cpu", seed=7)(), c)
    assert not torch.equal(gemm.prepare(p, "cpu", seed=8)(), c)


def test_float32_call_disallows_tf32():
    import torch

    torch.backends.cuda.matmul.allow_tf32 = True
    gemm.prepare(_params("nn", 1, "float32"), "cpu", 0)()
    assert torch.backends.cuda.matmul.allow_tf32 is False


def test_cpu_claims_no_tf32_or_float8():
    assert "tf32" not in gemm.DTYPES["cpu"] and "float8_e4m3" not in gemm.DTYPES["cpu"]
    for dtype in ("tf32", "float8_e4m3"):
        with pytest.raises(ValueError):
            gemm.prepare(_params("nn", 1, dtype), "cpu", 0)


def test_bad_params_rejected():
    with pytest.raises(ValueError):
        gemm.prepare(_params("nx", 1, "float32"), "cpu", 0)
    with pytest.raises(ValueError):
        gemm.prepare({"m": "4", "n": "4", "k": "x", "batch": "1", "layout": "nn", "dtype": "float32"}, "cpu", 0)
    a, b = _inputs("nn", 1)
    with pytest.raises(ValueError):
        gemm.export(_params("tn", 1, "float32"), "cpu", a, b)
