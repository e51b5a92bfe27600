"""The flash-semicrf backend on cpu: its gradients equal our pytorch scan's,
through the contract's run and export; what the package lacks is answered
unsupported. Its forward against the spec is in the conformance suite (plugins/_python/tests/test_conformance.py)."""

import numpy as np
import pytest

from xbench_flash_semicrf import backend
from xbench_pytorch import scan
from xbench_py import types as xt
from xbench_py import workloads as xw
from xbench_py import runner as xr
from xbench_py import scan_ref as ref


@pytest.fixture(scope="module")
def fw():
    b = backend.Backend()
    b.name = "flash-semicrf"
    return b


def test_log_gradients_equal_ours(fw):
    cfg = xw.Scan(T=14, K=4, C=3, batch=2, semiring="log", dtype="float64", phase="both")
    x = ref.fixtures(cfg, 3)
    theirs = fw.export_scan(cfg, "", xt.Device("cpu", ""), {}, x)
    ours = scan.export(cfg, "cpu", x, scan.forward_fn(""))
    for name in cfg.outputs():
        assert np.allclose(theirs[name], ours[name], rtol=1e-10, atol=1e-12), name


def test_refusals_are_unsupported(fw):
    res = xr.run(fw, xw.Scan(T=8, K=3, C=2, batch=1, semiring="max", phase="backward").config())
    assert res["status"] == "unsupported" and "max" in res["message"]
    res = xr.run(fw, xw.Scan(T=8, K=3, C=2, batch=1, semiring="entropy").config())
    assert res["status"] == "unsupported" and "entropy" in res["message"]
    res = xr.run(fw, xw.Scan(T=8, K=3, C=2, batch=1).config(), variant="triton", device="cpu")
    assert res["status"] == "unsupported"


def test_run_records_memory_and_versions(fw):
    res = xr.run(fw, xw.Scan(T=8, K=3, C=2, batch=2, warmup=0, repeats=2).config(), device="cpu")
    assert res["status"] == "ok", res.get("message")
    assert res["memory_bytes"]["inputs"] > 0 and "state" not in res["memory_bytes"]
    assert res["env"]["versions"]["flash_semicrf"] == "0.2.0"
