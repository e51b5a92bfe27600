"""The Triton GEMM kernel (xbench_triton/gemm.py) in Triton's interpreter (conftest
sets TRITON_INTERPRET=1): every layout, batch 1 and 3, small odd shapes
(ragged in M, N and K for the interpreter's 32x32x32 tile), beyond
the conformance suite (plugins/_python/tests/test_conformance.py), which checks every layout and dtype through the
contract: the even-tile path, the prepared step, the autotune configs and
the TMA kernel."""

import numpy as np
import pytest

from xbench_py.workloads import gemm_stored_shapes
from xbench_triton import gemm as g

M, N, K = 17, 33, 40
TOL = {"float32": 1e-5, "bfloat16": 2e-2, "float16": 2e-3}


def _inputs(layout, batch, m=M, n=N, k=K, seed=0):
    rng = np.random.default_rng(seed)
    sa, sb = gemm_stored_shapes(m, n, k, batch, layout)
    return rng.standard_normal(sa).astype(np.float32), rng.standard_normal(sb).astype(np.float32)


def _reference(layout, a, b):
    opa = a if layout[0] == "n" else np.swapaxes(a, 1, 2)
    opb = b if layout[1] == "n" else np.swapaxes(b, 1, 2)
    return np.matmul(opa.astype(np.float64), opb.astype(np.float64))


def _rel(x, ref):
    return float(np.linalg.norm(x.astype(np.float64) - ref) / np.linalg.norm(ref))


def _params(layout, batch, dtype, m=M, n=N, k=K):
    return {"m": str(m), "n": str(n), "k": str(k), "batch": str(batch), "layout": layout, "dtype": dtype}


@pytest.mark.parametrize("layout", ["nn", "tt"])
def test_even_tiles_unmasked_path(layout):
    # Sizes the 32x32x32 tile divides take the unmasked (EVEN) loads, with
    # several tiles in M and N and several K steps.
    a, b = _inputs(layout, 2, m=64, n=32, k=64)
    c = g.export(_params(layout, 2, "float32", m=64, n=32, k=64), "cpu", a, b)
    assert _rel(c, _reference(layout, a, b)) < 1e-5


def test_cpu_dtypes():
    assert set(g.DTYPES["cpu"]) == {"float32", "bfloat16", "float16"}
    assert "tf32" not in g.DTYPES["cpu"] and "float8_e4m3" not in g.DTYPES["cpu"]
    for dtype in ("tf32", "float8_e4m3"):
        with pytest.raises(ValueError):
            g.prepare(_params("nn", 1, dtype), "cpu", 0)


@pytest.mark.parametrize("layout,batch,dtype", [("nn", 1, "float32"), ("tt", 3, "bfloat16")])
def test_prepare_step_shape_and_seed(layout, batch, dtype):
    import torch

    p = _params(layout, batch, dtype)
    step = g.prepare(p, "cpu", seed=7)
    c = step().clone()
    assert tuple(c.shape) == (batch, M, N)
    assert c.dtype == {"float32": torch.float32, "bfloat16": torch.bfloat16}[dtype]
    assert torch.isfinite(c.float()).all()
    assert torch.equal(g.prepare(p, "cpu", seed=7)(), c)


def test_autotune_configs():
    cfgs = g.autotune_configs()
    assert 6 <= len(cfgs) <= 16
    shapes = {(c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.kwargs["BLOCK_K"]) for c in cfgs}
    # The Hopper large tiles are among them.
    assert (128, 256, 64) in shapes and (256, 128, 64) in shapes
    for c in cfgs:
        assert c.kwargs["BLOCK_M"] in (64, 128, 256) and c.kwargs["BLOCK_N"] in (64, 128, 256)
        assert c.kwargs["BLOCK_K"] in (32, 64)
        assert c.num_warps in (4, 8) and c.num_stages in (3, 4, 5)
    assert len(set((c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.kwargs["BLOCK_K"], c.num_warps, c.num_stages)
                   for c in cfgs)) == len(cfgs)


