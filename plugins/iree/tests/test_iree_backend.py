"""The iree backend on the CPU (llvm-cpu, local-task) through the contract,
beyond the conformance suite (plugins/_python/tests/test_conformance.py) (gemm in every layout and dtype,
attention against float64 numpy): the compile cache (compiled once, then read back, and the result says
which), a module that can be neither read nor compiled, and the refusals.
Small shapes: each configuration is one iree-compile of a second or two."""

import numpy as np
import pytest

from xbench_iree import backend as iree_backend
from xbench_iree import cache as iree_cache
from xbench_py import types as xt
from xbench_py import workloads as xw
from xbench_py import runner as xr


@pytest.fixture(scope="module")
def fw():
    return iree_backend.Backend()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XBENCH_COMPILE_CACHE", str(tmp_path))
    return tmp_path


def _rel(x, ref):
    return float(np.linalg.norm(x.astype(np.float64) - ref) / np.linalg.norm(ref))


def test_compiled_once_then_read_from_the_cache(fw, cache):
    cfg = xw.Gemm(m=24, n=16, k=8, batch=1, layout="nt", dtype="bfloat16").config()
    cfg.warmup, cfg.repeats = 1, 2
    first = xr.run(fw, cfg, device="cpu")
    assert first["status"] == "ok", first
    assert "compiled here by iree-compile" in first["warnings"][0]
    assert len(list(cache.glob("iree/*.vmfb.xz"))) == 1
    again = xr.run(iree_backend.Backend(), cfg, device="cpu")
    assert again["status"] == "ok" and "NOT compiled here: read from the compile cache" in again["warnings"][0]
    assert "host clock" in again["env"]["timing"]


def test_no_compiler_and_not_cached_is_unsupported_naming_the_module(fw, cache, monkeypatch):
    monkeypatch.setattr(iree_cache, "have_compiler", lambda: False)
    cfg = xw.Gemm(m=24, n=16, k=8, batch=1, layout="tn", dtype="float16").config()
    r = xr.run(fw, cfg, device="cpu")
    assert r["status"] == "unsupported"
    assert "gemm 24x16x8 b1 tn float16" in r["message"] and "iree.compiler" in r["message"]
    assert str(cache) in r["message"]


def test_refusals(fw):
    back = xw.Attention(batch=1, heads=2, seq_len=8, head_dim=8, dtype="float32", phase="backward")
    r = xr.run(fw, back.config(), device="cpu")
    assert r["status"] == "unsupported" and "(supported: forward)" in r["message"]
    with pytest.raises(xt.Unsupported, match="no autodiff"):
        fw.prepare_attention(back, "", fw.resolve_device("cpu"), 0)
    tf32 = xw.Gemm(m=8, n=8, k=8, dtype="tf32").config()
    assert xr.run(fw, tf32, device="cpu")["status"] == "unsupported"


def test_device_flush_writes_a_new_value_each_time(monkeypatch):
    """--cold-cache's device write (DeviceFlush), on the local-task driver:
    each flush fills the whole buffer with the next value and waits for it."""
    import iree.runtime as rt
    import numpy as np

    from xbench_py import modes

    monkeypatch.setattr(modes, "GPU_FLUSH_BYTES", 1 << 16)
    flush = iree_backend.DeviceFlush(rt.Config("local-task").device)
    for want in (1, 2, 3):
        flush()
        words = flush.buffer.map().asarray((1 << 14,), np.dtype(np.uint32))
        assert flush.buffer.byte_length() == 1 << 16
        assert (words == want).all(), (want, words[:4])
        del words


def test_gpu_timer_has_a_device_flush():
    import iree.runtime as rt

    assert xt.has_device_flush(iree_backend.GPUTimer(rt.Config("local-task").device))
    assert not xt.has_device_flush(iree_backend.HostTimer())
