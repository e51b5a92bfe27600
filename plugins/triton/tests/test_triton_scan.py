"""Our Triton scan (scan.py) in Triton's interpreter against the
pytorch scan's autograd (log and max gradients): odd C, K from 1 to 5,
variable lengths; the forward against the spec is in
the conformance suite (plugins/_python/tests/test_conformance.py)."""

import numpy as np
import pytest

from xbench_pytorch import scan as torch_scan
from xbench_triton import scan
from xbench_py import workloads as xw
from xbench_py import scan_ref as ref

SHAPES = [(9, 1, 2, 3), (12, 2, 3, 2), (17, 4, 3, 3), (20, 5, 5, 2)]  # T, K, C, batch


def _inputs(cfg):
    x = ref.fixtures(cfg, 1)
    ft = np.float64 if cfg.dtype == "float64" else np.float32
    return {k: (v if k == "lengths" else v.astype(ft)) for k, v in x.items()}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("semiring", ["log", "max"])
def test_gradients_match_autograd(shape, semiring):
    T, K, C, B = shape
    cfg = xw.Scan(T=T, K=K, C=C, batch=B, semiring=semiring, dtype="float64", phase="both")
    x = _inputs(cfg)
    got = torch_scan.export(cfg, "cpu", x, scan.scan)
    want = torch_scan.export(cfg, "cpu", x, torch_scan.forward_fn(""))
    for name in cfg.outputs():
        assert got[name].shape == want[name].shape
        assert np.allclose(got[name], want[name], rtol=1e-11, atol=1e-12), name


def test_kernels_compile_for_sm90():
    # The interpreter above runs code the compiler refuses; compile for real,
    # in a process without TRITON_INTERPRET.
    from conftest import run_compile_check

    r = run_compile_check("scan_compile_check.py", timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count(": ok") == 6, r.stdout