def test_ieee_float32_tunes_over_small_tiles_only():
    """IEEE float32 (PREC 0) drops the 8-warp and larger-than-128x128 tiles
    (they spill and never won on the H100); every other precision keeps all."""
    cfgs = g.autotune_configs()
    kept = g._prune(cfgs, {}, PREC=0)
    tiles = {(c.kwargs["BLOCK_M"], c.kwargs["BLOCK_N"], c.kwargs["BLOCK_K"]) for c in kept}
    assert (64, 64, 32) in tiles and (64, 128, 64) in tiles  # the H100's winners
    assert all(c.num_warps == 4 and c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"] <= 128 * 128 for c in kept)
    assert 0 < len(kept) < len(cfgs)
    for prec in (1, 2):
        assert g._prune(cfgs, {}, PREC=prec) == cfgs


def test_cuda_refused_in_interpreter():
    with pytest.raises(ValueError):
        g.prepare(_params("nn", 1, "float32"), "cuda", 0)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("layout", ["nn", "nt", "tn", "tt"])
def test_tma_kernel_matches_float64(layout, dtype):
    # The GPU's persistent TMA kernel (xbench_triton.gemm_tma), run by the
    # interpreter: sizes TMA accepts (rows of 16 bytes) but ragged for its
    # 32x32x32 tile, so the descriptors' zero padding and clipped stores are
    # what keep the edges right; 4 programs walk the 6 tiles persistently.
    import torch
    from xbench_triton import gemm_tma as tma

    m, n, k = 40, 72, 56
    a, b = _inputs(layout, 1, m=m, n=n, k=k)
    ta = torch.as_tensor(a).to(getattr(torch, dtype))
    tb = torch.as_tensor(b).to(getattr(torch, dtype))
    c = torch.full((1, m, n), float("nan"), dtype=ta.dtype)
    assert tma.eligible(ta, tb, c)
    tma.launcher(ta, tb, c, m, n, k, layout, True)()
    ref = _reference(layout, ta.float().numpy(), tb.float().numpy())
    assert _rel(c.float().numpy(), ref) < TOL[dtype]


def test_tma_eligibility():
    import torch
    from xbench_triton import gemm_tma as tma

    bf = torch.bfloat16
    ok = (torch.empty(1, 16, 24, dtype=bf), torch.empty(1, 24, 8, dtype=bf), torch.empty(1, 16, 8, dtype=bf))
    assert tma.eligible(*ok)
    assert not tma.eligible(torch.empty(2, 16, 24, dtype=bf), *ok[1:])  # batch
    assert not tma.eligible(torch.empty(1, 16, 20, dtype=bf), *ok[1:])  # a row of 40 bytes
    assert not tma.eligible(*(t.float() for t in ok))  # float32 keeps the pointer kernel
    assert not tma.eligible(torch.empty(1, 385, dtype=bf)[:, 1:].view(1, 16, 24), *ok[1:])  # 2-byte aligned


def test_tma_kernel_compiles_for_sm90():
    # The interpreter above compiles nothing; compile every TMA config for
    # real, in a process without TRITON_INTERPRET, and require wgmma + TMA in
    # the PTX and every config within the H100's shared memory.
    from conftest import run_compile_check

    r = run_compile_check("gemm_compile_check.py", timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count(": ok") == 2 * (len(g._tma.CONFIGS) + len(g._tma.WS_CONFIGS)) == 16, r.stdout
    assert "pruned" not in r.stdout, r.stdout


def test_bucket_of():
    assert g.bucket_of(1, 768, 1000) == (16, 1024, 1024)
    assert g.bucket_of(1024, 1025, 4096) == (1024, 2048, 4096)


class _FakeTuner:
    best_config = "BLOCK_M: 64"
    configs = ["BLOCK_M: 32", "BLOCK_M: 64"]


def _fake_step(calls):
    def step():
        calls.append("tuned")

    def with_config(cfg):
        def fixed():
            calls.append(("fixed", cfg))
        return fixed
    step.tuner, step.with_config, step.kernel_name = _FakeTuner(), with_config, "gemm"
    return step


def test_bucket_tuned_tunes_once_per_bucket_and_says_so():
    """The variant triton/bucket-tuned: the bucket's first shape is autotuned,
    later shapes of the bucket launch that config untuned, and each result's
    choice names the bucket and the shape it was tuned at."""
    g._BUCKETS.clear()
    calls = []
    first = g.bucket_tuned(_fake_step(calls), 1000, 1000, 1000, "nt", "bfloat16")
    assert calls == ["tuned"]
    assert "tuned at this shape, 1000x1000x1000" in first.choice and "m<=1024,n<=1024,k<=1024" in first.choice
    second = g.bucket_tuned(_fake_step(calls), 900, 1024, 600, "nt", "bfloat16")
    assert calls == ["tuned"]  # not tuned again
    second()
    assert calls[-1] == ("fixed", "BLOCK_M: 64")
    assert "reused from 1000x1000x1000" in second.choice and "not tuned for this shape" in second.choice
    other = g.bucket_tuned(_fake_step(calls), 900, 1024, 600, "nn", "bfloat16")  # another layout: its own bucket
    assert calls.count("tuned") == 2 and "tuned at this shape" in other.choice
    g._BUCKETS.clear()


def test_bucket_choice_is_shared_through_the_compile_cache(tmp_path, monkeypatch):
    """With a compile cache, the first process to tune a bucket writes its
    choice there and every other process (sweep --compile-ahead's helpers,
    the timing process) launches that config without tuning, and says where
    it was tuned; a process that tuned while another shared first launches
    the shared config."""
    monkeypatch.setenv("XBENCH_COMPILE_CACHE", str(tmp_path))
    g._BUCKETS.clear()
    calls = []
    g.bucket_tuned(_fake_step(calls), 1000, 1000, 1000, "nt", "float32")  # helper process A tunes
    assert calls == ["tuned"]
    assert len(list((tmp_path / "triton-buckets").glob("*.json"))) == 1
    g._BUCKETS.clear()  # the timing process: nothing tuned in it yet
    reused = g.bucket_tuned(_fake_step(calls), 900, 1024, 600, "nt", "float32")
    assert calls == ["tuned"], "the shared choice must be launched without tuning"
    assert "reused from 1000x1000x1000; not tuned for this shape" in reused.choice
    g._BUCKETS.clear()
    own = g.bucket_tuned(_fake_step(calls), 1000, 1000, 1000, "nt", "float32")
    assert calls == ["tuned"] and "tuned at this shape, 1000x1000x1000" in own.choice

    g._BUCKETS.clear()  # a race: process B tunes, but A's choice lands while B tunes
    other = _fake_step(calls)
    other.tuner = type("T", (), {"best_config": "BLOCK_M: 32", "configs": _FakeTuner.configs})()
    tuned_b = other

    def tune_while_a_shares():
        (tmp_path / "triton-buckets" / "gemm_nn_float32_1024x1024x1024.json").write_text(
            '{"config": "BLOCK_M: 64", "at": [1000, 1000, 1000], "label": "BLOCK_M: 64"}')
        calls.append("tuned")
    tune_while_a_shares.tuner, tune_while_a_shares.with_config = tuned_b.tuner, tuned_b.with_config
    tune_while_a_shares.kernel_name = "gemm"
    other = tune_while_a_shares
    raced = g.bucket_tuned(other, 900, 900, 900, "nn", "float32")
    raced()
    assert calls.count("tuned") == 2  # B did tune
    assert calls[-1] == ("fixed", "BLOCK_M: 64") and "reused from 1000x1000x1000" in raced.choice
    g._BUCKETS.clear()
