"""The iree backend on the CPU (llvm-cpu, local-task) through the contract:
gemm in every layout and attention (GQA, causal) against float64 numpy,
the compile cache (compiled once, then read back, and the result says
which), a module that can be neither read nor compiled, and the refusals.
Small shapes: each configuration is one iree-compile of a second or two."""

import numpy as np
import pytest

import iree_backend
import iree_cache
import iree_mlir
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


@pytest.mark.parametrize("layout", ["nn", "nt", "tn", "tt"])
def test_gemm_export_every_layout(fw, layout):
    m, n, k, batch = 17, 33, 40, 2
    cfg = xw.Gemm(m=m, n=n, k=k, batch=batch, layout=layout, dtype="float32")
    sa, sb, _ = iree_mlir.gemm_shapes(m, n, k, batch, layout)
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(sa).astype(np.float32), rng.standard_normal(sb).astype(np.float32)
    dev = fw.resolve_device("cpu")
    c = fw.export_gemm(cfg, "", dev, {}, {"a": a, "b": b})["c"]
    opa = a if layout[0] == "n" else a.transpose(0, 2, 1)
    opb = b if layout[1] == "n" else b.transpose(0, 2, 1)
    assert c.shape == (batch, m, n) and c.dtype == np.float32
    assert _rel(c, opa.astype(np.float64) @ opb) < 1e-6


def test_attention_export_gqa_causal(fw):
    cfg = xw.Attention(batch=2, heads=4, kv_heads=2, seq_len=19, kv_len=0, head_dim=8, causal=True, dtype="float32")
    rng = np.random.default_rng(2)
    q = rng.uniform(-2, 2, (2, 4, 19, 8)).astype(np.float32)
    k = rng.uniform(-2, 2, (2, 2, 19, 8)).astype(np.float32)
    v = rng.uniform(-1, 1, (2, 2, 19, 8)).astype(np.float32)
    out = fw.export_attention(cfg, "", fw.resolve_device("cpu"), {}, {"q": q, "k": k, "v": v})["out"]
    kk, vv = (np.repeat(x.astype(np.float64), 2, axis=1) for x in (k, v))
    s = q @ kk.transpose(0, 1, 3, 2) / np.sqrt(8)
    s = np.where(np.tril(np.ones((19, 19), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    assert _rel(out, (p / p.sum(-1, keepdims=True)) @ vv) < 1e-6


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
