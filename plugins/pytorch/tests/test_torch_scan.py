"""The pytorch scan (scan.py) on cpu: its gradients against flash-semicrf's
reference, the memory it counts, and its variants; the forward against the
spec (every semiring, dtype and variant) is in the conformance suite (plugins/_python/tests/test_conformance.py)."""

import numpy as np
import pytest
import torch

from xbench_pytorch import scan
from xbench_py import workloads as xw
from xbench_py import scan_ref as ref

SHAPES = [(9, 1, 2, 3), (12, 2, 3, 2), (17, 4, 3, 3), (20, 5, 4, 1)]  # T, K, C, batch


def _inputs(cfg, seed=1):
    x = ref.fixtures(cfg, seed)
    ft = np.float64 if cfg.dtype == "float64" else np.float32
    return {k: (v if k == "lengths" else v.astype(ft)) for k, v in x.items()}


def rel(a, b):
    return float(np.linalg.norm(np.asarray(a, np.float64) - b) / max(np.linalg.norm(b), 1e-300))


# compile: one shape (each new shape recompiles for seconds), every semiring.
CASES = [("", s) for s in SHAPES] + [("compile", SHAPES[2])]


@pytest.mark.parametrize("semiring", ["log", "max"])
@pytest.mark.parametrize("phase", ["backward", "both"])
def test_gradients_match_flash_semicrf_reference(semiring, phase):
    from flash_semicrf.streaming import semi_crf_streaming_forward

    cfg = xw.Scan(T=15, K=4, C=3, batch=3, semiring=semiring, dtype="float64", phase=phase)
    x = _inputs(cfg)
    got = scan.export(cfg, "cpu", x, scan.forward_fn(""))
    assert tuple(got) == cfg.outputs()
    if semiring == "max":
        # flash-semicrf has no max gradient: the best path's indicator is the
        # check (each segment adds +1/-1 to cum_scores, so each row sums to 0)
        assert np.allclose(got["d_cum_scores"].sum(axis=(1, 2)), 0)
        assert set(np.unique(got["d_transition"])) <= set(range(0, 20))
        assert got["d_duration_bias"].sum() == got["d_transition"].sum()  # one transition per segment
        return
    t = {k: torch.from_numpy(np.asarray(v)) for k, v in x.items()}
    wrt = [t[n].clone().requires_grad_(True) for n in ("cum_scores", "transition", "duration_bias")]
    z = semi_crf_streaming_forward(*wrt, t["lengths"], cfg.K, semiring="log", use_triton=False)
    grads = torch.autograd.grad(z.sum(), wrt)
    assert rel(got["out"], z.detach().numpy()) < 1e-12
    for name, g in zip(("d_cum_scores", "d_transition", "d_duration_bias"), grads):
        assert rel(got[name], g.numpy()) < 1e-10, name


def test_prepare_counts_memory_and_steps():
    cfg = xw.Scan(T=10, K=3, C=2, batch=2, phase="backward")
    p = scan.prepare(cfg, "cpu", 0, scan.forward_fn(""), cfg.streaming_state_rows())
    grads = p.step()
    assert len(grads) == 3 and grads[0].shape == (2, 11, 2)
    assert p.memory["inputs"] == (2 * 11 * 2 + 4 + 6) * 4 + 16
    assert p.memory["state"] == 3 * 10 * 2 * 2 * 4  # K rows a position, saved for the backward
    assert p.memory["workspace"] > 0


def test_unknown_variant():
    with pytest.raises(ValueError, match="unknown variant"):
        scan.forward_fn("nope")
